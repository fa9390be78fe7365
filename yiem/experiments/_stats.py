"""The statistics of results: Wilson intervals, the exact McNemar test, percentiles."""

from __future__ import annotations

import math
from collections.abc import Sequence

from yiem.errors import YiemError


class StatisticsError(YiemError, ValueError):
    """Counts that cannot be (more successes than trials, a negative count)."""


Z_95 = 1.959963984540054
"""The standard normal quantile for a two-sided 95% interval."""


def wilson_interval(successes: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval (no continuity correction) of a proportion; (0, 0) for n = 0."""
    if n <= 0:
        return 0.0, 0.0
    if not 0 <= successes <= n:
        raise StatisticsError(f"successes must be between 0 and n ({successes} of {n})")
    p = successes / n
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact (conditional) McNemar p-value for b and c discordant pairs; 1.0 when none differ.

    Under the null hypothesis each of the n = b + c discordant pairs goes either way with
    probability 1/2, so p = min(1, 2 · P[Binomial(n, 1/2) ≤ min(b, c)]).
    """
    if b < 0 or c < 0:
        raise StatisticsError("b and c are counts and cannot be negative")
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(b, c) + 1))
    # Exact integer arithmetic, then one division: no underflow for large n.
    return min(1.0, 2 * tail / (1 << n))


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0-100) with linear interpolation between ranks, as numpy's default."""
    if not values:
        return None
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)
