"""The Costs page's aggregations against a store of hand-made rows with hand-computed figures."""

from __future__ import annotations

import csv
import io
from dataclasses import replace
from datetime import date, datetime
from typing import Any

import pytest
from sqlalchemy import Engine, insert

from tests.fixtures.costs import KNOWN_ROWS, QUIZ_ID, add_quiz, usage_row, utc_ms
from yiem.costs import (
    Counts,
    UsageFilter,
    UsageFilterError,
    _queries,
    _sql,
    breakdown_csv,
    counts,
    dashboard,
    estimated_requests,
    experiment_options,
    filter_options,
    headline,
    iter_csv,
    iter_rows,
    local_day_range,
    medians,
    offset_transitions,
    period_range,
    summarize,
    top_conversations,
    totals,
)
from yiem.store import create_store_engine, seed_demo, usage
from yiem.types import ModelCost

PARIS = "Europe/Paris"


def paris_days() -> UsageFilter:
    """25 and 26 October 2026 in Paris: 49 hours, since the clocks went back on the 25th."""
    start, end = local_day_range(date(2026, 10, 25), date(2026, 10, 26), PARIS)
    return UsageFilter(start_ms=start, end_ms=end)


def test_local_day_range_spans_the_extra_hour_of_the_dst_change() -> None:
    start, end = local_day_range(date(2026, 10, 25), date(2026, 10, 26), PARIS)
    assert start == utc_ms("2026-10-24T22:00:00")
    assert end == utc_ms("2026-10-26T23:00:00")
    assert end - start == 49 * 3_600_000


def test_offset_transitions_pin_the_change_to_the_millisecond() -> None:
    spans = offset_transitions(PARIS, utc_ms("2026-10-20T00:00:00"), utc_ms("2026-10-30T00:00:00"))
    assert spans == [(utc_ms("2026-10-20T00:00:00"), 7_200_000), (utc_ms("2026-10-25T01:00:00"), 3_600_000)]
    # Kathmandu is 5:45 ahead all year: one span, no change.
    start = utc_ms("2026-01-01T00:00:00")
    assert offset_transitions("Asia/Kathmandu", start, start + 400 * 86_400_000) == [(start, 20_700_000)]


def test_headline(known_usage: Engine) -> None:
    change = headline(known_usage, paris_days())
    now = change.current.totals
    assert now.requests == 4
    assert now.errors == 1
    assert now.error_rate == pytest.approx(0.25)
    assert (now.input_tokens, now.cache_read_tokens, now.cache_write_tokens, now.output_tokens) == (
        3500,
        3000,
        1000,
        1700,
    )
    # 3000 of 7500 input tokens (fresh 3500 + cache reads 3000 + cache writes 1000) came from the cache.
    assert now.cache_share == pytest.approx(0.4)
    # Claude $0.02475 + gpt-4o $0.01125; the Ollama request has no price and is not counted as $0.
    assert round(now.cost_total, 2) == 0.04
    assert now.cost_total == pytest.approx(0.036)
    assert now.cost_cache_write == pytest.approx(0.00375)
    assert now.cost_cache_read == pytest.approx(0.00375)
    assert (now.unpriced_requests, now.unpriced_tokens) == (1, 700)
    # Latencies 100, 1500, 2000, 4000 -> 1750; first tokens 400, 500, 800 (the error has none) -> 500.
    assert change.current.median_latency_ms == 1750.0
    assert change.current.median_ttft_ms == 500.0

    assert change.previous is not None
    before = change.previous.totals
    assert (before.requests, before.cost_total) == (1, pytest.approx(0.01125))
    assert change.previous.median_latency_ms == 1200.0
    assert change.change("cost_total") == pytest.approx((0.036 - 0.01125) / 0.01125)
    assert change.change("requests") == pytest.approx(3.0)
    assert change.change("median_latency_ms") == pytest.approx(1750 / 1200 - 1)
    assert change.change("errors") is None  # nothing to compare with: no errors before


def test_headline_with_open_range_has_no_previous_period(known_usage: Engine) -> None:
    change = headline(known_usage, UsageFilter())
    assert change.current.totals.requests == len(KNOWN_ROWS)
    assert change.previous is None
    assert change.change("cost_total") is None


def test_days_in_paris_across_the_dst_change(known_usage: Engine) -> None:
    summary = summarize(known_usage, paris_days(), PARIS, "day")
    per_day: dict[date, tuple[int, float]] = {}
    for row in summary.rows:
        requests, cost = per_day.get(row.bucket.date(), (0, 0.0))
        per_day[row.bucket.date()] = (requests + row.totals.requests, cost + row.totals.cost_total)
    # 00:30 and 23:30 local on the 25th (UTC: the 24th and the 25th); 11:00 and 13:00 on the 26th.
    assert per_day == {
        date(2026, 10, 25): (2, pytest.approx(0.02475)),
        date(2026, 10, 26): (2, pytest.approx(0.01125)),
    }


