"""Realistic demo usage for the Costs page and its benchmark: conversations and usage rows."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import Engine, insert

from yiem.errors import YiemError
from yiem.store._schema import OWNER_DEFAULT, conversations, usage
from yiem.types import ModelCost

DAY_MS = 86_400_000
BATCH_ROWS = 20_000


class DemoDataError(YiemError, ValueError):
    """Demo data asked for wrongly (a negative number of rows); says what to give instead."""


@dataclass(frozen=True)
class DemoModel:
    """A model the demo traffic uses, with how it behaves."""

    provider: str
    api: str
    model: str
    weight: float  # share of conversations
    tokens_per_s: float
    caches: bool  # the provider reports cache reads (and Anthropic cache writes)
    reasoning: bool = False


DEMO_MODELS: tuple[DemoModel, ...] = (
    DemoModel("openai", "openai-completions", "gpt-4o-mini", 0.26, 95, caches=True),
    DemoModel("openai", "openai-completions", "gpt-4o", 0.14, 70, caches=True),
    DemoModel("openai", "openai-completions", "gpt-4.1", 0.08, 75, caches=True),
    DemoModel("openai", "openai-completions", "o3-mini", 0.05, 110, caches=True, reasoning=True),
    DemoModel("anthropic", "anthropic-messages", "claude-sonnet-4-20250514", 0.15, 60, caches=True),
    DemoModel("anthropic", "anthropic-messages", "claude-3-5-haiku-latest", 0.09, 90, caches=True),
    DemoModel("groq", "openai-completions", "llama-3.3-70b-versatile", 0.07, 250, caches=False),
    DemoModel("openrouter", "openai-completions", "mistralai/mistral-small", 0.04, 120, caches=False),
    # Local models have no price: the dashboard shows them apart, never as free.
    DemoModel("local", "openai-completions", "smollm2", 0.07, 90, caches=False),
    DemoModel("ollama", "openai-completions", "qwen2.5:7b", 0.05, 25, caches=False),
)

TOPICS = (
    "Refactor the billing service",
    "Summarise the quarterly report",
    "Draft a reply to the customer",
    "Explain this stack trace",
    "Plan the database migration",
    "Write unit tests for the parser",
    "Translate the release notes",
    "Review the pull request",
    "Brainstorm product names",
    "Debug the flaky CI job",
    "Compare vector databases",
    "Outline the onboarding guide",
    "Find the memory leak",
    "Design the REST API",
    "Clean up the CSV import",
    "Prepare the interview questions",
)
SUBJECTS = ("for Acme", "in Rust", "for the mobile app", "(draft)", "for Q3", "v2", "", "", "", "")
STOP_REASONS = ("end_turn", "tool_calls", "length", "error", "aborted")
STOP_WEIGHTS = (0.70, 0.235, 0.025, 0.03, 0.01)
ERRORS = (
    "HTTP 429: Rate limit reached for requests",
    "HTTP 500: The server had an error while processing your request",
    "HTTP 529: Overloaded",
    "Connection error: could not reach the server",
    "Read timeout after 60 s",
)

PriceLookup = Callable[[str, str], ModelCost | None]


def catalog_price(provider: str, model: str) -> ModelCost | None:
    """The catalogue's per-1M prices for a model, or None when its price is unknown."""
    from yiem.providers.catalog import get_model

    found = get_model(provider, model)
    return found.cost if found.price_known else None


def _conversation_ids(rng: np.random.Generator, count: int) -> list[str]:
    raw = rng.integers(0, 2**63, size=(count, 2), dtype=np.int64).astype(np.uint64)
    return [str(uuid.UUID(int=(int(hi) << 64) | int(lo), version=4)) for hi, lo in raw]


