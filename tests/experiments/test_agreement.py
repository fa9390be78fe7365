"""The `human` scorer beside the automatic ones: pass rates, Wilson intervals, McNemar, the disagreement
table, and Krippendorff's alpha checked against the coincidence-matrix formula worked by hand."""

from __future__ import annotations

import pytest

from yiem.experiments import (
    HUMAN_SCORER,
    ItemOutcome,
    Review,
    Score,
    disagreements,
    judge_agreement,
    mcnemar_exact,
    reviewer_agreement,
    scorer_comparison,
    scorer_figures,
    wilson_interval,
    with_human_scores,
)


def outcome(item: str, variant: str, judge: bool) -> ItemOutcome:
    score = Score(scorer="judge", score=float(judge), passed=judge, reason="judge says so")
    return ItemOutcome(item_id=item, variant=variant, scores=[score])


def review(item: str, variant: str, who: str, passed: bool) -> Review:
    return Review(item_id=item, variant=variant, reviewer=who, passed=passed)


def nominal_alpha(units: list[list[int]]) -> float:
    """Krippendorff's alpha for binary nominal data from its definition: 1 - D_o / D_e."""
    pairable = [unit for unit in units if len(unit) >= 2]
    o01 = sum(2 * unit.count(0) * unit.count(1) / (len(unit) - 1) for unit in pairable)
    n = sum(len(unit) for unit in pairable)
    n0 = sum(unit.count(0) for unit in pairable)
    return 1 - (n - 1) * o01 / (2 * n0 * (n - n0))


OUTCOMES = [
    outcome(f"q{n}", v, judge) for n, judge in enumerate([True, True, False, True]) for v in ("a", "b")
]
REVIEWS = [
    # q0: both up; q1: ann up, bob down; q2: both down; q3: ann down, bob down; b-variant only ann.
    review("q0", "a", "ann", True),
    review("q0", "a", "bob", True),
    review("q1", "a", "ann", True),
    review("q1", "a", "bob", False),
    review("q2", "a", "ann", False),
    review("q2", "a", "bob", False),
    review("q3", "a", "ann", False),
    review("q3", "a", "bob", False),
    review("q0", "b", "ann", False),
    review("q1", "b", "ann", True),
]


def test_reviewer_alpha_matches_the_formula_and_counts_only_shared_cells() -> None:
    agreement = reviewer_agreement(REVIEWS)
    assert (agreement.cells, agreement.raters) == (4, 2)
    assert agreement.alpha == pytest.approx(nominal_alpha([[1, 1], [1, 0], [0, 0], [0, 0]]))


def test_people_against_the_judge() -> None:
    # People's majority on variant a: q0 pass, q1 tie -> fail, q2 fail, q3 fail; b: q0 fail, q1 pass.
    people = {"q0a": 1, "q1a": 0, "q2a": 0, "q3a": 0, "q0b": 0, "q1b": 1}
    judge = {"q0a": 1, "q1a": 1, "q2a": 0, "q3a": 1, "q0b": 1, "q1b": 1}
    agreement = judge_agreement(OUTCOMES, REVIEWS, "judge")
    assert (agreement.cells, agreement.raters) == (6, 2)
    assert agreement.alpha == pytest.approx(nominal_alpha([[people[k], judge[k]] for k in people]))
    table = disagreements(OUTCOMES, REVIEWS, "judge")
    assert [(row.item_id, row.variant, row.up, row.reviews) for row in table] == [
        ("q0", "b", 0, 1),
        ("q1", "a", 1, 2),
        ("q3", "a", 0, 2),
    ]
    assert all(row.judge_passed and row.judge_reason == "judge says so" for row in table)


def test_human_scores_are_scores_beside_the_judge() -> None:
    scored = with_human_scores(OUTCOMES, REVIEWS)
    human = scorer_figures(scored, HUMAN_SCORER, "a")
    assert (human.cells, human.passed) == (4, 1)
    assert (human.pass_low, human.pass_high) == wilson_interval(1, 4)
    judge = scorer_figures(scored, "judge", "a")
    assert (judge.cells, judge.passed) == (4, 3)
    # q0: a pass, b fail (regressed); q1: a fail, b pass (improved); q2, q3 unreviewed on b.
    comparison = scorer_comparison(scored, HUMAN_SCORER, "a", "b")
    assert (comparison.improved, comparison.regressed, len(comparison.items)) == (1, 1, 2)
    assert comparison.p_value == mcnemar_exact(1, 1)


def test_alpha_says_why_it_cannot_be_computed() -> None:
    assert reviewer_agreement(REVIEWS[8:]).alpha is None
    same = reviewer_agreement([review("q0", "a", "ann", True), review("q0", "a", "bob", True)])
    assert same.alpha is None and "same" in same.why and same.cells == 1
