"""Checking a request against the limits, and reserving its cost atomically with the check.

Spend so far is what yiem.costs counts from the usage rows and rollups, plus the reservations of
requests in flight whose usage row is not written yet.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel
from sqlalchemy import Connection, Engine, and_, delete, exists, func, insert, select, update

from yiem.amounts import dollars
from yiem.budgets._config import BudgetConfigError
from yiem.budgets._limits import Budget, now_ms, period_range
from yiem.budgets._store import BudgetStore
from yiem.costs import counts_query
from yiem.store import budget_reservations, budgets, usage

Verdict = Literal["ok", "warn", "refuse"]
WARN_SHARE = 0.8
# A reservation whose request never reported back (its replica died) stops counting after this long.
RESERVATION_TTL_MS = 3_600_000
PRICE_UNKNOWN = "price unknown, not counted against the budget"


class Standing(BaseModel):
    """One limit as it stands for a request: spent so far this period, reserved by requests in flight."""

    budget: Budget
    spent: float
    reserved: float
    period_end_ms: int

    @property
    def used(self) -> float:
        return self.spent + self.reserved


class BudgetCheck(BaseModel):
    """The answer for a request: ok, warn (a limit 80 % used) or refuse (it would cross one), in words."""

    verdict: Verdict = "ok"
    message: str = ""
    estimated_cost: float | None = None
    reservation_id: str | None = None
    standings: list[Standing] = []

    @property
    def allowed(self) -> bool:
        return self.verdict != "refuse"


def _reserved_sql(budget: Budget, owner_id: str, at_ms: int) -> Any:
    r = budget_reservations.c
    start, _end = period_range(budget.period, at_ms)
    # Settled reservations stop counting once their usage row is written (it counts instead).
    written = exists().where(
        usage.c.owner == r.owner,
        usage.c.created_ms == r.usage_created_ms,
        usage.c.provider == r.provider,
        usage.c.model == r.model,
    )
    conditions = [
        r.created_ms >= max(start, at_ms - RESERVATION_TTL_MS),
        ~and_(r.usage_created_ms.is_not(None), written),
    ]
    if budget.provider:
        conditions.append(r.provider == budget.provider)
    spender = budget.spender(owner_id)
    if spender is not None:
        conditions.append(r.owner == spender)
    return select(func.coalesce(func.sum(r.amount_usd), 0.0)).where(*conditions).scalar_subquery()


def _standing(conn: Connection, budget: Budget, owner_id: str, at_ms: int) -> Standing:
    # One statement for both sums: a reservation and the usage row replacing it are seen at one moment.
    spent = counts_query(budget.usage_filter(owner_id, at_ms)).subquery()
    row = conn.execute(
        select(select(spent.c.cost_total).scalar_subquery(), _reserved_sql(budget, owner_id, at_ms))
    ).one()
    _start, end = period_range(budget.period, at_ms)
    return Standing(
        budget=budget, spent=float(row[0] or 0.0), reserved=float(row[1] or 0.0), period_end_ms=end
    )


def _judge(standings: list[Standing], estimate: float | None) -> BudgetCheck:
    if not standings:
        return BudgetCheck(estimated_cost=estimate)
    if estimate is None:
        return BudgetCheck(verdict="warn", message=f"This model's {PRICE_UNKNOWN}.", standings=standings)
    for standing in standings:
        limit = standing.budget.limit_usd
        if standing.used + estimate > limit:
            return BudgetCheck(
                verdict="refuse",
                estimated_cost=estimate,
                standings=standings,
                message=(
                    f"Not sent: this request may cost up to {dollars(estimate)}, which would cross "
                    f"{standing.budget.yours} of {dollars(limit)} "
                    f"({dollars(standing.used)} already spent this {standing.budget.period}, UTC). "
                    "Ask an admin to raise it on the Costs page, lower the max tokens, or wait for the next "
                    f"{standing.budget.period}."
                ),
            )
    fullest = max(standings, key=lambda s: (s.used + estimate) / s.budget.limit_usd)
    share = (fullest.used + estimate) / fullest.budget.limit_usd
    whose = fullest.budget.yours
    if share >= WARN_SHARE:
        return BudgetCheck(
            verdict="warn",
            estimated_cost=estimate,
            standings=standings,
            message=(
                f"{whose[:1].upper()}{whose[1:]} is {share:.0%} used after this request "
                f"({dollars(fullest.used + estimate)} of {dollars(fullest.budget.limit_usd)})."
            ),
        )
    return BudgetCheck(estimated_cost=estimate, standings=standings)


class Ledger:
    """Checks and reservations against the limits of one store (shared by every replica using it)."""

    def __init__(self, engine: Engine, configured: Sequence[Budget] | None = None) -> None:
        self.engine = engine
        self.limits = BudgetStore(engine, configured)

    def _applying(self, owner_id: str, provider: str) -> list[Budget] | BudgetCheck:
        # A wrong budgets file refuses every request in its words: a limit meant to hold never lapses.
        try:
            return self.limits.applying(owner_id, provider)
        except BudgetConfigError as error:
            return BudgetCheck(verdict="refuse", message=f"Not sent: {error}")

    def check(self, owner_id: str, provider: str, estimated_cost: float | None) -> BudgetCheck:
        """Whether a request of `owner_id` to `provider` costing up to `estimated_cost` ($, None: price
        unknown) fits every limit it counts against; reserves nothing."""
        at = now_ms()
        applying = self._applying(owner_id, provider)
        if isinstance(applying, BudgetCheck):
            return applying
        with self.engine.connect() as conn:
            standings = [_standing(conn, budget, owner_id, at) for budget in applying]
        return _judge(standings, estimated_cost)

    def reserve(self, owner_id: str, provider: str, model: str, estimated_cost: float | None) -> BudgetCheck:
        """`check`, and when allowed reserve `estimated_cost` in the same transaction (`reservation_id`).

        The limits' rows are locked (PostgreSQL) or the database is (SQLite) from the check to the commit,
        so two replicas cannot both take the last of a limit.
        """
        at = now_ms()
        applying = self._applying(owner_id, provider)
        if isinstance(applying, BudgetCheck):
            return applying
        if not applying:
            return BudgetCheck(estimated_cost=estimated_cost)
        if estimated_cost is None:  # nothing to reserve: allowed, with the warning that it is not counted
            return self.check(owner_id, provider, None)
        with self.engine.begin() as conn:
            if conn.dialect.name == "sqlite":
                conn.exec_driver_sql("BEGIN IMMEDIATE")
            else:
                ids = sorted(budget.id for budget in applying if budget.source == "app")
                conn.execute(
                    select(budgets.c.id).where(budgets.c.id.in_(ids)).order_by(budgets.c.id).with_for_update()
                )
                # The budgets file's limits have no row to lock: one lock per limit, taken in one order.
                for key in sorted(b.id for b in applying if b.source == "config"):
                    conn.execute(select(func.pg_advisory_xact_lock(func.hashtext(key))))
            checked = _judge([_standing(conn, budget, owner_id, at) for budget in applying], estimated_cost)
            if checked.allowed:
                checked.reservation_id = str(uuid.uuid4())
                conn.execute(
                    insert(budget_reservations).values(
                        id=checked.reservation_id,
                        owner=owner_id,
                        provider=provider,
                        model=model,
                        amount_usd=estimated_cost,
                        created_ms=at,
                    )
                )
            conn.execute(
                delete(budget_reservations).where(budget_reservations.c.created_ms < at - RESERVATION_TTL_MS)
            )
        return checked

    def settle(self, reservation_id: str, cost: float, usage_created_ms: int, model: str) -> None:
        """The request ended: its reservation holds the real `cost` until its usage row (created at
        `usage_created_ms`, for `model`) is written."""
        with self.engine.begin() as conn:
            conn.execute(
                update(budget_reservations)
                .where(budget_reservations.c.id == reservation_id)
                .values(amount_usd=cost, usage_created_ms=usage_created_ms, model=model)
            )

    def release(self, reservation_id: str) -> None:
        """Drop a reservation whose request was never sent or was stopped (its own usage row counts)."""
        with self.engine.begin() as conn:
            conn.execute(delete(budget_reservations).where(budget_reservations.c.id == reservation_id))
