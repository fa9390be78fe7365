"""The experiments' tables (schema version 6): experiments, their runs, and each item's outcome.

An experiment is its owner's (version 22): private until they share it with the team to read
(`sharing` "read") or to edit ("edit"); a run is its runner's.

An item's transcript is a hidden conversation (conversations.hidden) and its replies' usage rows
carry the experiment and run ids; yiem.experiments reads and writes these tables.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    ColumnElement,
    Float,
    ForeignKey,
    Index,
    Integer,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
)

from yiem.store._schema import metadata, owner_column

PRIVATE = "private"
"""The sharing of an experiment nobody else may see (every new one, and those stored before owners)."""

# The experiment as last edited in the page: dataset, variants, scorers, settings (JSON).
experiments = Table(
    "experiments",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("name", Text, nullable=False, default=""),
    Column("data", Text, nullable=False, default="{}"),
    Column("created_ms", BigInteger, nullable=False),
    Column("updated_ms", BigInteger, nullable=False),
    owner_column(),
    Column("sharing", Text, nullable=False, default=PRIVATE, server_default=PRIVATE),
    Index("ix_experiments_updated", "updated_ms"),
    Index("ix_experiments_owner", "owner", "updated_ms"),
)


def visible_experiments(owner: str) -> ColumnElement[bool]:
    """The experiments `owner` may see: their own and those shared with the team (the one rule of it)."""
    return (experiments.c.owner == owner) | (experiments.c.sharing != PRIVATE)


# One run: the spec it ran (the dataset frozen in it, so later edits never change a past run).
experiment_runs = Table(
    "experiment_runs",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("experiment_id", String(36), ForeignKey("experiments.id", ondelete="CASCADE"), nullable=False),
    Column("status", Text, nullable=False, default="running"),
    Column("stop_reason", Text, nullable=True),
    Column("spec", Text, nullable=False),
    Column("dataset_version", Text, nullable=False, default=""),
    Column("total", Integer, nullable=False, default=0),
    Column("created_ms", BigInteger, nullable=False),
    Column("updated_ms", BigInteger, nullable=False),
    owner_column(),
    Index("ix_experiment_runs_experiment", "experiment_id", "created_ms"),
)

# One finished (item, variant, repeat): its scores and figures as JSON, its transcript by id.
experiment_outcomes = Table(
    "experiment_outcomes",
    metadata,
    Column("run_id", String(36), ForeignKey("experiment_runs.id", ondelete="CASCADE"), nullable=False),
    Column("item_id", Text, nullable=False),
    Column("variant", Text, nullable=False),
    Column("repeat", Integer, nullable=False),
    Column("conversation_id", String(36), nullable=True),
    Column("passed", Boolean, nullable=False),
    Column("cost", Float, nullable=True),
    Column("latency_ms", Float, nullable=False),
    Column("data", Text, nullable=False),
    Column("created_ms", BigInteger, nullable=False),
    PrimaryKeyConstraint("run_id", "item_id", "variant", "repeat"),
)
