"""Wilson intervals and the exact McNemar test against published worked examples."""

from __future__ import annotations

import pytest

from yiem.experiments import mcnemar_exact, percentile, wilson_interval


# Newcombe R. G. (1998), "Two-sided confidence intervals for the single proportion: comparison of
# seven methods", Statistics in Medicine 17:857-872, Table II, method 3 (score interval without
# continuity correction), to the 4 decimals printed there.
@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    [
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0000, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_matches_newcombe_1998(successes: int, n: int, low: float, high: float) -> None:
    found = wilson_interval(successes, n)
    assert found == (pytest.approx(low, abs=5e-5), pytest.approx(high, abs=5e-5))


def test_wilson_of_nothing_and_of_everything() -> None:
    assert wilson_interval(0, 0) == (0.0, 0.0)
    low, high = wilson_interval(20, 20)
    assert high == 1.0
    assert low == pytest.approx(1 - 0.1611, abs=5e-5)  # the mirror of 0/20 above
    with pytest.raises(ValueError):
        wilson_interval(3, 2)


def test_mcnemar_exact_matches_fagerland_2013() -> None:
    # Fagerland M. W., Lydersen S., Laake P. (2013), "The McNemar test for binary matched-pairs data:
    # mid-p and asymptotic are better than exact conditional", BMC Medical Research Methodology 13:91,
    # Table 1 (Bentur et al., airway hyper-responsiveness before and after stem cell transplantation):
    # 1 and 7 discordant pairs, exact conditional p = 0.070 (= 2 * (1 + 8) / 2^8 = 0.0703125).
    assert mcnemar_exact(1, 7) == pytest.approx(0.0703125, abs=1e-12)
    assert mcnemar_exact(7, 1) == mcnemar_exact(1, 7)


def test_mcnemar_exact_by_hand() -> None:
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(3, 3) == 1.0  # capped: 2 * P[X <= 3 | n=6] = 2 * 42/64 > 1
    assert mcnemar_exact(0, 5) == pytest.approx(2 / 32)
    assert mcnemar_exact(0, 10) == pytest.approx(2 / 1024)
    # Large counts: exact integer arithmetic, no overflow of 2^n (250 pairs: 2^250).
    assert 0 < mcnemar_exact(100, 150) < 0.01
    assert mcnemar_exact(500, 520) == pytest.approx(mcnemar_exact(520, 500))
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 2)


def test_percentile_interpolates_like_numpy() -> None:
    values = [10.0, 20.0, 30.0, 40.0]
    assert percentile(values, 50) == 25.0
    assert percentile(values, 95) == pytest.approx(38.5)  # numpy.percentile([10,20,30,40], 95)
    assert percentile([7.0], 95) == 7.0
    assert percentile([], 50) is None
