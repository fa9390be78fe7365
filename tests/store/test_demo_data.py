"""Demo usage for the Costs page: realistic, consistent, and kept apart when the price is unknown."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, func, select

from yiem.store import DAY_MS, conversations, create_store_engine, generate, seed_demo, usage
from yiem.store.__main__ import main
from yiem.types import ModelCost

END_MS = 1_790_000_000_000


def fixed_prices(provider: str, _model: str) -> ModelCost | None:
    """Every provider but the local ones at one price, so costs can be checked by hand."""
    if provider in ("local", "ollama"):
        return None
    return ModelCost(input=2.0, output=8.0, cache_read=0.5, cache_write=2.5)


@pytest.fixture
def demo(any_store_url: str) -> Engine:
    engine = create_store_engine(any_store_url)
    assert seed_demo(engine, 5_000, days=30, end_ms=END_MS, price_of=fixed_prices) == 5_000
    return engine


def test_demo_rows_are_consistent(demo: Engine) -> None:
    with demo.connect() as conn:
        rows = conn.execute(select(usage)).all()
        titles = dict(conn.execute(select(conversations.c.id, conversations.c.title)).all())
    assert len(rows) == 5_000
    assert all(END_MS - 30 * DAY_MS <= r.created_ms < END_MS for r in rows)
    assert all(r.conversation_id in titles for r in rows)
    for r in rows:
        parts = r.cost_input + r.cost_output + r.cost_cache_read + r.cost_cache_write
        assert r.cost_total == pytest.approx(parts)
        if r.price_known:
            assert r.cost_input == pytest.approx(r.input_tokens * 2.0 / 1e6)
            assert r.cost_output == pytest.approx(r.output_tokens * 8.0 / 1e6)
            assert r.cost_cache_read == pytest.approx(r.cache_read_tokens * 0.5 / 1e6)
        else:
            assert r.provider in ("local", "ollama") and r.cost_total == 0
        if r.stop_reason == "error":
            assert r.error and r.ttft_ms is None and r.input_tokens == r.output_tokens == 0
        else:
            assert r.error is None and 0 < r.ttft_ms <= r.latency_ms
        assert r.reasoning_tokens <= r.output_tokens


def test_demo_rows_vary_like_real_traffic(demo: Engine) -> None:
    with demo.connect() as conn:
        providers = set(conn.execute(select(usage.c.provider).distinct()).scalars())
        stops = set(conn.execute(select(usage.c.stop_reason).distinct()).scalars())
        unpriced = conn.execute(select(func.count()).where(usage.c.price_known.is_(False))).scalar_one()
        cached = conn.execute(select(func.sum(usage.c.cache_read_tokens))).scalar_one()
    assert {"openai", "anthropic", "local", "ollama"} <= providers
    assert stops == {"end_turn", "tool_calls", "length", "error", "aborted"}
    assert 0 < unpriced < 5_000 and cached > 0


def test_same_seed_same_data() -> None:
    first = [row for batch in generate(300, end_ms=END_MS, price_of=fixed_prices)[1] for row in batch]
    again = [row for batch in generate(300, end_ms=END_MS, price_of=fixed_prices)[1] for row in batch]
    assert first == again
    assert [r["created_ms"] for r in first] == sorted(r["created_ms"] for r in first)


def test_negative_row_count_is_refused() -> None:
    with pytest.raises(ValueError, match="0 or more"):
        generate(-1, price_of=fixed_prices)


def test_seed_demo_command_fills_the_configured_store(
    store_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`python -m yiem.store seed-demo N` with prices from the real catalogue."""
    monkeypatch.setenv("YIEM_DATABASE_URL", store_url)
    assert main(["seed-demo", "400", "--days", "10"]) == 0
    assert "Added 400 demo usage rows" in capsys.readouterr().out
    engine = create_store_engine(store_url)
    with engine.connect() as conn:
        priced = conn.execute(
            select(usage.c.input_tokens, usage.c.cost_input).where(
                usage.c.model == "gpt-4o", usage.c.input_tokens > 0
            )
        ).first()
        local = conn.execute(
            select(func.count()).where(usage.c.provider == "local", usage.c.price_known)
        ).scalar()
    assert priced is not None and priced.cost_input == pytest.approx(priced.input_tokens * 2.5 / 1e6)
    assert local == 0
    with pytest.raises(SystemExit):
        main(["seed-demo", "-5"])
