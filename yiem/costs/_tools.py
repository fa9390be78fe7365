"""Spending per tool call: the usage rows charged to an MCP tool or server (`usage.tool`).

A Chat request that carried tool results to the model is charged to those tools (a tool's result
is paid for in the request that reads it); a server's sampling request to the person's model is
charged to that server.
"""

from __future__ import annotations

from sqlalchemy import Engine, select

from yiem.costs._models import BreakdownRow
from yiem.costs._periods import UsageFilter
from yiem.costs._sql import read_counts, sum_columns
from yiem.store import SAMPLING_SOURCE, usage


def tool_costs(engine: Engine, usage_filter: UsageFilter) -> list[BreakdownRow]:
    """`usage_filter`'s requests charged to a tool or a server, summed per each, most expensive first."""
    c = usage.c
    query = (
        select(c.tool, c.source, *sum_columns())
        .where(usage_filter.where(), c.tool.is_not(None))
        .group_by(c.tool, c.source)
    )
    found = []
    with engine.connect() as conn:
        for row in conn.execute(query):
            sampling = row.source == SAMPLING_SOURCE
            found.append(
                BreakdownRow(
                    key=f"sampling:{row.tool}" if sampling else row.tool,
                    label=f"Sampling for {row.tool}" if sampling else row.tool,
                    totals=read_counts(row._mapping),
                )
            )
    return sorted(found, key=lambda r: (-r.totals.cost_total, -r.totals.requests, r.key))
