"""A run's results: per-variant summaries, item-by-item comparison with a baseline, exports."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from yiem.experiments._dataset import Dataset
from yiem.experiments._outcome import ItemOutcome, OutcomeKey
from yiem.experiments._review_model import Review
from yiem.experiments._stats import mcnemar_exact, percentile, wilson_interval
from yiem.types import LlmUsage, replace_lone_surrogates

if TYPE_CHECKING:
    import pandas

RunStatus = Literal["running", "finished", "stopped", "budget", "failed"]


class VariantSummary(BaseModel):
    """One variant's figures over a run."""

    variant: str
    items: int
    passed: int
    pass_rate: float
    pass_low: float  # 95% Wilson interval
    pass_high: float
    mean_scores: dict[str, float]
    cost: float | None  # dollars of the priced items; None when no item had a price
    unpriced: int  # items whose price is unknown (a local model), never counted as $0
    cost_per_item: float | None
    latency_p50_ms: float | None
    latency_p95_ms: float | None
    input_tokens: int
    output_tokens: int
    errors: int


class ItemChange(BaseModel):
    """One (item, repeat) under the baseline and the candidate."""

    item_id: str
    repeat: int
    change: Literal["improved", "regressed", "unchanged"]
    baseline_passed: bool
    candidate_passed: bool
    baseline_score: float
    candidate_score: float


class Comparison(BaseModel):
    """Candidate against baseline, item by item, with the exact McNemar test on pass/fail."""

    baseline: str
    candidate: str
    items: list[ItemChange]
    improved: int
    regressed: int
    unchanged: int
    p_value: float

    @property
    def significant(self) -> bool:
        """Whether the pass/fail difference is unlikely to be noise (p < 0.05)."""
        return self.p_value < 0.05

    @property
    def significant_regression(self) -> bool:
        """A significant difference with more items worse than better: what fails a CI run."""
        return self.significant and self.regressed > self.improved

    @property
    def regressions(self) -> list[ItemChange]:
        return [item for item in self.items if item.change == "regressed"]


def pareto_front(points: Sequence[tuple[str, float, float]]) -> list[str]:
    """The names of the (name, cost, quality) points no other point beats on both (cheaper or as
    cheap, and better or as good, and strictly on one), cheapest first."""
    front = [
        (cost, -quality, name)
        for name, cost, quality in points
        if not any(c <= cost and q >= quality and (c < cost or q > quality) for _, c, q in points)
    ]
    return [name for _cost, _quality, name in sorted(front)]


def mean_score(outcome: ItemOutcome) -> float:
    """The mean of an outcome's scores; 1 or 0 by its error when it has none."""
    if not outcome.scores:
        return 0.0 if outcome.error else 1.0
    return sum(score.score for score in outcome.scores) / len(outcome.scores)


def compare(
    baseline: Sequence[ItemOutcome],
    candidate: Sequence[ItemOutcome],
    *,
    baseline_name: str = "baseline",
    candidate_name: str = "candidate",
) -> Comparison:
    """Pair outcomes by (item, repeat); pairs missing on either side are left out."""
    before = {(o.item_id, o.repeat): o for o in baseline}
    changes = []
    for outcome in candidate:
        old = before.get((outcome.item_id, outcome.repeat))
        if old is None:
            continue
        change: Literal["improved", "regressed", "unchanged"] = "unchanged"
        if outcome.passed and not old.passed:
            change = "improved"
        elif old.passed and not outcome.passed:
            change = "regressed"
        changes.append(
            ItemChange(
                item_id=outcome.item_id,
                repeat=outcome.repeat,
                change=change,
                baseline_passed=old.passed,
                candidate_passed=outcome.passed,
                baseline_score=mean_score(old),
                candidate_score=mean_score(outcome),
            )
        )
    improved = sum(1 for c in changes if c.change == "improved")
    regressed = sum(1 for c in changes if c.change == "regressed")
    return Comparison(
        baseline=baseline_name,
        candidate=candidate_name,
        items=changes,
        improved=improved,
        regressed=regressed,
        unchanged=len(changes) - improved - regressed,
        p_value=mcnemar_exact(improved, regressed),
    )


def summarize(variant: str, outcomes: Sequence[ItemOutcome], scorer_names: Sequence[str]) -> VariantSummary:
    """The figures of one variant's outcomes."""
    n = len(outcomes)
    passed = sum(1 for o in outcomes if o.passed)
    low, high = wilson_interval(passed, n)
    means = {}
    for name in scorer_names:
        values = [s.score for o in outcomes if (s := o.score_of(name)) is not None]
        if values:
            means[name] = sum(values) / len(values)
    priced = [o.cost for o in outcomes if o.cost is not None]
    cost = sum(priced) if priced else None
    latencies = [o.latency_ms for o in outcomes]
    return VariantSummary(
        variant=variant,
        items=n,
        passed=passed,
        pass_rate=passed / n if n else 0.0,
        pass_low=low,
        pass_high=high,
        mean_scores=means,
        cost=cost,
        unpriced=n - len(priced),
        cost_per_item=cost / len(priced) if cost is not None else None,
        latency_p50_ms=percentile(latencies, 50),
        latency_p95_ms=percentile(latencies, 95),
        input_tokens=sum(o.usage.input_tokens + o.usage.cache_read_tokens for o in outcomes),
        output_tokens=sum(o.usage.output_tokens for o in outcomes),
        errors=sum(1 for o in outcomes if o.error is not None),
    )


class RunCost(BaseModel):
    """A whole run's spending: the known dollars (replies and judges), how many outcomes had a price
    unknown (never counted as $0), and the tokens of both."""

    known_usd: float
    outcomes: int
    unpriced: int
    input_tokens: int
    output_tokens: int


