"""Which usage rows the page reads: the filter, named periods, local days and the zone's offsets."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo

from sqlalchemy import ColumnCollection, ColumnElement, and_, func, true

from yiem.errors import YiemError
from yiem.identity import LOCAL_OWNER_ID
from yiem.store import usage

HOUR_MS = 3_600_000
DAY_MS = 86_400_000

Granularity = Literal["hour", "day"]


class UsageFilterError(YiemError, ValueError):
    """A filter the dashboard cannot apply (e.g. a range that ends before it starts).

    Also a ValueError: callers that validated input with `except ValueError` keep working.
    """


@dataclass(frozen=True)
class UsageFilter:
    """Which usage rows to aggregate: a half-open time range, whose rows, and optional dimensions.

    `owner` is the person whose requests these are (the local user unless said); None is the whole
    team, which only an admin's page asks for.
    """

    start_ms: int | None = None
    end_ms: int | None = None  # exclusive
    providers: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    conversation_id: str | None = None
    # An experiment's rows (its items' replies and its rubric judges'), read through ix_usage_experiment.
    experiment_id: str | None = None
    # The rows one page made (usage.source, e.g. "compare"), read through ix_usage_source.
    source: str | None = None
    owner: str | None = LOCAL_OWNER_ID

    def __post_init__(self) -> None:
        if self.start_ms is not None and self.end_ms is not None and self.end_ms <= self.start_ms:
            raise UsageFilterError("The date range ends before it starts; pick an end after the start.")

    @property
    def rows_only(self) -> bool:
        """Whether only the usage rows can answer (the rollups keep no conversation, experiment or source)."""
        return self.conversation_id is not None or self.experiment_id is not None or self.source is not None

    def previous(self) -> UsageFilter | None:
        """The same filter over the period of the same length just before this one."""
        if self.start_ms is None or self.end_ms is None:
            return None
        length = self.end_ms - self.start_ms
        return replace(self, start_ms=self.start_ms - length, end_ms=self.start_ms)

    def where(
        self, time_index: bool = True, name_index: bool = True, owner_index: bool | None = None
    ) -> ColumnElement[bool]:
        """The SQL condition for these rows.

        `time_index=False` writes the time range as `created_ms + 0`, which no index matches: SQLite
        then picks an index by the query's GROUP BY instead of by the range. `name_index=False` does
        the same to the provider and model conditions, so a partial index can be chosen instead.
        `owner_index` (default: both of those) does it to the owner: else SQLite seeks
        ix_usage_owner_created on the owner alone and walks every row of that person.
        """
        if owner_index is None:
            owner_index = time_index and name_index
        created: ColumnElement[Any] = usage.c.created_ms if time_index else usage.c.created_ms + 0
        parts: list[ColumnElement[bool]] = []
        if self.start_ms is not None:
            parts.append(created >= self.start_ms)
        if self.end_ms is not None:
            parts.append(created < self.end_ms)
        return and_(true(), *parts, *self.dimensions(usage.c, name_index, owner_index))

    def dimensions(
        self, columns: ColumnCollection[str, Any], name_index: bool = True, owner_index: bool = True
    ) -> list[ColumnElement[bool]]:
        """The conditions on everything but time, over `columns`: the usage table's or a rollup's.

        A rollup keeps no conversation or experiment, so `rows_only` filters are never asked of one.
        """
        provider: ColumnElement[Any] = columns.provider if name_index else func.coalesce(columns.provider, "")
        model: ColumnElement[Any] = columns.model if name_index else func.coalesce(columns.model, "")
        parts: list[ColumnElement[bool]] = []
        if self.providers:
            parts.append(provider.in_(self.providers))
        if self.models:
            parts.append(model.in_(self.models))
        if self.conversation_id is not None:
            parts.append(columns.conversation_id == self.conversation_id)
        if self.experiment_id is not None:
            parts.append(columns.experiment_id == self.experiment_id)
        if self.source is not None:
            parts.append(columns.source == self.source)
        if self.owner is not None:
            # `owner || ''` is the same text but matches no index (SQLite and PostgreSQL alike).
            owner: ColumnElement[Any] = columns.owner if owner_index else columns.owner.concat("")
            parts.append(owner == self.owner)
        return parts


def local_day_range(first: date, last: date, tz: str) -> tuple[int, int]:
    """Epoch ms of local midnight starting `first` and of the one ending `last` (inclusive days)."""
    if last < first:
        raise UsageFilterError(f"The date range ends ({last}) before it starts ({first}).")
    zone = _zone(tz)
    start = datetime(first.year, first.month, first.day, tzinfo=zone)
    after = last + timedelta(days=1)
    end = datetime(after.year, after.month, after.day, tzinfo=zone)
    return int(start.timestamp() * 1000), int(end.timestamp() * 1000)


PERIODS: dict[str, str] = {
    "24h": "Last 24 hours",
    "7d": "Last 7 days",
    "30d": "Last 30 days",
    "90d": "Last 90 days",
    "all": "All time",
    "custom": "Custom dates",
}


def period_range(
    period: str, tz: str, now_ms: int, dates: tuple[date, date] | None = None
) -> tuple[int, int]:
    """The [start, end) ms of a named period ending now: whole local days, or the last 24 hours.

    "custom" needs `dates` (first and last day, inclusive); "all" is resolved by `data_range`.
    """
    if period == "24h":
        return now_ms - DAY_MS, now_ms + 1
    if period == "custom":
        if dates is None:
            raise UsageFilterError("Pick the first and the last day of the custom range.")
        return local_day_range(dates[0], dates[1], tz)
    days = {"7d": 7, "30d": 30, "90d": 90}.get(period)
    if days is None:
        raise UsageFilterError(f"Unknown period {period!r}; use one of {', '.join(PERIODS)}.")
    today = datetime.fromtimestamp(now_ms / 1000, tz=_zone(tz)).date()
    return local_day_range(today - timedelta(days=days - 1), today, tz)


def _zone(tz: str) -> ZoneInfo:
    try:
        return ZoneInfo(tz)
    except (KeyError, ValueError) as exc:
        raise UsageFilterError(f"Unknown time zone {tz!r}; use an IANA name such as 'Europe/Paris'.") from exc


def offset_transitions(tz: str, start_ms: int, end_ms: int) -> list[tuple[int, int]]:
    """The zone's UTC offsets (ms) over [start_ms, end_ms) as (from_ms, offset_ms), in order.

    Offsets are probed daily and each change is pinned to the millisecond by bisection, so a DST
    change inside the range splits it exactly where the zone's clocks change.
    """
    zone = _zone(tz)

    def offset_at(ms: int) -> int:
        delta = datetime.fromtimestamp(ms / 1000, tz=UTC).astimezone(zone).utcoffset()
        return int(delta.total_seconds() * 1000) if delta else 0

    spans = [(start_ms, offset_at(start_ms))]
    probe = start_ms
    while probe < end_ms:
        nxt = min(probe + DAY_MS, end_ms)
        if offset_at(nxt) != spans[-1][1]:
            low, high = probe, nxt  # the offset changes in (low, high]: find the first ms that differs
            while high - low > 1:
                mid = (low + high) // 2
                if offset_at(mid) == spans[-1][1]:
                    low = mid
                else:
                    high = mid
            if high < end_ms:
                spans.append((high, offset_at(high)))
        probe = nxt
    return spans


def choose_granularity(start_ms: int, end_ms: int) -> Granularity:
    """Hours for ranges of up to three days, days beyond."""
    return "hour" if end_ms - start_ms <= 3 * DAY_MS else "day"
