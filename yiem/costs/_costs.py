"""The Costs page's aggregations over the usage table, pushed down to SQL (SQLite and PostgreSQL).

One grouped query (the "cube": local hour or day x provider x model x stop reason) feeds the
headline, the charts and the provider, model and stop-reason breakdowns; it groups sums per UTC
hour into local buckets, so the database sorts hours, not requests. Those hourly sums come from
the rollup usage_hourly (kept by a trigger, see yiem.store) for the whole hours of the range, and
from the usage rows, straight off an index in hour order, for a partial hour at either end or
when a conversation is picked. The previous period is one ungrouped query over the same sums;
the top conversations walk usage_conversation_hourly in conversation order; medians come from a
bounded sample of rows. Nothing loads every row into Python.

Local buckets: `(created_ms + offset) // size` with the zone's offset written as a CASE over the
DST changes inside the range, so a day in Europe/Paris is 23, 24 or 25 hours as the clocks say,
and the repeated hour of a fall-back change is one local hour holding both.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from typing import Any, Literal, Self
from zoneinfo import ZoneInfo

from pydantic import BaseModel, Field
from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Engine,
    Select,
    and_,
    case,
    func,
    literal,
    literal_column,
    select,
    true,
    union_all,
)

from yiem.store import (
    ERROR_STOP_REASON,
    USAGE_HOUR_EXPRESSION,
    conversations,
    usage,
    usage_conversation_hourly,
    usage_hourly,
)

HOUR_MS = 3_600_000
DAY_MS = 86_400_000
# Above this many requests a median is read from an evenly spread sample of them (by id), so the
# page never pulls every latency out of the database; at or below it the median is exact.
MEDIAN_SAMPLE = 20_000

Granularity = Literal["hour", "day"]


class UsageFilterError(ValueError):
    """A filter the dashboard cannot apply (e.g. a range that ends before it starts)."""


@dataclass(frozen=True)
class UsageFilter:
    """Which usage rows to aggregate: a half-open time range and optional dimensions."""

    start_ms: int | None = None
    end_ms: int | None = None  # exclusive
    providers: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    conversation_id: str | None = None

    def __post_init__(self) -> None:
        if self.start_ms is not None and self.end_ms is not None and self.end_ms <= self.start_ms:
            raise UsageFilterError("The date range ends before it starts; pick an end after the start.")

    def previous(self) -> UsageFilter | None:
        """The same filter over the period of the same length just before this one."""
        if self.start_ms is None or self.end_ms is None:
            return None
        length = self.end_ms - self.start_ms
        return replace(self, start_ms=self.start_ms - length, end_ms=self.start_ms)

    def where(self, time_index: bool = True) -> ColumnElement[bool]:
        """The SQL condition for these rows.

        `time_index=False` writes the time range as `created_ms + 0`, which no index matches: SQLite
        then picks an index by the query's GROUP BY instead of by the range.
        """
        created: ColumnElement[Any] = usage.c.created_ms if time_index else usage.c.created_ms + 0
        parts: list[ColumnElement[bool]] = []
        if self.start_ms is not None:
            parts.append(created >= self.start_ms)
        if self.end_ms is not None:
            parts.append(created < self.end_ms)
        if self.providers:
            parts.append(usage.c.provider.in_(self.providers))
        if self.models:
            parts.append(usage.c.model.in_(self.models))
        if self.conversation_id is not None:
            parts.append(usage.c.conversation_id == self.conversation_id)
        return and_(true(), *parts)


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


class Counts(BaseModel):
    """The sums every group of a breakdown carries; dollars count only rows whose price is known."""

    requests: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    cost_total: float = 0.0
    unpriced_requests: int = 0

    def __add__(self, other: Self) -> Self:
        # A page adds up thousands of groups: pydantic-core's validation of plain ints and floats is
        # about twice as fast as model_construct, which is written in Python.
        values = {name: getattr(self, name) + getattr(other, name) for name in type(self).model_fields}
        return type(self)(**values)

    @property
    def uncached_input_tokens(self) -> int:
        """Input not served from the cache: fresh input and cache writes."""
        return self.input_tokens + self.cache_write_tokens

    @property
    def prompt_tokens(self) -> int:
        """Every input token: fresh input, cache reads and cache writes."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.output_tokens

    @property
    def cache_share(self) -> float | None:
        """The share of input tokens served from the cache (None with no input)."""
        return self.cache_read_tokens / self.prompt_tokens if self.prompt_tokens else None

    @property
    def error_rate(self) -> float | None:
        return self.errors / self.requests if self.requests else None


