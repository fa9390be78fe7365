"""The SQL behind the Costs page: sums per local bucket, per UTC hour and per conversation.

Whole hours are read from the rollups kept by yiem.store, partial edge hours from the usage rows.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Select,
    case,
    func,
    literal,
    literal_column,
    select,
    true,
    union_all,
)

from yiem.costs._models import Counts, Totals
from yiem.costs._periods import HOUR_MS, UsageFilter
from yiem.store import (
    ERROR_STOP_REASON,
    USAGE_HOUR_EXPRESSION,
    usage,
    usage_conversation_hourly,
    usage_hourly,
)


def _priced_cost() -> ColumnElement[Any]:
    return func.sum(case((usage.c.price_known == true(), usage.c.cost_total), else_=0.0))


def sum_columns(full: bool = False) -> list[ColumnElement[Any]]:
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


# Each field of Counts with its type, found once: the cube reads thousands of rows per page.
_COUNT_CASTS: tuple[tuple[str, type], ...] = tuple(
    (name, float if field.annotation is float else int) for name, field in Counts.model_fields.items()
)


def read_counts(mapping: Any) -> Counts:
    # PostgreSQL's sum() of integers is numeric (Decimal in Python): cast to each field's type.
    return Counts(**{name: cast(mapping[name] or 0) for name, cast in _COUNT_CASTS})


def read_totals(mapping: Any) -> Totals:
    return Totals(**{name: mapping[name] or 0 for name in Totals.model_fields})


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
    # Written exactly as the expression of the index ix_usage_hour (yiem.store), so the database
    # reads requests already in hour order from that index instead of sorting them.
    return literal_column(USAGE_HOUR_EXPRESSION, BigInteger)


def _in_hours(usage_filter: UsageFilter) -> list[ColumnElement[bool]]:
    """`usage_filter` as a range of UTC hours (the seek on ix_usage_hour) plus its exact conditions."""
    assert usage_filter.start_ms is not None and usage_filter.end_ms is not None
    hour = _utc_hour()
    return [
        hour >= usage_filter.start_ms // HOUR_MS,
        hour <= (usage_filter.end_ms - 1) // HOUR_MS,
        usage_filter.where(time_index=False),
    ]


# The owner is a key too: an admin's page breaks the team's figures down per person from the cube.
_KEYS = ("provider", "model", "stop_reason", "owner")


def _raw_hours(usage_filter: UsageFilter, full: bool) -> Select[Any]:
    """`usage_filter`'s requests summed per UTC hour and key, read from the usage table (ix_usage_hour)."""
    hour = _utc_hour()
    keys = [usage.c[name] for name in _KEYS]
    query = select(hour.label("hour"), *keys, *sum_columns(full)).where(*_in_hours(usage_filter))
    return query.group_by(hour, *keys)


def _rollup_hours(usage_filter: UsageFilter, first: int, last: int, full: bool) -> Select[Any]:
    """The sums of usage_hourly for UTC hours [first, last) under the filter's providers and models."""
    h = usage_hourly.c
    fields = Totals.model_fields if full else Counts.model_fields
    columns = [
        case((h.stop_reason == ERROR_STOP_REASON, h.requests), else_=0).label(name)
        if name == "errors"
        else h[name].label(name)
        for name in fields
    ]
    return select(h.hour, *(h[name] for name in _KEYS), *columns).where(
        h.hour >= first, h.hour < last, *usage_filter.dimensions(h)
    )


