"""Saved checks (schema version 21): collections of tool calls with assertions, and their runs."""

from __future__ import annotations

from sqlalchemy import BigInteger, Boolean, Column, Float, Index, String, Table, Text

from yiem.store._schema import metadata, owner_column

# A collection (yiem.checks.Collection as JSON), its owner's; `shared` lets the whole team see and run it.
check_collections = Table(
    "check_collections",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("name", Text, nullable=False),
    Column("data", Text, nullable=False),
    Column("shared", Boolean, nullable=False, default=False, server_default="0"),
    Column("created_ms", BigInteger, nullable=False),
    Column("updated_ms", BigInteger, nullable=False),
    owner_column(),
    Index("ix_check_collections_owner_name", "owner", "name", unique=True),
)

# One run of a collection (yiem.checks.CheckRun as JSON) kept with its time, for the pass-rate chart.
check_runs = Table(
    "check_runs",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("collection_id", String(36), nullable=False),
    Column("started_ms", BigInteger, nullable=False),
    Column("pass_rate", Float, nullable=False),
    Column("data", Text, nullable=False),
    owner_column(),
    Index("ix_check_runs_collection", "collection_id", "started_ms"),
)