class Totals(Counts):
    """Counts plus the four cost parts and the tokens of unpriced requests (`totals`, the CSV).

    Grouped queries leave these out: each summed column makes SQLite's GROUP BY sort carry more.
    """

    cost_input: float = 0.0
    cost_output: float = 0.0
    cost_cache_read: float = 0.0
    cost_cache_write: float = 0.0
    unpriced_tokens: int = 0


class Headline(BaseModel):
    """The figures at the top of the page for one period."""

    totals: Counts = Field(default_factory=Counts)
    median_latency_ms: float | None = None
    median_ttft_ms: float | None = None


class HeadlineChange(BaseModel):
    """This period's headline and the previous period's, for the deltas."""

    current: Headline
    previous: Headline | None = None

    def change(self, metric: str) -> float | None:
        """Relative change of a headline metric (0.25 = +25 %); None when there is nothing to compare."""
        if self.previous is None:
            return None
        now, before = _metric(self.current, metric), _metric(self.previous, metric)
        if now is None or before is None or before == 0:
            return None
        return (now - before) / before


def _metric(headline: Headline, metric: str) -> float | None:
    if metric in ("median_latency_ms", "median_ttft_ms"):
        value: Any = getattr(headline, metric)
    else:
        value = getattr(headline.totals, metric)
    return None if value is None else float(value)


class CubeRow(BaseModel):
    """Counts of one (bucket, provider, model, stop reason) group."""

    bucket: datetime  # local wall-clock start of the hour or day, naive
    provider: str
    model: str
    stop_reason: str
    totals: Counts


class BreakdownRow(BaseModel):
    """One line of a breakdown table."""

    key: str
    label: str
    totals: Counts
    conversation_id: str | None = None
    last_ms: int | None = None


class Summary(BaseModel):
    """Everything the page draws from the cube for one filter."""

    granularity: Granularity
    tz: str
    rows: list[CubeRow]

    def counts(self) -> Counts:
        return sum((row.totals for row in self.rows), Counts())

    def breakdown(self, by: Literal["provider", "model", "stop_reason"]) -> list[BreakdownRow]:
        """Totals per provider, per provider/model, or per stop reason, most expensive first."""
        groups: dict[str, BreakdownRow] = {}
        for row in self.rows:
            if by == "model":
                key, label = f"{row.provider}/{row.model}", row.model
            else:
                key = label = getattr(row, by)
            found = groups.get(key)
            if found is None:
                groups[key] = BreakdownRow.model_construct(key=key, label=label, totals=row.totals)
            else:
                found.totals = found.totals + row.totals
        return sorted(groups.values(), key=lambda r: (-r.totals.cost_total, -r.totals.requests, r.key))

    def series(self) -> list[CubeRow]:
        """Per bucket and provider/model counts (stop reasons folded), in time order."""
        groups: dict[tuple[datetime, str, str], CubeRow] = {}
        for row in self.rows:
            key = (row.bucket, row.provider, row.model)
            found = groups.get(key)
            if found is None:
                groups[key] = row.model_copy(update={"stop_reason": ""})
            else:
                found.totals = found.totals + row.totals
        return sorted(groups.values(), key=lambda r: (r.bucket, r.provider, r.model))


def _priced_cost() -> ColumnElement[Any]:
    return func.sum(case((usage.c.price_known == true(), usage.c.cost_total), else_=0.0))


