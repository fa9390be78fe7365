"""A comparison's columns (each a `ModelSetup`): how many, their order, their latest figures."""

from __future__ import annotations

import random
from collections.abc import Sequence

from pydantic import BaseModel

from yiem.errors import YiemError
from yiem.model_setup import ModelSetup

MIN_COLUMNS = 2
MAX_COLUMNS = 6


class CompareError(YiemError):
    """A comparison cannot start as asked (too few or too many columns, one still running)."""


class ColumnFigures(BaseModel):
    """What one column's answer took: time to first token, speed, tokens, cost and total time.

    `cost` is None when a reply's price is unknown: shown as "price unknown", never as $0.
    `first_token_at` and `finished_at` are `time.perf_counter()` readings, to compare columns.
    """

    ttft_ms: float | None = None
    total_ms: float | None = None
    tokens_per_s: float | None = None
    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None
    first_token_at: float | None = None
    finished_at: float | None = None


def check_columns(specs: Sequence[ModelSetup]) -> None:
    """Raise `CompareError` unless there are 2 to 6 columns."""
    if not MIN_COLUMNS <= len(specs) <= MAX_COLUMNS:
        raise CompareError(
            f"A comparison has {MIN_COLUMNS} to {MAX_COLUMNS} columns; this one has {len(specs)}."
        )


def blind_order(specs: Sequence[ModelSetup], rng: random.Random | None = None) -> list[ModelSetup]:
    """The columns in a random order: a blind vote's A and B must not follow the order they were set in."""
    return (rng or random.SystemRandom()).sample(list(specs), len(specs))


def cheapest_and_fastest(figures: Sequence[ColumnFigures | None]) -> tuple[int | None, int | None]:
    """Indexes of the cheapest column (known prices only) and the fastest (shortest total time).

    Columns that failed or have no figures take no part; with fewer than two candidates none is marked.
    """
    priced = [(f.cost, i) for i, f in enumerate(figures) if f is not None and f.cost is not None]
    timed = [(f.total_ms, i) for i, f in enumerate(figures) if f is not None and f.total_ms is not None]
    cheapest = min(priced)[1] if len(priced) >= 2 else None
    fastest = min(timed)[1] if len(timed) >= 2 else None
    return cheapest, fastest