def _split_hours(usage_filter: UsageFilter) -> tuple[int, int, list[UsageFilter]] | None:
    """The whole UTC hours [first, last) inside `usage_filter`'s range, and filters for the partial hours at
    its ends; None when the range is open or holds no whole hour."""
    if usage_filter.start_ms is None or usage_filter.end_ms is None:
        return None
    first = -(-usage_filter.start_ms // HOUR_MS)  # the first hour that starts inside the range
    last = usage_filter.end_ms // HOUR_MS  # the hour the range ends in, partial or empty
    if first >= last:
        return None
    edges = []
    if usage_filter.start_ms < first * HOUR_MS:
        edges.append(replace(usage_filter, end_ms=first * HOUR_MS))
    if usage_filter.end_ms > last * HOUR_MS:
        edges.append(replace(usage_filter, start_ms=last * HOUR_MS))
    return first, last, edges


def _hourly(usage_filter: UsageFilter, full: bool = False) -> Any:
    """`usage_filter`'s requests as sums per UTC hour and key (a subquery), or None when only rows can say.

    Whole hours come from usage_hourly, the partial hours at either end of the range from the
    usage rows; a conversation filter or an open range needs the rows throughout.
    """
    if usage_filter.rows_only or usage_filter.start_ms is None or usage_filter.end_ms is None:
        return None
    split = _split_hours(usage_filter)
    if split is None:
        return _raw_hours(usage_filter, full).subquery()
    first, last, edges = split
    parts = [_rollup_hours(usage_filter, first, last, full), *(_raw_hours(edge, full) for edge in edges)]
    return (union_all(*parts) if len(parts) > 1 else parts[0]).subquery()


def _raw_conversations(
    usage_filter: UsageFilter, edge: bool = False, among: Select[Any] | None = None
) -> Select[Any]:
    # Walking ix_usage_conversation_totals in conversation order groups without a sort; that
    # beats sorting the period's rows even when the period is a small part of the table. A partial
    # edge hour is a sliver of the table: seek it by time instead.
    query = select(usage.c.conversation_id, func.max(usage.c.created_ms).label("last_ms"), *sum_columns())
    query = query.where(usage_filter.where(time_index=edge))
    if among is not None:
        query = query.where(func.coalesce(usage.c.conversation_id, "").in_(among))
    return query.group_by(usage.c.conversation_id)


def rollup_conversations(usage_filter: UsageFilter) -> bool:
    """Whether `per_conversation` reads whole hours from usage_conversation_hourly for this filter."""
    # usage_conversation_hourly keeps no experiment or source: their conversations come from the rows.
    from_rows = usage_filter.experiment_id is not None or usage_filter.source is not None
    return not from_rows and _split_hours(usage_filter) is not None


def per_conversation(usage_filter: UsageFilter, among: Select[Any] | None = None) -> Any:
    """`usage_filter`'s requests summed per conversation (a subquery): whole hours from
    usage_conversation_hourly (walked in conversation order), partial edge hours from the rows.

    `among` (a SELECT of conversation ids, '' for none) limits the sums to those conversations,
    each then found by a seek in the rollup (with `rollup_conversations`; else the range's rows
    are read as without it).
    """
    split = _split_hours(usage_filter) if rollup_conversations(usage_filter) else None
    if split is None:
        return _raw_conversations(usage_filter, among=among).subquery()
    first, last, edges = split
    r = usage_conversation_hourly.c
    query = select(
        func.nullif(r.conversation_id, "").label("conversation_id"),
        func.max(r.last_ms).label("last_ms"),
        *(func.sum(r[name]).label(name) for name in Counts.model_fields),
    ).where(r.hour >= first, r.hour < last, *usage_filter.dimensions(r))
    if among is not None:
        query = query.where(r.conversation_id.in_(among))
    query = query.group_by(r.conversation_id)
    if not edges:
        return query.subquery()
    parts = union_all(query, *(_raw_conversations(edge, True, among) for edge in edges)).subquery()
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


def cube_query(usage_filter: UsageFilter, spans: list[tuple[int, int]], size: int) -> Any:
    """The cube's SQL. Where the zone is a whole number of hours from UTC throughout the range (most
    zones), the range's sums per UTC hour (mostly read from usage_hourly, see `_hourly`) are grouped
    into local buckets: a sort of hours, not of requests. Otherwise requests are grouped one by one.
    """
    hourly = _hourly(usage_filter) if _whole_hours(spans) else None
    if hourly is None:
        keys = [usage.c[name] for name in _KEYS]
        bucket = _local_bucket(spans, size).label("bucket")
        return select(bucket, *keys, *sum_columns()).where(usage_filter.where()).group_by(bucket, *keys)
    bucket = _local_bucket(spans, size, hourly.c.hour * HOUR_MS).label("bucket")
    outer_keys = [hourly.c[name] for name in _KEYS]
    sums = [func.sum(hourly.c[name]).label(name) for name in Counts.model_fields]
    return select(bucket, *outer_keys, *sums).group_by(bucket, *outer_keys)


def counts_query(usage_filter: UsageFilter, full: bool = False) -> Select[Any]:
    """One ungrouped row of `Counts` (or `Totals` when `full`), from usage_hourly where it can."""
    hourly = _hourly(usage_filter, full)
    if hourly is None:
        return select(*sum_columns(full)).where(usage_filter.where())
    fields = Totals.model_fields if full else Counts.model_fields
    return select(*(func.sum(hourly.c[name]).label(name) for name in fields))
