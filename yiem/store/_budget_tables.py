"""The budgets' tables (schema version 12): spending limits, and the cost each request in flight reserved."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Float, Index, String, Table, Text

from yiem.store._schema import metadata

# One spending limit: whose spend (`scope` "team" for everyone's together, "person" for one person's,
# `owner` naming them or '' for each person separately), of which provider ('' for all), per UTC day
# or month, in dollars. yiem.budgets reads and writes it; an admin sets it on the Costs page.
budgets = Table(
    "budgets",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("scope", String(16), nullable=False),
    Column("owner", Text, nullable=False, default=""),
    Column("provider", Text, nullable=False, default=""),
    Column("period", String(16), nullable=False),
    Column("limit_usd", Float, nullable=False),
    Column("created_ms", BigInteger, nullable=False),
    Column("updated_ms", BigInteger, nullable=False),
    Index("ix_budgets_rule", "scope", "owner", "provider", "period", unique=True),
)

# The estimated cost of a request, reserved before it is sent in the same transaction that checked the
# limits. When the request ends it is settled to the real cost and `usage_created_ms` (with owner,
# provider and model) names its usage row; once that row is written the reservation stops counting.
budget_reservations = Table(
    "budget_reservations",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("owner", Text, nullable=False),
    Column("provider", Text, nullable=False),
    Column("model", Text, nullable=False, default=""),
    Column("amount_usd", Float, nullable=False),
    Column("created_ms", BigInteger, nullable=False),
    Column("usage_created_ms", BigInteger, nullable=True),
    Index("ix_budget_reservations_created", "created_ms"),
)
