"""Spending limits: whose spend, which provider, per UTC day or month."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, Field

from yiem.costs import UsageFilter
from yiem.errors import YiemError

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
