"""The Compare page's tables: blind votes (schema version 9) and saved comparisons (version 12)."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Index, String, Table, Text

from yiem.store._schema import metadata, owner_column

COMPARE_SOURCE = "compare"
"""`usage.source` of the Compare page's replies (schema 15): the Costs page's Compare filter."""

# Who voted, when, on which prompt, the two models as shown (left, right) and the verdict:
# left, right, tie or both_bad. `tag` lets the leaderboard be filtered (e.g. a project or task).
compare_votes = Table(
    "compare_votes",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("voter", Text, nullable=False, default=""),
    Column("created_ms", BigInteger, nullable=False),
    Column("prompt", Text, nullable=False, default=""),
    Column("left_model", Text, nullable=False),
    Column("right_model", Text, nullable=False),
    Column("verdict", String(16), nullable=False),
    Column("tag", Text, nullable=False, default=""),
    owner_column(),  # who may see the vote (schema version 11); `voter` is only the name shown
    Index("ix_compare_votes_created", "created_ms"),
    Index("ix_compare_votes_owner_created", "owner", "created_ms"),
)

# One saved comparison (schema version 15): its columns' settings (never a key), each column's
# transcript as a hidden conversation, and the prompts sent, as JSON; reopened by `?cmp=ID`.
compare_runs = Table(
    "compare_runs",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("title", Text, nullable=False, default=""),
    Column("data", Text, nullable=False, default="{}"),
    Column("created_ms", BigInteger, nullable=False),
    Column("updated_ms", BigInteger, nullable=False),
    owner_column(),
    Index("ix_compare_runs_owner_updated", "owner", "updated_ms"),
)