class ExperimentResult(BaseModel):
    """Everything a run produced, with the frozen dataset it used."""

    run_id: str
    experiment: str = ""
    dataset: Dataset
    dataset_version: str
    variants: list[str]
    scorers: list[str]
    repeats: int = 1
    outcomes: list[ItemOutcome] = Field(default_factory=list)
    status: RunStatus = "finished"
    stop_reason: str | None = None

    @property
    def judge_usage(self) -> LlmUsage:
        """Tokens the rubric judges used, apart from the variants'."""
        total = LlmUsage()
        for outcome in self.outcomes:
            for score in outcome.scores:
                if score.judge_usage is not None:
                    total = total + score.judge_usage
        return total

    @property
    def judge_cost(self) -> float:
        return sum(outcome.judge_cost for outcome in self.outcomes)

    @property
    def user_usage(self) -> LlmUsage:
        """Tokens the models playing simulated users used, apart from the variants'."""
        total = LlmUsage()
        for outcome in self.outcomes:
            if outcome.user_usage is not None:
                total = total + outcome.user_usage
        return total

    @property
    def user_cost(self) -> float | None:
        """Their known dollars; None when a simulated user's model has no price."""
        played = [o.user_cost for o in self.outcomes if o.user_usage is not None]
        return None if None in played else sum(c for c in played if c is not None)

    def cost(self) -> RunCost:
        """What the whole run cost, judges and simulated users included, the unpriced counted apart."""
        usage = self.judge_usage + self.user_usage
        for outcome in self.outcomes:
            usage = usage + outcome.usage
        return RunCost(
            known_usd=sum((o.cost or 0.0) + o.judge_cost + (o.user_cost or 0.0) for o in self.outcomes),
            outcomes=len(self.outcomes),
            unpriced=sum(not o.price_known for o in self.outcomes),
            input_tokens=usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens,
            output_tokens=usage.output_tokens,
        )

    def outcomes_of(self, variant: str) -> list[ItemOutcome]:
        return [o for o in self.outcomes if o.variant == variant]

    def summary(self) -> list[VariantSummary]:
        """Per variant, in the run's order."""
        return [summarize(name, self.outcomes_of(name), self.scorers) for name in self.variants]

    def compare(
        self, candidate: str, baseline: str | None = None, baseline_run: ExperimentResult | None = None
    ) -> Comparison:
        """`candidate` against `baseline` (a variant of this run, or of `baseline_run`; by default the
        same name there, else this run's first variant)."""
        other = baseline_run or self
        name = baseline or (candidate if baseline_run is not None else self.variants[0])
        return compare(
            other.outcomes_of(name),
            self.outcomes_of(candidate),
            baseline_name=name if baseline_run is None else f"{name} ({other.run_id[:8]})",
            candidate_name=candidate,
        )

    # --- exports ---------------------------------------------------------------------------

    def rows(self, reviews: Sequence[Review] | None = None) -> list[dict[str, Any]]:
        """One flat row per outcome: item, variant, output, pass, each score, cost, latency, tokens; with
        `reviews` (those the reader may see), each cell's counts of thumbs and its reviews as JSON."""
        items = {item.id: item for item in self.dataset.items}
        by_cell = _reviews_by_cell(reviews or [])
        rows = []
        for o in self.outcomes:
            item = items.get(o.item_id)
            row: dict[str, Any] = {
                "item_id": o.item_id,
                "input": item.input if item else "",
                "expected": item.expected if item else None,
                "variant": o.variant,
                "repeat": o.repeat,
                "output": o.output,
                "passed": o.passed,
            }
            for name in self.scorers:
                score = o.score_of(name)
                row[f"score.{name}"] = score.score if score else None
                row[f"passed.{name}"] = score.passed if score else None
                row[f"reason.{name}"] = score.reason if score else None
            row.update(
                cost=o.cost,
                latency_ms=o.latency_ms,
                input_tokens=o.usage.input_tokens,
                output_tokens=o.usage.output_tokens,
                turns=o.turns,
                tool_calls=len(o.tool_calls),
                error=o.error,
                conversation_id=o.conversation_id,
            )
            if reviews is not None:
                cell = by_cell.get(o.key, [])
                row["reviews.up"] = sum(review.passed for review in cell)
                row["reviews.down"] = sum(not review.passed for review in cell)
                row["reviews"] = json.dumps([review.exported() for review in cell], ensure_ascii=False)
            rows.append(row)
        return rows

    def to_pandas(self) -> pandas.DataFrame:
        """The rows as a DataFrame (pandas is imported only when asked for)."""
        import pandas

        return pandas.DataFrame(self.rows())

    def to_csv(self, reviews: Sequence[Review] | None = None) -> str:
        """The rows as CSV text (with `reviews`, each cell's reviews too)."""
        rows = self.rows(reviews)
        if not rows:
            return ""
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return out.getvalue()

    def to_json(self, reviews: Sequence[Review] | None = None) -> str:
        """The whole result (dataset, outcomes with transcripts, summaries) as JSON; with `reviews`
        (those the reader may see), each outcome's reviews under "reviews"."""
        data = self.model_dump(mode="json", by_alias=True)
        data["summary"] = [s.model_dump(mode="json") for s in self.summary()]
        if reviews is not None:
            by_cell = _reviews_by_cell(reviews)
            for outcome, dumped in zip(self.outcomes, data["outcomes"], strict=True):
                dumped["reviews"] = [review.exported() for review in by_cell.get(outcome.key, [])]
        return json.dumps(replace_lone_surrogates(data), ensure_ascii=False)


def _reviews_by_cell(reviews: Sequence[Review]) -> dict[OutcomeKey, list[Review]]:
    found: dict[OutcomeKey, list[Review]] = {}
    for review in reviews:
        found.setdefault(review.key, []).append(review)
    return found
