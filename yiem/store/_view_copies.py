"""Copies of MCP Apps views each person has seen (schema version 19), so a reopened chat can still
show a tool's view when its server is no longer connected."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from sqlalchemy import BigInteger, Column, PrimaryKeyConstraint, Table, Text, select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from yiem.mcp.apps import AppView, ViewCsp, ViewPermissions
from yiem.store._errors import StoreError
from yiem.store._schema import metadata, owner_column

view_copies = Table(
    "view_copies",
    metadata,
    Column("server", Text, nullable=False),
    Column("uri", Text, nullable=False),
    Column("html", Text, nullable=False),
    Column("declared", Text, nullable=False),  # the resource's csp, permissions and border, as JSON
    Column("fetched_ms", BigInteger, nullable=False),
    owner_column(),
    PrimaryKeyConstraint("owner", "server", "uri"),
)


class ViewCopies:
    """One person's last copy of each view, by server and URI."""

    def __init__(self, engine: Engine, owner: str) -> None:
        self.engine = engine
        self.owner = owner

    def keep(self, server: str, view: AppView) -> None:
        """Keep `view` as the copy of `server`'s view at its URI (replacing an older one)."""
        declared = json.dumps(
            {
                "csp": view.csp.to_wire(),
                "permissions": view.permissions.to_wire(),
                "prefersBorder": view.prefers_border,
            }
        )
        row = {
            "owner": self.owner,
            "server": server,
            "uri": view.uri,
            "html": view.html,
            "declared": declared,
            "fetched_ms": int(view.fetched_at.timestamp() * 1000),
        }
        key = (
            (view_copies.c.owner == self.owner)
            & (view_copies.c.server == server)
            & (view_copies.c.uri == view.uri)
        )
        try:
            with self.engine.begin() as conn:
                conn.execute(view_copies.delete().where(key))
                conn.execute(view_copies.insert().values(**row))
        except SQLAlchemyError as error:
            raise StoreError(
                f"The copy of {server}'s view could not be saved: {error.__class__.__name__}."
            ) from error

    def find(self, server: str, uri: str) -> AppView | None:
        """The kept copy of `server`'s view at `uri`, or None."""
        query = select(view_copies).where(
            (view_copies.c.owner == self.owner)
            & (view_copies.c.server == server)
            & (view_copies.c.uri == uri)
        )
        try:
            with self.engine.connect() as conn:
                row = conn.execute(query).mappings().first()
        except SQLAlchemyError as error:
            raise StoreError(
                f"The copy of {server}'s view could not be read: {error.__class__.__name__}."
            ) from error
        if row is None:
            return None
        declared = json.loads(row["declared"])
        return AppView(
            uri=row["uri"],
            html=row["html"],
            csp=ViewCsp.model_validate(declared.get("csp") or {}),
            permissions=ViewPermissions.model_validate(declared.get("permissions") or {}),
            prefers_border=declared.get("prefersBorder"),
            fetched_at=datetime.fromtimestamp(row["fetched_ms"] / 1000, UTC),
        )
