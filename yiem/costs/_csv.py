"""The usage rows and the breakdown tables as CSV text."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, select

from yiem.amounts import csv_dollars
from yiem.costs._models import BreakdownRow
from yiem.costs._periods import UsageFilter
from yiem.store import usage

EXPORT_COLUMNS = [c.name for c in usage.c]


def iter_rows(
    engine: Engine, usage_filter: UsageFilter, chunk_size: int = 10_000
) -> Iterator[list[dict[str, Any]]]:
    """The filtered rows in time order, `chunk_size` at a time (server-side cursor where supported)."""
    query = select(usage).where(usage_filter.where()).order_by(usage.c.created_ms, usage.c.id)
    with engine.connect() as conn:
        result = conn.execution_options(stream_results=True, yield_per=chunk_size).execute(query)
        for part in result.partitions(chunk_size):
            yield [dict(r._mapping) for r in part]


def iter_csv(engine: Engine, usage_filter: UsageFilter, chunk_size: int = 10_000) -> Iterator[str]:
    """The filtered rows as CSV text in chunks, header first; times also given as ISO 8601 UTC."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["created_utc", *EXPORT_COLUMNS])
    yield buffer.getvalue()
    for chunk in iter_rows(engine, usage_filter, chunk_size):
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
                csv_dollars(t.cost_total),
                t.unpriced_requests,
            ]
        )
    return buffer.getvalue()
