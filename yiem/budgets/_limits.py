"""Spending limits: whose spend, which provider, per UTC day or month; kept in the store's `budgets` table."""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, Field
from sqlalchemy import Engine, delete, insert, select, update

from yiem.costs import UsageFilter
from yiem.errors import YiemError
from yiem.identity import Owner
from yiem.store import budgets

Period = Literal["day", "month"]
Scope = Literal["team", "person"]
Source = Literal["app", "config"]
PERIOD_WORDS: dict[str, str] = {"day": "daily", "month": "monthly"}


class BudgetError(YiemError):
    """A limit that cannot be set (not an admin, not a positive amount, a period unknown)."""


def now_ms() -> int:
    return int(time.time() * 1000)


def period_range(period: Period, at_ms: int) -> tuple[int, int]:
    """The [start, end) ms of the UTC day or month holding `at_ms`: the same on every replica."""
    at = datetime.fromtimestamp(at_ms / 1000, tz=UTC)
    if period == "day":
        start = datetime(at.year, at.month, at.day, tzinfo=UTC)
        end_ms = int(start.timestamp() * 1000) + 86_400_000
        return int(start.timestamp() * 1000), end_ms
    start = datetime(at.year, at.month, 1, tzinfo=UTC)
    after = datetime(at.year + at.month // 12, at.month % 12 + 1, 1, tzinfo=UTC)
    return int(start.timestamp() * 1000), int(after.timestamp() * 1000)


class Budget(BaseModel):
    """One limit: the team's spend together, or a person's (`owner` '' for each person separately)."""

    id: str = Field(default_factory=lambda: str(uuid.uuid4()))
    scope: Scope = "person"
    owner: str = ""
    provider: str = ""
    period: Period = "month"
    limit_usd: float = Field(gt=0)
    # Set by an admin in the app (stored), or read from the budgets file (yiem.budgets._config).
    source: Source = "app"

    def applies_to(self, owner_id: str, provider: str) -> bool:
        """Whether a request of `owner_id` to `provider` counts against this limit."""
        if self.provider and self.provider != provider:
            return False
        return self.scope == "team" or self.owner in ("", owner_id)

    def spender(self, owner_id: str) -> str | None:
        """Whose spend counts for `owner_id`'s request: theirs, or None for the whole team's."""
        return None if self.scope == "team" else owner_id

    def usage_filter(self, owner_id: str, at_ms: int) -> UsageFilter:
        """The usage rows this limit sums for `owner_id`'s request at `at_ms` (its current period)."""
        start, end = period_range(self.period, at_ms)
        providers = (self.provider,) if self.provider else ()
        return UsageFilter(start_ms=start, end_ms=end, providers=providers, owner=self.spender(owner_id))

    @property
    def label(self) -> str:
        """`The team's monthly limit for openai`, `Your daily limit`, `alice@x's monthly limit`."""
        whose = {"team": "The team's"}.get(self.scope) or (
            f"{self.owner}'s" if self.owner else "Each person's"
        )
        where = f" for {self.provider}" if self.provider else ""
        return f"{whose} {PERIOD_WORDS[self.period]} limit{where}"

    @property
    def yours(self) -> str:
        """The label as the person whose request it limits reads it: `your daily limit`, `the team's …`."""
        if self.scope == "team":
            return "the" + self.label.removeprefix("The")
        where = f" for {self.provider}" if self.provider else ""
        return f"your {PERIOD_WORDS[self.period]} limit{where}"


class BudgetStore:
    """The limits in the store, and the budgets file's; only an admin (or the one local user) changes
    the stored ones, anyone reads them.

    `configured` stands for the budgets file (e.g. the driver's, on a Ray worker); None reads the file.
    """

    def __init__(self, engine: Engine, configured: Sequence[Budget] | None = None) -> None:
        self.engine = engine
        self.configured = None if configured is None else list(configured)

    def from_config(self) -> list[Budget]:
        """The budgets file's limits; `BudgetConfigError` when it is wrong."""
        from yiem.budgets._config import configured_budgets

        return configured_budgets() if self.configured is None else list(self.configured)

    def all(self) -> list[Budget]:
        """Every limit: the stored ones (team first, then by period and provider), then the file's."""
        return self.stored() + self.from_config()

    def stored(self) -> list[Budget]:
        """The limits set in the app, team ones first, then by period and provider."""
        b = budgets.c
        query = select(budgets).order_by(b.scope.desc(), b.owner, b.period, b.provider)
        with self.engine.connect() as conn:
            return [
                Budget(
                    id=r.id,
                    scope=r.scope,
                    owner=r.owner,
                    provider=r.provider,
                    period=r.period,
                    limit_usd=r.limit_usd,
                )
                for r in conn.execute(query)
            ]

    def applying(self, owner_id: str, provider: str) -> list[Budget]:
        """The limits a request of `owner_id` to `provider` counts against."""
        return [budget for budget in self.all() if budget.applies_to(owner_id, provider)]

    def set(self, who: Owner, budget: Budget) -> Budget:
        """Add `budget`, or change the limit of the one with the same scope, person, provider and period."""
        _require_admin(who)
        b = budgets.c
        same = (
            (b.scope == budget.scope)
            & (b.owner == budget.owner)
            & (b.provider == budget.provider)
            & (b.period == budget.period)
        )
        stamp = now_ms()
        with self.engine.begin() as conn:
            found = conn.execute(select(b.id).where(same)).scalar()
            if found is not None:
                conn.execute(
                    update(budgets).where(b.id == found).values(limit_usd=budget.limit_usd, updated_ms=stamp)
                )
                return budget.model_copy(update={"id": found})
            row = budget.model_dump(exclude={"source"})
            conn.execute(insert(budgets).values(**row, created_ms=stamp, updated_ms=stamp))
        return budget

    def remove(self, who: Owner, budget_id: str) -> None:
        """Delete a limit."""
        _require_admin(who)
        with self.engine.begin() as conn:
            conn.execute(delete(budgets).where(budgets.c.id == budget_id))


def _require_admin(who: Owner) -> None:
    if not who.is_admin:
        raise BudgetError("Only an admin can set spending limits; ask one to change this limit.")
