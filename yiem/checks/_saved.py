"""Collections in the store, each person's own unless its owner shares it with the team, and their runs."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from pydantic import BaseModel
from sqlalchemy import insert, or_, select, update
from sqlalchemy.engine import Engine

from yiem.checks._assertions import Assertion, AssertionKind, snapshot_of
from yiem.checks._collection import CheckFileError, Collection, SavedCall, parse_collection
from yiem.checks._runner import CheckRun
from yiem.identity import LOCAL_OWNER_ID
from yiem.redaction import redact_data
from yiem.store import StoreError, check_collections, check_runs

MAX_NAME = 80


class CollectionNotFoundError(StoreError):
    """No collection of that name that this person may see."""


class StoredCollection(BaseModel):
    """A collection as the store keeps it: whose, shared or not."""

    id: str
    owner: str
    shared: bool
    collection: Collection

    @property
    def name(self) -> str:
        return self.collection.name


class RunSummary(BaseModel):
    """One kept run, for the pass-rate chart."""

    id: str
    started_ms: int
    pass_rate: float


def _now() -> int:
    return int(time.time() * 1000)


def _name(name: str) -> str:
    cleaned = " ".join(name.split())
    if not cleaned:
        raise CheckFileError("Give the collection a name.")
    if len(cleaned) > MAX_NAME:
        raise CheckFileError(
            f"A collection's name has at most {MAX_NAME} characters; this one has {len(cleaned)}."
        )
    return cleaned


class SavedChecks:
    """One person's collections (and the team's shared ones) on the store's engine."""

    def __init__(self, engine: Engine, owner: str = LOCAL_OWNER_ID) -> None:
        self.engine = engine
        self.owner = owner

    def collections(self) -> list[StoredCollection]:
        """Own collections and those shared by others, by name; one that no longer parses is left out."""
        table = check_collections
        query = select(table).where(or_(table.c.owner == self.owner, table.c.shared.is_(True)))
        with self.engine.connect() as conn:
            rows = conn.execute(query.order_by(table.c.name, table.c.owner)).all()
        found = []
        for row in rows:
            try:
                collection = parse_collection(json.loads(row.data))
            except (CheckFileError, ValueError):
                continue
            found.append(
                StoredCollection(id=row.id, owner=row.owner, shared=row.shared, collection=collection)
            )
        return found

    def get(self, name: str) -> StoredCollection:
        """The collection of this name: one's own first, else a shared one."""
        matches = [c for c in self.collections() if c.name == name]
        matches.sort(key=lambda c: c.owner != self.owner)
        if not matches:
            raise CollectionNotFoundError(f"There is no collection named “{name}”.")
        return matches[0]

    def save(self, collection: Collection, shared: bool | None = None) -> StoredCollection:
        """Save (or replace) one's own collection of this name; a secret in its text is masked."""
        cleaned = collection.model_copy(update={"name": _name(collection.name)})
        data = json.dumps(redact_data(cleaned.model_dump(mode="json")), ensure_ascii=False)
        table = check_collections
        mine = (table.c.owner == self.owner) & (table.c.name == cleaned.name)
        values: dict[str, Any] = {"data": data, "updated_ms": _now()}
        if shared is not None:
            values["shared"] = shared
        with self.engine.begin() as conn:
            if not conn.execute(update(table).where(mine).values(**values)).rowcount:
                row = {
                    "id": str(uuid.uuid4()),
                    "name": cleaned.name,
                    "owner": self.owner,
                    "created_ms": _now(),
                }
                values.setdefault("shared", False)
                conn.execute(insert(table).values(**row, **values))
        return self.get(cleaned.name)

    def _owns(self, name: str) -> bool:
        table = check_collections
        query = select(table.c.id).where((table.c.owner == self.owner) & (table.c.name == name))
        with self.engine.connect() as conn:
            return conn.execute(query).first() is not None

    def add_call(self, name: str, call: SavedCall) -> StoredCollection:
        """Add a call to one's own collection `name`, making the collection when it is new."""
        existing = self.get(name).collection if self._owns(name) else Collection(name=name)
        return self.save(existing.model_copy(update={"calls": [*existing.calls, call]}))

    def accept_snapshot(self, name: str, call_id: str, result: dict[str, Any]) -> StoredCollection:
        """Make `result` the accepted snapshot of a call (adding a snapshot assertion when it has none)."""
        if not self._owns(name):
            raise CollectionNotFoundError(f"Only the owner of “{name}” can accept a new result.")
        collection = self.get(name).collection
        calls = []
        for call in collection.calls:
            if call.id == call_id:
                kept = [a for a in call.assertions if a.kind is not AssertionKind.SNAPSHOT]
                snapshot = Assertion(kind=AssertionKind.SNAPSHOT, snapshot=snapshot_of(result))
                call = call.model_copy(update={"assertions": [*kept, snapshot]})
            calls.append(call)
        return self.save(collection.model_copy(update={"calls": calls}))

    def keep_run(self, stored: StoredCollection, run: CheckRun) -> None:
        """Keep a run with its time so runs can be compared."""
        data = json.dumps(redact_data(run.model_dump(mode="json")), ensure_ascii=False)
        row = {
            "id": run.id,
            "collection_id": stored.id,
            "started_ms": int(run.started_at.timestamp() * 1000),
            "pass_rate": run.pass_rate,
            "data": data,
            "owner": self.owner,
        }
        with self.engine.begin() as conn:
            conn.execute(insert(check_runs).values(**row))

    def runs(self, stored: StoredCollection) -> list[RunSummary]:
        """The kept runs of a collection (this person's), oldest first."""
        query = (
            select(check_runs.c.id, check_runs.c.started_ms, check_runs.c.pass_rate)
            .where((check_runs.c.collection_id == stored.id) & (check_runs.c.owner == self.owner))
            .order_by(check_runs.c.started_ms)
        )
        with self.engine.connect() as conn:
            return [
                RunSummary(id=r.id, started_ms=r.started_ms, pass_rate=r.pass_rate)
                for r in conn.execute(query)
            ]