def _sums(full: bool = False) -> list[ColumnElement[Any]]:
    """The aggregate columns of `Counts` (or of `Totals` when `full`)."""
    c = usage.c
    priced = c.price_known == true()
    sums: list[ColumnElement[Any]] = [
        func.count().label("requests"),
        func.sum(case((c.stop_reason == ERROR_STOP_REASON, 1), else_=0)).label("errors"),
        func.sum(c.input_tokens).label("input_tokens"),
        func.sum(c.output_tokens).label("output_tokens"),
        func.sum(c.cache_read_tokens).label("cache_read_tokens"),
        func.sum(c.cache_write_tokens).label("cache_write_tokens"),
        func.sum(c.reasoning_tokens).label("reasoning_tokens"),
        _priced_cost().label("cost_total"),
        func.sum(case((priced, 0), else_=1)).label("unpriced_requests"),
    ]
    if full:
        sums += [
            func.sum(case((priced, c.cost_input), else_=0.0)).label("cost_input"),
            func.sum(case((priced, c.cost_output), else_=0.0)).label("cost_output"),
            func.sum(case((priced, c.cost_cache_read), else_=0.0)).label("cost_cache_read"),
            func.sum(case((priced, c.cost_cache_write), else_=0.0)).label("cost_cache_write"),
            func.sum(case((priced, 0), else_=_row_tokens())).label("unpriced_tokens"),
        ]
    return sums


def _row_tokens() -> ColumnElement[Any]:
    c = usage.c
    return c.input_tokens + c.output_tokens + c.cache_read_tokens + c.cache_write_tokens


def _counts(mapping: Any) -> Counts:
    # PostgreSQL's sum() of integers is numeric (Decimal in Python): cast to each field's type.
    values: dict[str, Any] = {
        name: (float if field.annotation is float else int)(mapping[name] or 0)
        for name, field in Counts.model_fields.items()
    }
    return Counts(**values)


def _totals(mapping: Any) -> Totals:
    return Totals(**{name: mapping[name] or 0 for name in Totals.model_fields})


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


def _local_bucket(
    spans: list[tuple[int, int]], size_ms: int, created: ColumnElement[Any] = usage.c.created_ms
) -> ColumnElement[Any]:
    """The local wall-clock bucket number of `created`: (created + zone offset) // size_ms."""
    offset: ColumnElement[Any]
    if len(spans) == 1:
        offset = literal(spans[0][1])
    else:
        whens = [(created < spans[i + 1][0], spans[i][1]) for i in range(len(spans) - 1)]
        offset = case(*whens, else_=spans[-1][1])
    # Times are after 1970, so integer division truncates the same way as floor on both dialects.
    return (created + offset) // size_ms


def _utc_hour() -> ColumnElement[Any]:
    # Written exactly as the expression of the index ix_usage_hour (store.py), so the database
    # reads requests already in hour order from that index instead of sorting them.
    return literal_column(USAGE_HOUR_EXPRESSION, BigInteger)


