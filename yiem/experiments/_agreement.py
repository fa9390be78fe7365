"""Human scores as scores: the `human` scorer's verdicts, per-scorer pass rates, agreement and disagreements.

A cell's human verdict is the majority of its reviewers' thumbs (a tie fails: no majority said it
was good). Agreement is Krippendorff's alpha (nominal) over the cells at least two raters judged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import krippendorff
import numpy as np

from yiem.experiments._outcome import ItemOutcome, OutcomeKey, Score
from yiem.experiments._results import Comparison, compare
from yiem.experiments._review_model import Review
from yiem.experiments._stats import wilson_interval

HUMAN_SCORER = "human"
"""The scorer name of people's verdicts, beside the automatic scorers' names."""


@dataclass(frozen=True)
class HumanVerdict:
    """The thumbs a cell got: how many up of how many reviews, and the majority's pass."""

    up: int
    reviews: int

    @property
    def passed(self) -> bool:
        return self.up * 2 > self.reviews


@dataclass(frozen=True)
class ScorerFigures:
    """One scorer's pass rate over one variant's cells it scored, with the 95% Wilson interval."""

    scorer: str
    variant: str
    cells: int
    passed: int
    pass_low: float
    pass_high: float

    @property
    def pass_rate(self) -> float:
        return self.passed / self.cells if self.cells else 0.0


@dataclass(frozen=True)
class Agreement:
    """Krippendorff's alpha and what it rests on; alpha is None when it cannot be computed, `why` says why."""

    alpha: float | None
    cells: int
    raters: int
    why: str = ""


@dataclass(frozen=True)
class Disagreement:
    """A cell where the judge and the people differ."""

    item_id: str
    variant: str
    repeat: int
    judge_passed: bool
    judge_reason: str
    up: int
    reviews: int


def human_verdicts(reviews: Sequence[Review]) -> dict[OutcomeKey, HumanVerdict]:
    """Each reviewed cell's thumbs."""
    counts: dict[OutcomeKey, list[int]] = {}
    for review in reviews:
        tally = counts.setdefault(review.key, [0, 0])
        tally[0] += int(review.passed)
        tally[1] += 1
    return {key: HumanVerdict(up=up, reviews=n) for key, (up, n) in counts.items()}


def with_human_scores(outcomes: Sequence[ItemOutcome], reviews: Sequence[Review]) -> list[ItemOutcome]:
    """The outcomes with a `human` score added to each reviewed cell (unreviewed cells unchanged)."""
    verdicts = human_verdicts(reviews)
    scored = []
    for outcome in outcomes:
        verdict = verdicts.get(outcome.key)
        if verdict is None:
            scored.append(outcome)
            continue
        human = Score(
            scorer=HUMAN_SCORER,
            score=verdict.up / verdict.reviews,
            passed=verdict.passed,
            reason=f"{verdict.up} of {verdict.reviews} reviewers said it was good",
        )
        kept = [score for score in outcome.scores if score.scorer != HUMAN_SCORER]
        scored.append(outcome.model_copy(update={"scores": [*kept, human]}))
    return scored


def only_scorer(outcomes: Sequence[ItemOutcome], scorer: str) -> list[ItemOutcome]:
    """The outcomes this scorer scored, each carrying that one score, so pass/fail is that scorer's."""
    return [
        outcome.model_copy(update={"scores": [score], "error": None})
        for outcome in outcomes
        if (score := outcome.score_of(scorer)) is not None
    ]


def scorer_figures(outcomes: Sequence[ItemOutcome], scorer: str, variant: str) -> ScorerFigures:
    """One scorer's pass rate and Wilson interval over a variant's cells (the `human` scorer included)."""
    mine = only_scorer([outcome for outcome in outcomes if outcome.variant == variant], scorer)
    passed = sum(1 for outcome in mine if outcome.passed)
    low, high = wilson_interval(passed, len(mine))
    return ScorerFigures(
        scorer=scorer, variant=variant, cells=len(mine), passed=passed, pass_low=low, pass_high=high
    )


def scorer_comparison(
    outcomes: Sequence[ItemOutcome], scorer: str, baseline: str, candidate: str
) -> Comparison:
    """The exact McNemar comparison of two variants on one scorer's verdicts, paired by (item, repeat)."""
    mine = only_scorer(outcomes, scorer)
    return compare(
        [outcome for outcome in mine if outcome.variant == baseline],
        [outcome for outcome in mine if outcome.variant == candidate],
        baseline_name=baseline,
        candidate_name=candidate,
    )


def reviewer_agreement(reviews: Sequence[Review]) -> Agreement:
    """Krippendorff's alpha between reviewers' thumbs over the cells two or more of them reviewed."""
    raters = sorted({review.reviewer for review in reviews})
    by_cell: dict[OutcomeKey, dict[str, bool]] = {}
    for review in reviews:
        by_cell.setdefault(review.key, {})[review.reviewer] = review.passed
    shared = [cell for cell in by_cell.values() if len(cell) >= 2]
    data = [[float(cell[rater]) if rater in cell else math.nan for cell in shared] for rater in raters]
    return _alpha(data, len(shared), len(raters))


def judge_agreement(outcomes: Sequence[ItemOutcome], reviews: Sequence[Review], scorer: str) -> Agreement:
    """Krippendorff's alpha between the people's majority verdict and one automatic scorer's, per cell."""
    verdicts = human_verdicts(reviews)
    pairs = [
        (float(verdicts[outcome.key].passed), float(score.passed))
        for outcome in outcomes
        if outcome.key in verdicts and (score := outcome.score_of(scorer)) is not None
    ]
    data = [[people for people, _ in pairs], [judge for _, judge in pairs]]
    return _alpha(data, len(pairs), 2)


def disagreements(
    outcomes: Sequence[ItemOutcome], reviews: Sequence[Review], scorer: str
) -> list[Disagreement]:
    """The reviewed cells where the scorer's pass differs from the people's majority, in the run's order."""
    verdicts = human_verdicts(reviews)
    table = []
    for outcome in outcomes:
        verdict = verdicts.get(outcome.key)
        score = outcome.score_of(scorer)
        if verdict is None or score is None or verdict.passed == score.passed:
            continue
        table.append(
            Disagreement(
                item_id=outcome.item_id,
                variant=outcome.variant,
                repeat=outcome.repeat,
                judge_passed=score.passed,
                judge_reason=score.reason,
                up=verdict.up,
                reviews=verdict.reviews,
            )
        )
    return table


def _alpha(data: list[list[float]], cells: int, raters: int) -> Agreement:
    if raters < 2 or cells == 0:
        return Agreement(
            alpha=None, cells=cells, raters=raters, why="No cell has been judged by two raters yet."
        )
    values = {value for row in data for value in row if not math.isnan(value)}
    if len(values) < 2:
        # Everyone gave the same verdict everywhere: alpha is undefined (no variation to agree on).
        return Agreement(
            alpha=None, cells=cells, raters=raters, why="Every verdict is the same, so alpha is undefined."
        )
    alpha = krippendorff.alpha(reliability_data=np.array(data, dtype=float), level_of_measurement="nominal")
    return Agreement(alpha=float(alpha), cells=cells, raters=raters)
