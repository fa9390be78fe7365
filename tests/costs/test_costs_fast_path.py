"""The dashboard's fast path (rollups, edge hours on ix_usage_hour, the partial index for estimated
rows) gives the figures a plain query over the usage rows gives, for each of two people's rows."""

from __future__ import annotations

import statistics
from typing import Any

import pytest
from sqlalchemy import Engine, event, func, select, text, true, update

from yiem.costs import UsageFilter, _queries, _sql, dashboard, data_range, medians
from yiem.store import create_store_engine, seed_demo, usage

TZ = "Europe/Paris"
END_MS = 1_796_000_000_000
OWNERS = ("local", "bob")


def _seeded(url: str) -> Engine:
    engine = create_store_engine(url)
    seed_demo(engine, 2_000, days=40, end_ms=END_MS)
    seed_demo(engine, 1_500, days=40, end_ms=END_MS - 1_234_567, seed=11, owner="bob")
    with engine.begin() as conn:  # some replies stopped mid-stream, of both people
        conn.execute(update(usage).where(usage.c.id % 7 == 0).values(estimated=True))
    return engine


def _plain(engine: Engine, usage_filter: UsageFilter) -> dict[str, Any]:
    """The same figures straight from the rows, one Python pass, no rollup and no index hint."""
    c = usage.c
    query = select(
        c.created_ms,
        c.provider,
        c.model,
        c.conversation_id,
        c.price_known,
        c.cost_total,
        c.input_tokens,
        c.latency_ms,
        c.estimated,
    ).where(
        c.owner == usage_filter.owner,
        c.created_ms >= usage_filter.start_ms,
        c.created_ms < usage_filter.end_ms,
    )
    with engine.connect() as conn:
        rows = conn.execute(query).all()
    per_conversation: dict[Any, float] = {}
    for r in rows:
        per_conversation[r.conversation_id] = per_conversation.get(r.conversation_id, 0.0) + (
            r.cost_total if r.price_known else 0.0
        )
    return {
        "requests": len(rows),
        "input_tokens": sum(r.input_tokens for r in rows),
        "cost": round(sum(r.cost_total for r in rows if r.price_known), 9),
        "estimated": sum(1 for r in rows if r.estimated),
        "median_latency": statistics.median(r.latency_ms for r in rows if r.latency_ms is not None),
        "top": sorted((round(v, 9), k or "") for k, v in per_conversation.items())[-5:],
    }


def _fast(engine: Engine, usage_filter: UsageFilter) -> dict[str, Any]:
    page = dashboard(engine, usage_filter, TZ, top_limit=1_000)
    now = page.headline.current
    return {
        "requests": now.totals.requests,
        "input_tokens": now.totals.input_tokens,
        "cost": round(now.totals.cost_total, 9),
        "estimated": page.estimated_requests,
        "median_latency": now.median_latency_ms,
        "top": sorted((round(r.totals.cost_total, 9), r.key) for r in page.top_conversations)[-5:],
    }


def test_dashboard_figures_equal_a_plain_query_for_each_owner(any_store_url: str) -> None:
    engine = _seeded(any_store_url)
    for owner in OWNERS:
        found = data_range(engine, UsageFilter(owner=owner))
        assert found is not None
        filters = [
            UsageFilter(start_ms=found[0], end_ms=found[1], owner=owner),  # "all time": partial end hours
            UsageFilter(start_ms=END_MS - 10 * 86_400_000 + 777, end_ms=END_MS - 1_111, owner=owner),
        ]
        for usage_filter in filters:
            plain = _plain(engine, usage_filter)
            assert plain["requests"] > 100 and plain["estimated"] > 0
            assert _fast(engine, usage_filter) == plain, (owner, usage_filter)
    engine.dispose()


def test_edge_hours_and_estimated_rows_are_not_read_through_the_owner_alone(tmp_path: Any) -> None:
    """The owner condition alone made SQLite walk every row of that person for each partial edge
    hour and for the estimated count (Costs "all time" at 1M rows went from 0.7 s to 1.9 s)."""
    engine = _seeded(f"sqlite:///{tmp_path}/plan.db")
    usage_filter = UsageFilter(start_ms=END_MS - 10 * 86_400_000 + 777, end_ms=END_MS - 1_111)
    edge = _sql._raw_hours(UsageFilter(start_ms=END_MS - 1_000_000, end_ms=END_MS - 1_111), full=False)
    estimated = (
        select(func.count())
        .select_from(usage)
        .where(usage_filter.where(name_index=False), usage.c.estimated == true())
    )
    with engine.connect() as conn:
        for query, index in ((edge, "ix_usage_hour"), (estimated, "ix_usage_estimated")):
            sql = str(query.compile(engine, compile_kwargs={"literal_binds": True}))
            plan = " ".join(str(r[-1]) for r in conn.execute(text("EXPLAIN QUERY PLAN " + sql)))
            assert index in plan and "ix_usage_owner_created" not in plan, plan
    engine.dispose()


def test_a_large_range_takes_its_median_sample_from_every_sixteenth_row(
    any_store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above 16 x MEDIAN_SAMPLE requests the sample is every k-th row by id with k a multiple of 16,
    read (on SQLite, checked here) from ix_usage_sample alone: at 10M rows on PostgreSQL the sample
    walked the whole range (0.9 s for "all time"), now a sixteenth of it (0.1 s)."""
    engine = _seeded(any_store_url)
    monkeypatch.setattr(_queries, "MEDIAN_SAMPLE", 40)  # 2,000 requests of "local": every 50th, made 64th
    statements: list[tuple[str, Any]] = []

    def record(conn: Any, cursor: Any, statement: str, parameters: Any, *args: Any) -> None:
        if "latency_ms" in statement:
            statements.append((statement, parameters))

    event.listen(engine, "before_cursor_execute", record)
    found = medians(engine, UsageFilter(start_ms=0, end_ms=END_MS + 1))
    event.remove(engine, "before_cursor_execute", record)
    assert len(statements) == 1
    c = usage.c
    with engine.connect() as conn:
        sample = conn.execute(select(c.latency_ms, c.ttft_ms).where(c.owner == "local", c.id % 64 == 0)).all()
    assert 20 <= len(sample) <= 40
    assert found == (
        statistics.median(r.latency_ms for r in sample),
        statistics.median(r.ttft_ms for r in sample if r.ttft_ms is not None),
    )
    if engine.dialect.name == "sqlite":
        statement, parameters = statements[0]
        with engine.connect() as conn:
            plan = " ".join(
                str(r[-1]) for r in conn.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters)
            )
        assert "COVERING INDEX ix_usage_sample" in plan, plan
    engine.dispose()