def _in_hours(flt: UsageFilter) -> list[ColumnElement[bool]]:
    """`flt` as a range of UTC hours (the seek on ix_usage_hour) plus its exact conditions."""
    assert flt.start_ms is not None and flt.end_ms is not None
    hour = _utc_hour()
    return [hour >= flt.start_ms // HOUR_MS, hour <= (flt.end_ms - 1) // HOUR_MS, flt.where(time_index=False)]


_KEYS = ("provider", "model", "stop_reason")


def _raw_hours(flt: UsageFilter, full: bool) -> Select[Any]:
    """`flt`'s requests summed per UTC hour and key, read from the usage table (ix_usage_hour)."""
    hour = _utc_hour()
    keys = [usage.c[name] for name in _KEYS]
    return select(hour.label("hour"), *keys, *_sums(full)).where(*_in_hours(flt)).group_by(hour, *keys)


def _rollup_hours(flt: UsageFilter, first: int, last: int, full: bool) -> Select[Any]:
    """The sums of usage_hourly for UTC hours [first, last) under `flt`'s provider and model filters."""
    h = usage_hourly.c
    fields = Totals.model_fields if full else Counts.model_fields
    columns = [
        case((h.stop_reason == ERROR_STOP_REASON, h.requests), else_=0).label(name)
        if name == "errors"
        else h[name].label(name)
        for name in fields
    ]
    query = select(h.hour, *(h[name] for name in _KEYS), *columns).where(h.hour >= first, h.hour < last)
    if flt.providers:
        query = query.where(h.provider.in_(flt.providers))
    if flt.models:
        query = query.where(h.model.in_(flt.models))
    return query


def _split_hours(flt: UsageFilter) -> tuple[int, int, list[UsageFilter]] | None:
    """The whole UTC hours [first, last) inside `flt`'s range, and filters for the partial hours at
    its ends; None when the range is open or holds no whole hour."""
    if flt.start_ms is None or flt.end_ms is None:
        return None
    first = -(-flt.start_ms // HOUR_MS)  # the first hour that starts inside the range
    last = flt.end_ms // HOUR_MS  # the hour the range ends in, partial or empty
    if first >= last:
        return None
    edges = []
    if flt.start_ms < first * HOUR_MS:
        edges.append(replace(flt, end_ms=first * HOUR_MS))
    if flt.end_ms > last * HOUR_MS:
        edges.append(replace(flt, start_ms=last * HOUR_MS))
    return first, last, edges


def _hourly(flt: UsageFilter, full: bool = False) -> Any:
    """`flt`'s requests as sums per UTC hour and key (a subquery), or None when only rows can say.

    Whole hours come from usage_hourly, the partial hours at either end of the range from the
    usage rows; a conversation filter or an open range needs the rows throughout.
    """
    if flt.conversation_id is not None or flt.start_ms is None or flt.end_ms is None:
        return None
    split = _split_hours(flt)
    if split is None:
        return _raw_hours(flt, full).subquery()
    first, last, edges = split
    parts = [_rollup_hours(flt, first, last, full), *(_raw_hours(edge, full) for edge in edges)]
    return (union_all(*parts) if len(parts) > 1 else parts[0]).subquery()


def _raw_conversations(flt: UsageFilter, edge: bool = False) -> Select[Any]:
    # Walking ix_usage_conversation_totals in conversation order groups without a sort; that
    # beats sorting the period's rows even when the period is a small part of the table. A partial
    # edge hour is a sliver of the table: seek it by time instead.
    return (
        select(usage.c.conversation_id, func.max(usage.c.created_ms).label("last_ms"), *_sums())
        .where(flt.where(time_index=edge))
        .group_by(usage.c.conversation_id)
    )


def _per_conversation(flt: UsageFilter) -> Any:
    """`flt`'s requests summed per conversation (a subquery): whole hours from
    usage_conversation_hourly (walked in conversation order), partial edge hours from the rows."""
    split = _split_hours(flt)
    if split is None:
        return _raw_conversations(flt).subquery()
    first, last, edges = split
    r = usage_conversation_hourly.c
    query = select(
        func.nullif(r.conversation_id, "").label("conversation_id"),
        func.max(r.last_ms).label("last_ms"),
        *(func.sum(r[name]).label(name) for name in Counts.model_fields),
    ).where(r.hour >= first, r.hour < last)
    if flt.providers:
        query = query.where(r.provider.in_(flt.providers))
    if flt.models:
        query = query.where(r.model.in_(flt.models))
    if flt.conversation_id is not None:
        query = query.where(r.conversation_id == flt.conversation_id)
    query = query.group_by(r.conversation_id)
    if not edges:
        return query.subquery()
    parts = union_all(query, *(_raw_conversations(edge, edge=True) for edge in edges)).subquery()
    return (
        select(
            parts.c.conversation_id,
            func.max(parts.c.last_ms).label("last_ms"),
            *(func.sum(parts.c[name]).label(name) for name in Counts.model_fields),
        )
        .group_by(parts.c.conversation_id)
        .subquery()
    )


def _whole_hours(spans: list[tuple[int, int]]) -> bool:
    return all(offset % HOUR_MS == 0 and start % HOUR_MS == 0 for start, offset in spans[1:]) and (
        spans[0][1] % HOUR_MS == 0
    )


def _cube_query(flt: UsageFilter, spans: list[tuple[int, int]], size: int) -> Any:
    """The cube's SQL. Where the zone is a whole number of hours from UTC throughout the range (most
    zones), the range's sums per UTC hour (mostly read from usage_hourly, see `_hourly`) are grouped
    into local buckets: a sort of hours, not of requests. Otherwise requests are grouped one by one.
    """
    hourly = _hourly(flt) if _whole_hours(spans) else None
    if hourly is None:
        keys = [usage.c[name] for name in _KEYS]
        bucket = _local_bucket(spans, size).label("bucket")
        return select(bucket, *keys, *_sums()).where(flt.where()).group_by(bucket, *keys)
    bucket = _local_bucket(spans, size, hourly.c.hour * HOUR_MS).label("bucket")
    outer_keys = [hourly.c[name] for name in _KEYS]
    sums = [func.sum(hourly.c[name]).label(name) for name in Counts.model_fields]
    return select(bucket, *outer_keys, *sums).group_by(bucket, *outer_keys)


def data_range(engine: Engine, flt: UsageFilter | None = None) -> tuple[int, int] | None:
    """Epoch ms of the first and just after the last usage row (under `flt`), or None with none."""
    created = usage.c.created_ms
    # Two scalar subqueries without a WHERE: each is one index seek on SQLite and PostgreSQL alike;
    # min and max over a filtered range read the whole range.
    first = select(func.min(created)).scalar_subquery()
    last = select(func.max(created)).scalar_subquery()
    if flt is not None:
        first, last = (
            select(agg(created)).where(flt.where()).scalar_subquery() for agg in (func.min, func.max)
        )
    with engine.connect() as conn:
        low, high = conn.execute(select(first, last)).one()
    return None if low is None else (int(low), int(high) + 1)


def choose_granularity(start_ms: int, end_ms: int) -> Granularity:
    """Hours for ranges of up to three days, days beyond."""
    return "hour" if end_ms - start_ms <= 3 * DAY_MS else "day"


def summarize(engine: Engine, flt: UsageFilter, tz: str, granularity: Granularity | None = None) -> Summary:
    """The cube for `flt`: counts per local hour or day, provider, model and stop reason."""
    start_ms, end_ms = flt.start_ms, flt.end_ms
    if start_ms is None or end_ms is None:
        found = data_range(engine, flt)
        if found is None:
            return Summary(granularity=granularity or "day", tz=tz, rows=[])
        start_ms = found[0] if start_ms is None else start_ms
        end_ms = found[1] if end_ms is None else end_ms
    grain = granularity or choose_granularity(start_ms, end_ms)
    size = HOUR_MS if grain == "hour" else DAY_MS
    bounded = replace(flt, start_ms=start_ms, end_ms=end_ms)
    query = _cube_query(bounded, offset_transitions(tz, start_ms, end_ms), size)
    epoch = datetime(1970, 1, 1)
    with engine.connect() as conn:
        rows = [
            CubeRow(
                bucket=epoch + timedelta(milliseconds=int(r.bucket) * size),
                provider=r.provider,
                model=r.model,
                stop_reason=r.stop_reason,
                totals=_counts(r._mapping),
            )
            for r in conn.execute(query)
        ]
    return Summary(granularity=grain, tz=tz, rows=rows)


def counts(engine: Engine, flt: UsageFilter) -> Counts:
    """The `Counts` of `flt` in one ungrouped query (from usage_hourly where the filter allows)."""
    hourly = _hourly(flt)
    if hourly is None:
        query = select(*_sums()).where(flt.where())
    else:
        query = select(*(func.sum(hourly.c[name]).label(name) for name in Counts.model_fields))
    with engine.connect() as conn:
        return _counts(conn.execute(query).one()._mapping)


def totals(engine: Engine, flt: UsageFilter) -> Totals:
    """The sums for `flt` in one ungrouped query (from usage_hourly where the filter allows)."""
    hourly = _hourly(flt, full=True)
    if hourly is None:
        query = select(*_sums(full=True)).where(flt.where())
    else:
        query = select(*(func.sum(hourly.c[name]).label(name) for name in Totals.model_fields))
    with engine.connect() as conn:
        return _totals(conn.execute(query).one()._mapping)


def medians(engine: Engine, flt: UsageFilter, count: int | None = None) -> tuple[float | None, float | None]:
    """Median latency and time to first token (ms) of `flt`'s requests.

    Exact up to MEDIAN_SAMPLE requests; above, the median of every k-th row by id, so at most
    about MEDIAN_SAMPLE values leave the database whatever the number of rows. Pass `count`
    (the number of rows `flt` selects) when known, to save counting them again.
    """
    if count is None:
        count = counts(engine, flt).requests
    with engine.connect() as conn:
        step = max(1, -(-int(count) // MEDIAN_SAMPLE))
        condition = flt.where() if step == 1 else and_(flt.where(), usage.c.id % step == 0)
        latencies: list[float] = []
        ttfts: list[float] = []
        for latency, ttft in conn.execute(select(usage.c.latency_ms, usage.c.ttft_ms).where(condition)):
            if latency is not None:
                latencies.append(float(latency))
            if ttft is not None:
                ttfts.append(float(ttft))
    return _median(latencies), _median(ttfts)


def _median(values: list[float]) -> float | None:
    if not values:
        return None
    values.sort()
    middle = len(values) // 2
    return values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2


def headline(engine: Engine, flt: UsageFilter) -> HeadlineChange:
    """Headline figures for `flt` and for the period of the same length before it."""
    now_totals = totals(engine, flt)
    latency, ttft = medians(engine, flt, now_totals.requests)
    now = Headline(totals=now_totals, median_latency_ms=latency, median_ttft_ms=ttft)
    before_filter = flt.previous()
    if before_filter is None:
        return HeadlineChange(current=now)
    before_totals = totals(engine, before_filter)
    before_latency, before_ttft = medians(engine, before_filter, before_totals.requests)
    before = Headline(totals=before_totals, median_latency_ms=before_latency, median_ttft_ms=before_ttft)
    return HeadlineChange(current=now, previous=before)


def top_conversations(engine: Engine, flt: UsageFilter, limit: int = 10) -> list[BreakdownRow]:
    """The `limit` most expensive conversations (then most requests), with their titles."""
    sums = _per_conversation(flt)
    grouped = (
        select(sums)
        .order_by(sums.c.cost_total.desc(), sums.c.requests.desc(), sums.c.conversation_id)
        .limit(limit)
        .subquery()
    )
    query = select(grouped, conversations.c.title).select_from(
        grouped.outerjoin(conversations, conversations.c.id == grouped.c.conversation_id)
    )
    rows = []
    with engine.connect() as conn:
        for r in conn.execute(query):
            cid = r.conversation_id
            title = r.title or ("(no conversation)" if cid is None else "(deleted conversation)")
            rows.append(
                BreakdownRow(
                    key=cid or "",
                    label=title,
                    conversation_id=cid,
                    last_ms=int(r.last_ms),
                    totals=_counts(r._mapping),
                )
            )
    return sorted(rows, key=lambda r: (-r.totals.cost_total, -r.totals.requests, r.key))


class Dashboard(BaseModel):
    """Everything the Costs page draws for one filter."""

    summary: Summary
    headline: HeadlineChange
    top_conversations: list[BreakdownRow]


def dashboard(
    engine: Engine,
    flt: UsageFilter,
    tz: str,
    granularity: Granularity | None = None,
    top_filter: UsageFilter | None = None,
    top_limit: int = 50,
) -> Dashboard:
    """The cube, the headline and the top conversations (over `top_filter`, default `flt`).

    This period's headline counts are the cube's own, so its rows are read once. The queries are
    independent and run side by side, each on its own pooled connection: the database works on
    two cores while Python waits (sqlite3 and psycopg release the GIL).
    """
    before_filter = flt.previous()
    with ThreadPoolExecutor(max_workers=2) as pool:
        cube = pool.submit(summarize, engine, flt, tz, granularity)
        top = pool.submit(top_conversations, engine, top_filter or flt, top_limit)
        now_medians = pool.submit(medians, engine, flt)
        before = pool.submit(_period_headline, engine, before_filter) if before_filter else None
        summary = cube.result()
        latency, ttft = now_medians.result()
        now = Headline(totals=summary.counts(), median_latency_ms=latency, median_ttft_ms=ttft)
        change = HeadlineChange(current=now, previous=before.result() if before else None)
        return Dashboard(summary=summary, headline=change, top_conversations=top.result())


def _period_headline(engine: Engine, flt: UsageFilter) -> Headline:
    found = counts(engine, flt)
    latency, ttft = medians(engine, flt, found.requests)
    return Headline(totals=found, median_latency_ms=latency, median_ttft_ms=ttft)


def filter_options(engine: Engine) -> list[tuple[str, str]]:
    """Every (provider, model) pair the store has usage for, sorted.

    A skip scan over the (provider, model) index: a couple of seeks per distinct pair instead of
    reading one index entry per request. (A row-value `(provider, model) > (?, ?)` would seek on
    the provider only and then walk every request of it.)
    """
    c = usage.c
    first = select(c.provider, c.model).order_by(c.provider, c.model).limit(1)
    found: list[tuple[str, str]] = []
    with engine.connect() as conn:
        row = conn.execute(first).first()
        while row is not None:
            found.append((row.provider, row.model))
            same_provider = first.where(c.provider == row.provider, c.model > row.model)
            row = (
                conn.execute(same_provider).first()
                or conn.execute(first.where(c.provider > row.provider)).first()
            )
    return found


def conversation_titles(engine: Engine, ids: Iterable[str]) -> dict[str, str]:
    """Titles of the given conversations (missing ones are left out)."""
    wanted = list(ids)
    if not wanted:
        return {}
    query = select(conversations.c.id, conversations.c.title).where(conversations.c.id.in_(wanted))
    with engine.connect() as conn:
        return {r.id: r.title for r in conn.execute(query)}


EXPORT_COLUMNS = [c.name for c in usage.c]


def iter_rows(engine: Engine, flt: UsageFilter, chunk_size: int = 10_000) -> Iterator[list[dict[str, Any]]]:
    """The filtered rows in time order, `chunk_size` at a time (server-side cursor where supported)."""
    query = select(usage).where(flt.where()).order_by(usage.c.created_ms, usage.c.id)
    with engine.connect() as conn:
        result = conn.execution_options(stream_results=True, yield_per=chunk_size).execute(query)
        for part in result.partitions(chunk_size):
            yield [dict(r._mapping) for r in part]


def iter_csv(engine: Engine, flt: UsageFilter, chunk_size: int = 10_000) -> Iterator[str]:
    """The filtered rows as CSV text in chunks, header first; times also given as ISO 8601 UTC."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["created_utc", *EXPORT_COLUMNS])
    yield buffer.getvalue()
    for chunk in iter_rows(engine, flt, chunk_size):
        buffer.seek(0)
        buffer.truncate()
        for row in chunk:
            created = datetime.fromtimestamp(row["created_ms"] / 1000, tz=UTC).isoformat(
                timespec="milliseconds"
            )
            writer.writerow([created, *(_csv_value(row[name]) for name in EXPORT_COLUMNS)])
        yield buffer.getvalue()


def _csv_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else value


def breakdown_csv(rows: Iterable[BreakdownRow], key_name: str) -> str:
    """A breakdown table as CSV text (dollars unrounded, tokens as integers)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(
        [
            key_name,
            "label",
            "requests",
            "errors",
            "input_tokens",
            "cache_read_tokens",
            "cache_write_tokens",
            "output_tokens",
            "cost_usd",
            "unpriced_requests",
        ]
    )
    for row in rows:
        t = row.totals
        writer.writerow(
            [
                row.key,
                row.label,
                t.requests,
                t.errors,
                t.input_tokens,
                t.cache_read_tokens,
                t.cache_write_tokens,
                t.output_tokens,
                f"{t.cost_total:.6f}",
                t.unpriced_requests,
            ]
        )
    return buffer.getvalue()