def test_days_in_utc_differ(known_usage: Engine) -> None:
    start, end = utc_ms("2026-10-24T00:00:00"), utc_ms("2026-10-27T00:00:00")
    summary = summarize(known_usage, UsageFilter(start_ms=start, end_ms=end), "UTC", "day")
    days = sorted({(row.bucket.date(), row.model) for row in summary.rows})
    assert days == [
        (date(2026, 10, 24), "claude-sonnet-4-20250514"),
        (date(2026, 10, 24), "gpt-4o"),
        (date(2026, 10, 25), "qwen2.5:7b"),
        (date(2026, 10, 26), "gpt-4o"),
    ]


def test_hours_follow_local_clock_and_merge_the_repeated_hour(any_store_url: str) -> None:
    engine = create_store_engine(any_store_url)
    rows = [
        usage_row(created_ms=utc_ms("2026-10-25T00:30:00"), cost_input=0.01),  # 02:30 CEST
        usage_row(created_ms=utc_ms("2026-10-25T01:30:00"), cost_input=0.02),  # 02:30 CET, same wall hour
        usage_row(created_ms=utc_ms("2026-10-25T02:10:00"), cost_input=0.04),  # 03:10 CET
    ]
    with engine.begin() as conn:
        conn.execute(insert(usage), rows)
    start, end = local_day_range(date(2026, 10, 25), date(2026, 10, 25), PARIS)
    summary = summarize(engine, UsageFilter(start_ms=start, end_ms=end), PARIS)
    assert summary.granularity == "hour"
    hours = {row.bucket: (row.totals.requests, round(row.totals.cost_total, 2)) for row in summary.series()}
    assert hours == {
        datetime(2026, 10, 25, 2): (2, 0.03),
        datetime(2026, 10, 25, 3): (1, 0.04),
    }


def test_breakdowns_by_provider_model_and_stop_reason(known_usage: Engine) -> None:
    summary = summarize(known_usage, paris_days(), PARIS)
    by_provider = summary.breakdown("provider")
    providers = {r.key: (r.totals.requests, round(r.totals.cost_total, 5)) for r in by_provider}
    assert providers == {"anthropic": (1, 0.02475), "openai": (2, 0.01125), "ollama": (1, 0.0)}
    assert [r.key for r in summary.breakdown("provider")] == ["anthropic", "openai", "ollama"]
    models = {r.key: r for r in summary.breakdown("model")}
    assert set(models) == {"anthropic/claude-sonnet-4-20250514", "openai/gpt-4o", "ollama/qwen2.5:7b"}
    assert models["openai/gpt-4o"].totals.errors == 1
    assert models["ollama/qwen2.5:7b"].totals.unpriced_requests == 1
    assert models["ollama/qwen2.5:7b"].label == "qwen2.5:7b"
    stops = {r.key: r.totals.requests for r in summary.breakdown("stop_reason")}
    assert stops == {"end_turn": 2, "tool_calls": 1, "error": 1}
    full = totals(known_usage, paris_days())
    assert summary.counts() == Counts(**{name: getattr(full, name) for name in Counts.model_fields})


def test_top_conversations_with_titles(known_usage: Engine) -> None:
    rows = top_conversations(known_usage, paris_days(), limit=10)
    assert [(r.conversation_id, r.label, r.totals.requests) for r in rows] == [
        ("conv-a", "Plan the trip", 2),
        (None, "(no conversation)", 1),
        ("conv-b", "Local chat", 1),
    ]
    assert rows[0].totals.cost_total == pytest.approx(0.036)
    assert rows[0].last_ms == utc_ms("2026-10-26T12:00:00")
    assert len(top_conversations(known_usage, paris_days(), limit=1)) == 1


def test_filters_narrow_every_figure(known_usage: Engine) -> None:
    openai_only = replace(paris_days(), providers=("openai",))
    assert totals(known_usage, openai_only).requests == 2
    assert totals(known_usage, openai_only).cost_total == pytest.approx(0.01125)
    claude = replace(paris_days(), models=("claude-sonnet-4-20250514",))
    assert totals(known_usage, claude).cost_total == pytest.approx(0.02475)
    conv_a = UsageFilter(conversation_id="conv-a")
    assert totals(known_usage, conv_a).requests == 3
    assert totals(known_usage, conv_a).cost_total == pytest.approx(0.01125 + 0.02475 + 0.01125)
    assert filter_options(known_usage) == [
        ("anthropic", "claude-sonnet-4-20250514"),
        ("ollama", "qwen2.5:7b"),
        ("openai", "gpt-4o"),
    ]