def _traffic_days(rng: np.random.Generator, count: int, days: int, end_ms: int) -> np.ndarray:
    """Start times: traffic grows over the span, is lighter at weekends and follows office hours."""
    day = np.arange(days)
    day_start = (end_ms // DAY_MS - days + 1 + day) * DAY_MS
    weekday = ((day_start // DAY_MS) + 3) % 7  # 1970-01-01 was a Thursday (3 with Monday = 0)
    weight = (0.4 + 0.6 * day / max(days - 1, 1)) * np.where(weekday >= 5, 0.35, 1.0)
    chosen = rng.choice(days, size=count, p=weight / weight.sum())
    hour_weight = np.array([1, 1, 1, 1, 1, 2, 3, 6, 10, 12, 12, 11, 9, 11, 12, 12, 10, 8, 6, 5, 4, 3, 2, 1.0])
    hour = rng.choice(24, size=count, p=hour_weight / hour_weight.sum())
    offset = hour * 3_600_000 + rng.integers(0, 3_600_000, size=count)
    return np.asarray(day_start[chosen] + offset, dtype=np.int64)


def generate(
    rows: int,
    *,
    days: int = 180,
    end_ms: int | None = None,
    seed: int = 7,
    price_of: PriceLookup = catalog_price,
) -> tuple[list[dict[str, Any]], Iterator[list[dict[str, Any]]]]:
    """Conversations and batches of usage rows (in time order) spread over the `days` before `end_ms`."""
    if rows < 0:
        raise DemoDataError(f"The number of demo rows must be 0 or more, not {rows}.")
    rng = np.random.default_rng(seed)
    end_ms = int(time.time() * 1000) if end_ms is None else end_ms
    n_conv = max(1, rows // 20)
    weights = np.array([m.weight for m in DEMO_MODELS])
    conv_model = rng.choice(len(DEMO_MODELS), size=n_conv, p=weights / weights.sum())
    conv_start = _traffic_days(rng, n_conv, days, end_ms)
    conv_gap = rng.integers(15_000, 240_000, size=n_conv)  # ms between two requests of a conversation
    # A heavy tail of long conversations, as real use has: a few dominate the top-N table.
    conv_size = rng.lognormal(0.0, 0.9, size=n_conv)
    conv_ids = _conversation_ids(rng, n_conv)

    conv = np.sort(rng.choice(n_conv, size=rows, p=conv_size / conv_size.sum()))
    first = np.searchsorted(conv, conv, side="left")
    turn = np.arange(rows) - first  # 0 for a conversation's first request
    # A conversation that would run past the end of the span starts earlier instead.
    length = np.bincount(conv, minlength=n_conv) * conv_gap + 5_000
    conv_start = np.minimum(conv_start, end_ms - length)
    created = conv_start[conv] + turn * conv_gap[conv] + rng.integers(0, 5_000, size=rows)
    conv_rows = [
        {
            "id": conv_ids[i],
            "title": f"{TOPICS[i % len(TOPICS)]} {SUBJECTS[(i // len(TOPICS)) % len(SUBJECTS)]}".strip(),
            "provider": DEMO_MODELS[conv_model[i]].provider,
            "model": DEMO_MODELS[conv_model[i]].model,
            "system_prompt": "You are a helpful assistant.",
            "created_ms": int(conv_start[i]),
            "updated_ms": int(conv_start[i] + length[i]),
        }
        for i in range(n_conv)
    ]
    model_idx = np.where(rng.random(rows) < 0.95, conv_model[conv], rng.integers(0, len(DEMO_MODELS), rows))
    stop = rng.choice(len(STOP_REASONS), size=rows, p=STOP_WEIGHTS)
    failed = stop == STOP_REASONS.index("error")

    caches = np.array([m.caches for m in DEMO_MODELS])[model_idx]
    anthropic = np.array([m.provider == "anthropic" for m in DEMO_MODELS])[model_idx]
    reasons = np.array([m.reasoning for m in DEMO_MODELS])[model_idx]
    speed = np.array([m.tokens_per_s for m in DEMO_MODELS])[model_idx]
    prompt = 300 + rng.integers(0, 1_800, size=rows) + turn * rng.integers(150, 600, size=rows)
    prompt = np.minimum(prompt, 120_000)
    output = np.maximum(1, rng.lognormal(5.4, 0.8, size=rows)).astype(np.int64)
    output = np.where(stop == STOP_REASONS.index("length"), 4_096, output)
    output = np.where(stop == STOP_REASONS.index("aborted"), output // 3, output)  # what streamed
    cache_read = np.where(caches & (turn > 0), (prompt * rng.uniform(0.5, 0.92, rows)).astype(np.int64), 0)
    cache_read = cache_read // 128 * 128  # providers cache in blocks
    cache_write = np.where(
        anthropic & (rng.random(rows) < 0.3), ((prompt - cache_read) * 0.8).astype(np.int64), 0
    )
    fresh = prompt - cache_read - cache_write
    ttft = rng.lognormal(6.2, 0.5, size=rows) + prompt / 200
    latency = ttft + output * 1000 / speed
    # A failed request bills nothing and has no first token.
    fresh, output, cache_read, cache_write = (
        np.where(failed, 0, a) for a in (fresh, output, cache_read, cache_write)
    )
    latency = np.where(failed, rng.uniform(80, 60_000, size=rows), latency)
    reasoning = np.where(reasons, (output * rng.uniform(0.3, 0.7, rows)).astype(np.int64), 0)
    error_text = rng.integers(0, len(ERRORS), size=rows)

    price_rows = [price_of(m.provider, m.model) for m in DEMO_MODELS]
    unit = np.array(
        [[p.input, p.output, p.cache_read, p.cache_write] if p else [0.0] * 4 for p in price_rows]
    )
    known = np.array([p is not None for p in price_rows])[model_idx]
    per = unit[model_idx] / 1e6
    cost_input = fresh * per[:, 0]
    cost_output = output * per[:, 1]
    cost_cache_read = cache_read * per[:, 2]
    cost_cache_write = cache_write * per[:, 3]
    cost_total = cost_input + cost_output + cost_cache_read + cost_cache_write
    order = np.argsort(created, kind="stable")
    none = np.full(rows, None, dtype=object)
    ttft_out = np.where(failed, none, np.round(ttft, 1).astype(object))
    error_out = np.where(failed, np.array(ERRORS, dtype=object)[error_text], none)

    def batches() -> Iterator[list[dict[str, Any]]]:
        for begin in range(0, rows, BATCH_ROWS):
            idx = order[begin : begin + BATCH_ROWS]
            columns = {
                "created_ms": created[idx].tolist(),
                "conversation_id": [conv_ids[c] for c in conv[idx].tolist()],
                "provider": [DEMO_MODELS[m].provider for m in model_idx[idx].tolist()],
                "api": [DEMO_MODELS[m].api for m in model_idx[idx].tolist()],
                "model": [DEMO_MODELS[m].model for m in model_idx[idx].tolist()],
                "input_tokens": fresh[idx].tolist(),
                "output_tokens": output[idx].tolist(),
                "cache_read_tokens": cache_read[idx].tolist(),
                "cache_write_tokens": cache_write[idx].tolist(),
                "reasoning_tokens": reasoning[idx].tolist(),
                "cost_input": cost_input[idx].tolist(),
                "cost_output": cost_output[idx].tolist(),
                "cost_cache_read": cost_cache_read[idx].tolist(),
                "cost_cache_write": cost_cache_write[idx].tolist(),
                "cost_total": cost_total[idx].tolist(),
                "price_known": known[idx].tolist(),
                "latency_ms": np.round(latency[idx], 1).tolist(),
                "ttft_ms": ttft_out[idx].tolist(),
                "stop_reason": [STOP_REASONS[s] for s in stop[idx].tolist()],
                "error": error_out[idx].tolist(),
            }
            names = list(columns)
            yield [dict(zip(names, values, strict=True)) for values in zip(*columns.values(), strict=True)]

    return conv_rows, batches()


def seed_demo(
    engine: Engine,
    rows: int,
    *,
    days: int = 180,
    end_ms: int | None = None,
    seed: int = 7,
    price_of: PriceLookup = catalog_price,
    progress: Callable[[int], None] | None = None,
    owner: str = OWNER_DEFAULT,
) -> int:
    """Insert `rows` demo usage rows (and their conversations) in batches, all `owner`'s; returns the
    rows written."""
    conv_rows, batches = generate(rows, days=days, end_ms=end_ms, seed=seed, price_of=price_of)
    written = 0
    # Rows without the key take the column's default (the local user): no copy of a million dicts.
    mark = {} if owner == OWNER_DEFAULT else {"owner": owner}
    with engine.begin() as conn:
        for begin in range(0, len(conv_rows), BATCH_ROWS):
            conn.execute(
                insert(conversations), [{**row, **mark} for row in conv_rows[begin : begin + BATCH_ROWS]]
            )
        for batch in batches:
            conn.execute(insert(usage), [{**row, **mark} for row in batch] if mark else batch)
            written += len(batch)
            if progress is not None:
                progress(written)
    return written
