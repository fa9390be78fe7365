"""Human review of experiment results (schema version 20): each person's review of a cell, and who is asked;
and each person's reviews of Chat and Compare replies (version 23).

A cell is one (run, item, variant, repeat) outcome; `reviewer` is the person's owner id, so a review
is per person and a second review by the same person replaces the first.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    ForeignKey,
    Index,
    Integer,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
)

from yiem.store._schema import metadata, owner_column

# One person's judgment of one cell: thumbs up or down, an optional 1-5 score, a comment, and what it
# should have said (kept as the item's corrected expectation when `use_expected` is set).
experiment_reviews = Table(
    "experiment_reviews",
    metadata,
    Column("run_id", String(36), ForeignKey("experiment_runs.id", ondelete="CASCADE"), nullable=False),
    Column("item_id", Text, nullable=False),
    Column("variant", Text, nullable=False),
    Column("repeat", Integer, nullable=False),
    Column("reviewer", Text, nullable=False),
    Column("reviewer_name", Text, nullable=False, default=""),
    Column("passed", Boolean, nullable=False),
    Column("rating", Integer, nullable=True),
    Column("comment", Text, nullable=False, default=""),
    Column("expected", Text, nullable=False, default=""),
    Column("use_expected", Boolean, nullable=False, default=False),
    Column("created_ms", BigInteger, nullable=False),
    Column("updated_ms", BigInteger, nullable=False),
    PrimaryKeyConstraint("run_id", "item_id", "variant", "repeat", "reviewer"),
    Index("ix_experiment_reviews_reviewer", "reviewer", "run_id"),
)

# The people the experiment's owner asked to review a run; `revealed` opens everyone's comments early.
review_assignments = Table(
    "review_assignments",
    metadata,
    Column("run_id", String(36), ForeignKey("experiment_runs.id", ondelete="CASCADE"), nullable=False),
    Column("reviewer", Text, nullable=False),
    Column("reviewer_name", Text, nullable=False, default=""),
    Column("assigned_by", Text, nullable=False),
    Column("created_ms", BigInteger, nullable=False),
    PrimaryKeyConstraint("run_id", "reviewer"),
)

# A run whose owner opened every reviewer's comments before all were done.
review_reveals = Table(
    "review_reveals",
    metadata,
    Column("run_id", String(36), ForeignKey("experiment_runs.id", ondelete="CASCADE"), primary_key=True),
    Column("revealed_by", Text, nullable=False),
    Column("created_ms", BigInteger, nullable=False),
)

# One person's review of one reply in a Chat conversation or a Compare column (schema version 23): the
# same judgment as a cell's, kept per owner and read only by them. `kind` is "chat" or "compare";
# `reply` names the reply in its conversation (Chat: its last message's id; Compare: the turn's number).
reply_reviews = Table(
    "reply_reviews",
    metadata,
    owner_column(),
    Column("kind", String(16), nullable=False),
    Column("conversation_id", String(36), ForeignKey("conversations.id", ondelete="CASCADE"), nullable=False),
    Column("reply", Text, nullable=False),
    Column("passed", Boolean, nullable=False),
    Column("rating", Integer, nullable=True),
    Column("comment", Text, nullable=False, default=""),
    Column("expected", Text, nullable=False, default=""),
    Column("created_ms", BigInteger, nullable=False),
    Column("updated_ms", BigInteger, nullable=False),
    PrimaryKeyConstraint("owner", "kind", "conversation_id", "reply"),
)
