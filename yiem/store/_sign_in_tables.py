"""The Tools page's sign-ins to MCP servers (schema version 13): one sealed grant per person and server."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, PrimaryKeyConstraint, Table, Text

from yiem.store._schema import metadata, owner_column

# `sealed` is the grant (tokens and how to refresh them) encrypted by yiem.explorer with a key from
# the server's secrets: the database never holds a token in the clear.
mcp_sign_ins = Table(
    "mcp_sign_ins",
    metadata,
    owner_column(),
    Column("server_url", Text, nullable=False),
    Column("sealed", Text, nullable=False),
    Column("updated_ms", BigInteger, nullable=False),
    PrimaryKeyConstraint("owner", "server_url", name="pk_mcp_sign_ins"),
)