def test_experiment_filter_narrows_every_figure(known_usage: Engine) -> None:
    assert experiment_options(known_usage) == []
    add_quiz(known_usage)
    assert experiment_options(known_usage) == [(QUIZ_ID, "quiz")]
    everything = totals(known_usage, paris_days())
    assert everything.requests == 4 + 3  # the experiment's rows count in the whole too
    quiz = replace(paris_days(), experiment_id=QUIZ_ID)
    # The reply $0.00075 and its judge $0.0002; the local model's reply is apart, not $0.
    found = totals(known_usage, quiz)
    assert (found.requests, found.unpriced_requests) == (3, 1)
    assert found.cost_total == pytest.approx(0.00095)
    assert found.input_tokens == 170 and found.unpriced_tokens == 50
    assert counts(known_usage, quiz).requests == 3
    assert counts(known_usage, UsageFilter(experiment_id=QUIZ_ID)).requests == 3  # open range too
    data = dashboard(known_usage, quiz, PARIS)
    assert data.summary.counts().requests == 3
    assert {(r.key, r.totals.requests) for r in data.summary.breakdown("model")} == {
        ("openai/gpt-4o", 2),
        ("llamacpp/smollm2", 1),
    }
    assert [(r.conversation_id, r.label) for r in data.top_conversations] == [
        ("exp-item-1", "v · q1"),
        (None, "(no conversation)"),  # the judge's call
        ("exp-item-2", "v · q2"),
    ]
    one_item = replace(quiz, conversation_id="exp-item-1")
    assert totals(known_usage, one_item).cost_total == pytest.approx(0.00075)
    assert [r["run_id"] for chunk in iter_rows(known_usage, quiz) for r in chunk] == ["run-1"] * 3
    assert totals(known_usage, replace(quiz, experiment_id="another")).requests == 0


def test_bad_filters_are_refused_in_words() -> None:
    with pytest.raises(UsageFilterError, match="ends before it starts"):
        UsageFilter(start_ms=10, end_ms=5)
    with pytest.raises(UsageFilterError, match="before it starts"):
        local_day_range(date(2026, 1, 2), date(2026, 1, 1), PARIS)
    with pytest.raises(UsageFilterError, match="Unknown time zone"):
        local_day_range(date(2026, 1, 1), date(2026, 1, 1), "Mars/Olympus")


