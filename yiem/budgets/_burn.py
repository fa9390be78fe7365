"""A limit's burn-down: spend accumulated over its period so far, against the limit."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from pydantic import BaseModel
from sqlalchemy import Engine

from yiem.budgets._limits import Budget, now_ms, period_range
from yiem.costs import summarize


class BurnDown(BaseModel):
    """Cumulative dollars at the end of each hour (a daily limit) or day (a monthly one), UTC, naive."""

    budget: Budget
    start: datetime
    end: datetime
    times: list[datetime]
    cumulative: list[float]

    @property
    def spent(self) -> float:
        return self.cumulative[-1] if self.cumulative else 0.0


def _naive(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).replace(tzinfo=None)


def burn_down(engine: Engine, budget: Budget, owner_id: str, at_ms: int | None = None) -> BurnDown:
    """`budget`'s period so far as `owner_id`'s requests count against it (the team's for a team limit)."""
    at = now_ms() if at_ms is None else at_ms
    start, end = period_range(budget.period, at)
    usage_filter = budget.usage_filter(owner_id, at)
    summary = summarize(engine, usage_filter, "UTC", "hour" if budget.period == "day" else "day")
    per_bucket: dict[datetime, float] = {}
    for row in summary.rows:
        per_bucket[row.bucket] = per_bucket.get(row.bucket, 0.0) + row.totals.cost_total
    # Each bucket's spend is reached at its end: the line starts at $0 when the period starts.
    step = timedelta(hours=1) if summary.granularity == "hour" else timedelta(days=1)
    times, cumulative, total = [_naive(start)], [0.0], 0.0
    for bucket in sorted(per_bucket):
        total += per_bucket[bucket]
        times.append(bucket + step)
        cumulative.append(total)
    return BurnDown(budget=budget, start=_naive(start), end=_naive(end), times=times, cumulative=cumulative)


def spend_by_person(engine: Engine, budget: Budget, at_ms: int | None = None) -> list[tuple[str, float]]:
    """What each person spent this period on the requests `budget` counts (its provider), most first:
    for an admin, the team's total split by person."""
    at = now_ms() if at_ms is None else at_ms
    team = replace(budget.usage_filter("", at), owner=None)
    rows = summarize(engine, team, "UTC", "day").breakdown("owner")
    return [(row.key, row.totals.cost_total) for row in rows]
