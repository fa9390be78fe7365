"""The Compare page's table (schema version 9): one row per blind vote between two models."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Index, String, Table, Text

from yiem.store._schema import metadata, owner_column

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