def test_median_above_the_sample_size_stays_close(
    any_store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = create_store_engine(any_store_url)
    with engine.begin() as conn:
        rows = [usage_row(created_ms=i, latency_ms=float(i), ttft_ms=float(i % 100)) for i in range(2001)]
        conn.execute(insert(usage), rows)
    assert medians(engine, UsageFilter()) == (1000.0, 49.0)  # exact: under the sample size
    monkeypatch.setattr(_queries, "MEDIAN_SAMPLE", 100)
    latency, ttft = medians(engine, UsageFilter())
    assert latency is not None and abs(latency - 1000) <= 30
    assert ttft is not None and abs(ttft - 50) <= 5


def test_csv_streams_every_filtered_row_in_chunks(known_usage: Engine) -> None:
    chunks = list(iter_csv(known_usage, paris_days(), chunk_size=2))
    assert len(chunks) == 1 + 2  # the header, then 4 rows two at a time
    rows = list(csv.DictReader(io.StringIO("".join(chunks))))
    assert [r["model"] for r in rows] == ["claude-sonnet-4-20250514", "qwen2.5:7b", "gpt-4o", "gpt-4o"]
    assert rows[0]["created_utc"] == "2026-10-24T22:30:00.000+00:00"
    assert rows[1]["price_known"] == "false"
    assert rows[2]["error"] == "HTTP 429: Rate limit reached"
    assert rows[2]["ttft_ms"] == ""
    assert float(rows[0]["cost_total"]) == pytest.approx(0.02475)
    assert sum(len(chunk) for chunk in iter_rows(known_usage, paris_days(), chunk_size=3)) == 4


def test_breakdown_csv(known_usage: Engine) -> None:
    summary = summarize(known_usage, paris_days(), PARIS)
    rows = list(csv.DictReader(io.StringIO(breakdown_csv(summary.breakdown("provider"), "provider"))))
    assert rows[0]["provider"] == "anthropic"
    assert rows[0]["cost_usd"] == "0.024750"
    assert rows[2]["unpriced_requests"] == "1"


def test_named_periods_are_whole_local_days_ending_today() -> None:
    now = utc_ms("2026-10-26T22:30:00")  # 23:30 on the 26th in Paris
    assert period_range("7d", PARIS, now) == local_day_range(date(2026, 10, 20), date(2026, 10, 26), PARIS)
    assert period_range("24h", PARIS, now) == (now - 86_400_000, now + 1)
    custom = (date(2026, 10, 25), date(2026, 10, 26))
    assert period_range("custom", PARIS, now, custom) == local_day_range(*custom, PARIS)
    with pytest.raises(UsageFilterError, match="Unknown period"):
        period_range("fortnight", PARIS, now)


def test_half_hour_zone_days_are_exact(any_store_url: str) -> None:
    """Kolkata is 5:30 ahead: two requests in one UTC hour fall on two local days."""
    engine = create_store_engine(any_store_url)
    rows = [
        usage_row(created_ms=utc_ms("2026-10-25T18:20:00"), cost_input=0.01),  # 23:50 on the 25th
        usage_row(created_ms=utc_ms("2026-10-25T18:40:00"), cost_input=0.02),  # 00:10 on the 26th
    ]
    with engine.begin() as conn:
        conn.execute(insert(usage), rows)
    start, end = local_day_range(date(2026, 10, 24), date(2026, 10, 28), "Asia/Kolkata")
    summary = summarize(engine, UsageFilter(start_ms=start, end_ms=end), "Asia/Kolkata", "day")
    days = {row.bucket.date(): round(row.totals.cost_total, 2) for row in summary.series()}
    assert days == {date(2026, 10, 25): 0.01, date(2026, 10, 26): 0.02}


def test_hourly_index_path_agrees_with_grouping_every_row(
    any_store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cube read per UTC hour from ix_usage_hour equals the cube grouped request by request."""
    engine = create_store_engine(any_store_url)
    end_ms = utc_ms("2026-11-01T00:00:00")
    seed_demo(engine, 3_000, days=60, end_ms=end_ms, price_of=lambda p, m: ModelCost(input=1, output=2))
    start, end = local_day_range(date(2026, 9, 10), date(2026, 10, 31), "America/New_York")
    usage_filter = UsageFilter(start_ms=start + 1_234, end_ms=end, providers=("openai", "anthropic", "local"))
    fast = summarize(engine, usage_filter, "America/New_York")
    monkeypatch.setattr(_sql, "_whole_hours", lambda spans: False)
    slow = summarize(engine, usage_filter, "America/New_York")

    def table(summary: Any) -> dict[Any, Any]:
        return {
            (r.bucket, r.provider, r.model, r.stop_reason): (
                r.totals.requests,
                r.totals.input_tokens,
                round(r.totals.cost_total, 9),
            )
            for r in summary.rows
        }

    assert len(fast.rows) > 100
    assert table(fast) == table(slow)


def test_dashboard_gathers_the_same_figures(known_usage: Engine) -> None:
    """The page's one call: cube, headline (this period's counts from the cube) and conversations."""
    data = dashboard(known_usage, paris_days(), PARIS)
    alone = headline(known_usage, paris_days())
    assert data.headline.current.totals.requests == 4
    assert data.headline.current.totals.cost_total == pytest.approx(0.036)
    assert data.headline.current.median_latency_ms == alone.current.median_latency_ms == 1750.0
    assert data.headline.previous is not None and alone.previous is not None
    assert data.headline.previous.totals.cost_total == pytest.approx(alone.previous.totals.cost_total)
    assert data.headline.change("requests") == pytest.approx(3.0)
    assert [r.conversation_id for r in data.top_conversations] == ["conv-a", None, "conv-b"]
    assert counts(known_usage, paris_days()) == data.summary.counts()
    # PostgreSQL sums integers as numeric: the figures must still be ints and floats.
    assert type(data.summary.counts().requests) is int
    assert type(data.summary.counts().cost_total) is float


def test_estimated_requests_counts_the_estimated_rows_under_the_filter(any_store_url: str) -> None:
    engine = create_store_engine(any_store_url)
    rows = [
        usage_row(created_ms=1_000, provider="openai", model="gpt-4o", estimated=True),
        usage_row(created_ms=2_000, provider="anthropic", model="claude", estimated=True),
        usage_row(created_ms=3_000, provider="openai", model="gpt-4o", estimated=False),
        usage_row(created_ms=9_000, provider="openai", model="gpt-4o", estimated=True),
    ]
    with engine.begin() as conn:
        conn.execute(insert(usage), rows)
    assert estimated_requests(engine, UsageFilter()) == 3
    assert estimated_requests(engine, UsageFilter(start_ms=0, end_ms=5_000)) == 2
    assert estimated_requests(engine, UsageFilter(start_ms=0, end_ms=5_000, providers=("openai",))) == 1
    assert estimated_requests(engine, UsageFilter(models=("claude",))) == 1
    assert dashboard(engine, UsageFilter(start_ms=0, end_ms=10_000), "UTC").estimated_requests == 3
