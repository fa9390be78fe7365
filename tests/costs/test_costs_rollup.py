"""The rollups (usage_hourly, usage_conversation_hourly, usage_per_conversation): sums of the usage
table kept by triggers, the migrations that fill them, and the page's figures read from them."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import pytest
from sqlalchemy import Engine, case, func, insert, literal_column, select, text, update

from tests.fixtures.costs import KNOWN_ROWS, gpt_4o_turn, usage_row, utc_ms
from yiem.costs import (
    UsageFilter,
    _queries,
    _sql,
    counts,
    local_day_range,
    summarize,
    top_conversations,
    totals,
)
from yiem.store import (
    SCHEMA_VERSION,
    ConversationStore,
    create_store_engine,
    current_schema_version,
    seed_demo,
    usage,
    usage_conversation_hourly,
    usage_hourly,
    usage_per_conversation,
)
from yiem.types import AssistantMessage, LlmModel, LlmUsage, ModelCost, TextContent

HOUR_MS = 3_600_000
KEYS = ("hour", "provider", "model", "stop_reason", "owner")
SUMS = [c.name for c in usage_hourly.c if c.name not in KEYS]
PRICED = LlmModel(
    id="gpt-test",
    provider="openai",
    cost=ModelCost(input=2.0, output=8.0, cache_read=0.5, cache_write=0.0),
    price_known=True,
)
UNPRICED = LlmModel(id="smollm2", provider="local", price_known=False)


def _rollup(engine: Engine) -> dict[tuple[Any, ...], dict[str, Any]]:
    """usage_hourly as {(hour, provider, model, stop reason, owner): sums}, costs rounded to 1e-9."""
    with engine.connect() as conn:
        rows = conn.execute(select(usage_hourly)).mappings().all()
    return {
        tuple(r[key] for key in KEYS): {
            name: round(float(r[name]), 9) if name.startswith("cost") else int(r[name]) for name in SUMS
        }
        for r in rows
    }


def _raw(engine: Engine) -> dict[tuple[Any, ...], dict[str, Any]]:
    """The same sums computed from the usage rows, as the migration's refill would."""
    c = usage.c
    priced = c.price_known.is_(True)
    unpriced_tokens = c.input_tokens + c.output_tokens + c.cache_read_tokens + c.cache_write_tokens
    hour = c.created_ms // HOUR_MS
    query = select(
        hour.label("hour"),
        c.provider,
        c.model,
        c.stop_reason,
        c.owner,
        func.count().label("requests"),
        *(func.sum(c[name]).label(name) for name in SUMS if name.endswith("_tokens") and name in c),
        *(
            func.sum(case((priced, c[name]), else_=0.0)).label(name)
            for name in SUMS
            if name.startswith("cost")
        ),
        func.sum(case((priced, 0), else_=1)).label("unpriced_requests"),
        func.sum(case((priced, 0), else_=unpriced_tokens)).label("unpriced_tokens"),
    ).group_by(hour, c.provider, c.model, c.stop_reason, c.owner)
    with engine.connect() as conn:
        rows = conn.execute(query).mappings().all()
    return {
        tuple(r[key] for key in KEYS): {
            name: round(float(r[name]), 9) if name.startswith("cost") else int(r[name]) for name in SUMS
        }
        for r in rows
    }


def _per_conversation(engine: Engine) -> tuple[dict[Any, Any], dict[Any, Any]]:
    """usage_per_conversation and the same sums from the rows: {(owner, conversation): (requests, $)}."""
    c = usage.c
    conversation = func.coalesce(c.conversation_id, literal_column("''"))
    raw = select(
        c.owner,
        conversation.label("conversation_id"),
        func.count().label("requests"),
        func.sum(case((c.price_known.is_(True), c.cost_total), else_=0.0)).label("cost_total"),
    ).group_by(c.owner, conversation)
    with engine.connect() as conn:
        kept, summed = (
            {
                (r.owner, r.conversation_id): (int(r.requests), round(float(r.cost_total), 9))
                for r in conn.execute(q)
            }
            for q in (select(usage_per_conversation), raw)
        )
    return kept, summed


def _reply(at: str, stop_reason: str = "end_turn", error: str | None = None) -> AssistantMessage:
    return AssistantMessage(
        content=[TextContent(text="hi")],
        api="openai-completions",
        provider="openai",
        model="gpt-test",
        usage=LlmUsage(input_tokens=1000, output_tokens=500, cache_read_tokens=200, reasoning_tokens=50),
        stop_reason=stop_reason,  # type: ignore[arg-type]
        error_message=error,
        timestamp=datetime.fromisoformat(at + "+00:00").astimezone(UTC),
    )


def test_rollup_sums_every_kind_of_insert_by_hand(any_store_url: str) -> None:
    """Bulk rows, single rows and the store's appends all land in usage_hourly, hand-checked."""
    engine = create_store_engine(any_store_url)
    with engine.begin() as conn:
        conn.execute(insert(usage), KNOWN_ROWS)  # one multi-row statement
        conn.execute(insert(usage).values(**gpt_4o_turn("2026-10-24T21:59:59", 900.0, 100.0)))
    store = ConversationStore(engine)
    conversation = store.create()
    store.append_message(conversation.id, _reply("2026-10-24T21:05:00"), PRICED)
    store.append_message(conversation.id, _reply("2026-10-24T21:06:00"), PRICED)
    unpriced = _reply("2026-10-26T10:30:00", "error", "HTTP 500").model_copy(
        update={"provider": "local", "model": "smollm2"}
    )
    store.append_message(conversation.id, unpriced, UNPRICED)

    rollup = _rollup(engine)
    hour = utc_ms("2026-10-24T21:00:00") // HOUR_MS
    # Two gpt-4o turns of $0.01125 (1000 fresh, 3000 cached, 500 out) in the hour 21:00 UTC.
    assert rollup[(hour, "openai", "gpt-4o", "end_turn", "local")] == {
        "requests": 2,
        "input_tokens": 2000,
        "output_tokens": 1000,
        "cache_read_tokens": 6000,
        "cache_write_tokens": 0,
        "reasoning_tokens": 0,
        "cost_total": 0.0225,
        "cost_input": 0.005,
        "cost_output": 0.01,
        "cost_cache_read": 0.0075,
        "cost_cache_write": 0.0,
        "unpriced_requests": 0,
        "unpriced_tokens": 0,
    }
    # Two appended replies: 1000 in x $2 + 500 out x $8 + 200 cached x $0.5 per 1M = $0.0061 each.
    appended = rollup[(hour, "openai", "gpt-test", "end_turn", "local")]
    assert (appended["requests"], appended["input_tokens"], appended["reasoning_tokens"]) == (2, 2000, 100)
    assert appended["cost_total"] == pytest.approx(0.0122)
    # The Ollama row has no price: no dollars, its 700 tokens counted apart.
    ollama = rollup[(utc_ms("2026-10-25T22:00:00") // HOUR_MS, "ollama", "qwen2.5:7b", "end_turn", "local")]
    assert (ollama["requests"], ollama["cost_total"], ollama["unpriced_requests"]) == (1, 0.0, 1)
    assert ollama["unpriced_tokens"] == 700
    # The failed request of 10:00 UTC and the failed unpriced append of 10:30 are in one hour, two keys.
    error_hour = utc_ms("2026-10-26T10:00:00") // HOUR_MS
    assert rollup[(error_hour, "openai", "gpt-4o", "error", "local")]["requests"] == 1
    local = rollup[(error_hour, "local", "smollm2", "error", "local")]
    assert (local["requests"], local["unpriced_tokens"], local["cost_total"]) == (1, 1700, 0.0)
    assert sum(r["requests"] for r in rollup.values()) == len(KNOWN_ROWS) + 1 + 3
    assert rollup == _raw(engine)
    kept, summed = _per_conversation(engine)
    assert kept == summed
    assert kept[("local", conversation.id)] == (3, 0.0122)  # the unpriced append adds no dollars


def test_rollup_equals_the_rows_after_a_demo_seed_and_appends(any_store_url: str) -> None:
    engine = create_store_engine(any_store_url)
    seed_demo(engine, 3_000, days=20, end_ms=utc_ms("2026-11-01T00:00:00"))
    store = ConversationStore(engine)
    conversation = store.create()
    for minute in range(0, 120, 7):
        store.append_message(
            conversation.id, _reply(f"2026-10-31T{10 + minute // 60}:{minute % 60:02d}:00"), PRICED
        )
    seed_demo(engine, 500, days=3, end_ms=utc_ms("2026-11-01T00:00:00"), seed=8)
    rollup = _rollup(engine)
    assert sum(r["requests"] for r in rollup.values()) == 3_000 + 18 + 500
    assert rollup == _raw(engine)
    kept, summed = _per_conversation(engine)
    assert kept == summed and len(kept) > 100


def test_migration_fills_the_rollup_from_existing_rows(any_store_url: str) -> None:
    """A version-3 database (no rollups) gets them filled, and later inserts count once."""
    engine = create_store_engine(any_store_url)
    with engine.begin() as conn:
        conn.execute(insert(usage), KNOWN_ROWS)
        conn.execute(insert(usage), [gpt_4o_turn("2026-10-24T21:10:00", 1.0, 1.0)] * 3)
        for rollup in ("usage_hourly", "usage_conversation_hourly", "usage_per_conversation"):
            if conn.dialect.name == "postgresql":
                conn.execute(text(f"DROP TRIGGER {rollup}_add ON usage"))
                conn.execute(text(f"DROP FUNCTION {rollup}_add()"))
            else:
                conn.execute(text(f"DROP TRIGGER {rollup}_add"))
            conn.execute(text(f"DROP TABLE {rollup}"))
        conn.execute(text("UPDATE schema_version SET version = 3"))
        # Rows written by a yiem of version 3, which had no rollup.
        conn.execute(insert(usage), [gpt_4o_turn("2026-10-24T21:20:00", 1.0, 1.0)])
    engine.dispose()

    migrated = create_store_engine(any_store_url)
    with migrated.connect() as conn:
        assert current_schema_version(conn) == SCHEMA_VERSION
    hour = (utc_ms("2026-10-24T21:00:00") // HOUR_MS, "openai", "gpt-4o", "end_turn", "local")
    assert _rollup(migrated)[hour]["requests"] == 5  # KNOWN_ROWS' first, three, and one more
    assert _rollup(migrated)[hour]["cost_total"] == pytest.approx(5 * 0.01125)
    with migrated.begin() as conn:
        conn.execute(insert(usage).values(**gpt_4o_turn("2026-10-24T21:30:00", 1.0, 1.0)))
    assert _rollup(migrated)[hour]["requests"] == 6
    assert _rollup(migrated) == _raw(migrated)
    kept, summed = _per_conversation(migrated)
    assert kept == summed and kept[("local", "conv-a")][0] == 3 + 5
    # conv-a: KNOWN_ROWS has one request at 21:30 UTC on the 24th, one at 22:30, one on the 26th;
    # the five gpt-4o turns added at 21:10-21:30 belong to conv-a too.
    with migrated.connect() as conn:
        per_conversation = {
            (r.conversation_id, r.hour): (r.requests, round(r.cost_total, 6), r.last_ms)
            for r in conn.execute(select(usage_conversation_hourly))
            if r.conversation_id == "conv-a"
        }
    assert per_conversation == {
        ("conv-a", hour[0]): (6, 0.0675, utc_ms("2026-10-24T21:30:00")),
        ("conv-a", hour[0] + 1): (1, 0.02475, utc_ms("2026-10-24T22:30:00")),
        ("conv-a", utc_ms("2026-10-26T12:00:00") // HOUR_MS): (1, 0.01125, utc_ms("2026-10-26T12:00:00")),
    }
    # Opening it again migrates nothing and counts nothing twice.
    create_store_engine(any_store_url).dispose()
    assert _rollup(migrated)[hour]["requests"] == 6


def test_the_page_reads_whole_hours_from_the_rollup_and_edges_from_the_rows(
    any_store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = create_store_engine(any_store_url)
    with engine.begin() as conn:
        conn.execute(insert(usage), KNOWN_ROWS)
        conn.execute(
            insert(usage).values(**usage_row(created_ms=utc_ms("2026-10-26T12:40:00"), cost_input=1.0))
        )
    # A range from 21:15 on the 24th to 12:30 on the 26th (UTC): partial hours at both ends.
    usage_filter = UsageFilter(start_ms=utc_ms("2026-10-24T21:15:00"), end_ms=utc_ms("2026-10-26T12:30:00"))
    assert counts(engine, usage_filter).requests == 5  # 21:30 (edge), 22:30, 22:30, 10:00, 12:00 (edge)
    assert totals(engine, usage_filter).cost_total == pytest.approx(0.01125 + 0.02475 + 0.01125)
    assert counts(engine, UsageFilter()).requests == 6  # an open range reads the rows

    # A sum changed in usage_hourly alone shows: whole hours are read from there, not from the rows.
    with engine.begin() as conn:
        conn.execute(
            update(usage_hourly)
            .where(usage_hourly.c.stop_reason == "tool_calls")
            .values(requests=usage_hourly.c.requests + 10)
        )
    assert counts(engine, usage_filter).requests == 15
    days = local_day_range(date(2026, 10, 25), date(2026, 10, 26), "Europe/Paris")
    assert summarize(engine, UsageFilter(*days), "Europe/Paris").counts().requests == 5 + 10
    # A conversation filter reads the rows: the change does not show there.
    assert counts(engine, UsageFilter(*days, conversation_id="conv-a")).requests == 2
    monkeypatch.setattr(_sql, "_hourly", lambda usage_filter, full=False: None)
    assert counts(engine, usage_filter).requests == 5


def test_top_conversations_from_the_rollup_equal_the_rows(
    any_store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With partial hours at both ends and every filter, the rollup's top conversations are the rows'."""
    engine = create_store_engine(any_store_url)
    end_ms = utc_ms("2026-11-01T00:00:00")
    seed_demo(engine, 3_000, days=20, end_ms=end_ms, price_of=lambda p, m: ModelCost(input=1, output=2))
    with engine.begin() as conn:
        conn.execute(insert(usage), KNOWN_ROWS)  # conversation-less and unpriced rows too
    store = ConversationStore(engine)
    conversation = store.create()
    for minute in range(0, 50, 5):
        store.append_message(conversation.id, _reply(f"2026-10-31T12:{minute:02d}:00"), PRICED)
    filters = [
        UsageFilter(start_ms=end_ms - 20 * 86_400_000 + 1_234, end_ms=end_ms - 777),
        UsageFilter(start_ms=utc_ms("2026-10-31T11:20:00"), end_ms=utc_ms("2026-10-31T13:00:00")),
        UsageFilter(start_ms=utc_ms("2026-10-20T00:00:00"), end_ms=end_ms, providers=("openai",)),
        UsageFilter(start_ms=utc_ms("2026-10-24T21:15:00"), end_ms=end_ms, models=("gpt-4o", "qwen2.5:7b")),
        UsageFilter(start_ms=utc_ms("2026-10-24T00:00:00"), end_ms=end_ms, conversation_id="conv-a"),
    ]

    def table(usage_filter: UsageFilter) -> list[Any]:
        rows = top_conversations(engine, usage_filter, limit=1_000)
        return [
            (r.conversation_id, r.last_ms, r.totals.requests, r.totals.errors, round(r.totals.cost_total, 9))
            for r in rows
        ]

    fast = [table(usage_filter) for usage_filter in filters]
    monkeypatch.setattr(_sql, "_split_hours", lambda usage_filter: None)
    slow = [table(usage_filter) for usage_filter in filters]
    assert len(fast[0]) > 100
    # The replies of 12:00 to 12:45: ten of $0.0061 (see test_rollup_sums_every_kind_of_insert_by_hand).
    assert (conversation.id, utc_ms("2026-10-31T12:45:00"), 10, 0, 0.061) in fast[1]
    assert fast[4] == [("conv-a", utc_ms("2026-10-26T12:00:00"), 3, 0, 0.04725)]
    assert fast == slow


def test_top_conversations_among_the_costliest_equal_summing_every_conversation(
    any_store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The top taken among the conversations that cost the most over all time (one person's or the
    team's) is the top of summing every conversation, whether those candidates settle it or not."""
    engine = create_store_engine(any_store_url)
    end_ms = utc_ms("2026-11-01T00:00:00")
    seed_demo(engine, 3_000, days=20, end_ms=end_ms)  # the catalogue's prices: local models cost nothing
    seed_demo(engine, 1_000, days=20, end_ms=end_ms - 1_234_567, seed=11, owner="bob")
    t = usage_per_conversation.c
    ranked = select(t.conversation_id, t.cost_total).where(t.owner == "local").order_by(t.cost_total.desc())
    with engine.connect() as conn:
        costliest = conn.execute(ranked).all()
    with engine.begin() as conn:
        conn.execute(insert(usage), KNOWN_ROWS)  # conversation-less and unpriced rows too
        # Bob's requests in three of local's middling conversations: the team's top is not either's.
        conn.execute(
            insert(usage),
            [
                usage_row(
                    created_ms=end_ms - 2 * 86_400_000 + i,
                    conversation_id=costliest[30 + i].conversation_id,
                    cost_input=costliest[0].cost_total / 2,
                    owner="bob",
                )
                for i in range(3)
            ],
        )
    days = 86_400_000
    filters = [
        UsageFilter(start_ms=end_ms - 20 * days + 1_234, end_ms=end_ms - 777),  # partial end hours
        UsageFilter(start_ms=end_ms - 3 * days, end_ms=end_ms),
        UsageFilter(start_ms=end_ms - 10 * days, end_ms=end_ms, providers=("anthropic",)),
        UsageFilter(start_ms=end_ms - 20 * days, end_ms=end_ms, models=("smollm2", "qwen2.5:7b")),
        UsageFilter(start_ms=end_ms - 20 * days + 1_234, end_ms=end_ms - 777, owner=None),  # the team
        UsageFilter(start_ms=end_ms - 15 * days, end_ms=end_ms - 777, owner="bob"),
    ]
    settled: list[bool] = []
    among_costliest = _queries._top_among_costliest

    def spy(*args: Any) -> Any:
        found = among_costliest(*args)
        settled.append(found is not None)
        return found

    def table(usage_filter: UsageFilter, limit: int) -> list[Any]:
        return [
            (r.conversation_id, r.last_ms, r.totals.requests, round(r.totals.cost_total, 9))
            for r in top_conversations(engine, usage_filter, limit)
        ]

    monkeypatch.setattr(_queries, "_top_among_costliest", spy)
    monkeypatch.setattr(_queries, "MIN_CANDIDATES", 1)
    monkeypatch.setattr(_queries, "CANDIDATE_ROUNDS", (2, 6))
    fast = {(i, limit): table(f, limit) for i, f in enumerate(filters) for limit in (1, 5, 20)}
    monkeypatch.setattr(_queries, "CANDIDATE_ROUNDS", ())  # every conversation summed
    slow = {(i, limit): table(filters[i], limit) for i, limit in fast}
    assert fast == slow
    assert all(len(rows) == limit for (_, limit), rows in fast.items())
    assert set(settled) == {True, False}  # both ways were taken


def test_the_teams_top_sums_a_conversation_over_everyone_in_it(
    any_store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A conversation with two people's requests ranks by their sum on the team's page, though each
    part alone is outside the candidates: the candidates are the team's costliest, not a person's."""
    engine = create_store_engine(any_store_url)
    start = utc_ms("2026-10-20T00:00:00")
    rows = [
        usage_row(created_ms=start + i * 60_000, conversation_id=f"c{i}", cost_input=float(i), owner="local")
        for i in range(1, 101)
    ]
    rows += [  # every row names its owner: an executemany takes its columns from the first row
        usage_row(created_ms=start + 30_000, conversation_id="shared", cost_input=60.5, owner="local"),
        usage_row(created_ms=start + 90_000, conversation_id="shared", cost_input=60.5, owner="bob"),
    ]
    with engine.begin() as conn:
        conn.execute(insert(usage), rows)
    monkeypatch.setattr(_queries, "MIN_CANDIDATES", 1)
    monkeypatch.setattr(_queries, "CANDIDATE_ROUNDS", (2,))
    team = UsageFilter(start_ms=start - 777, end_ms=start + 86_400_000, owner=None)
    assert [r.conversation_id for r in top_conversations(engine, team, 3)] == ["shared", "c100", "c99"]
    assert top_conversations(engine, team, 1)[0].totals.cost_total == pytest.approx(121.0)
    mine = UsageFilter(start_ms=start - 777, end_ms=start + 86_400_000)
    assert [r.conversation_id for r in top_conversations(engine, mine, 2)] == ["c100", "c99"]
