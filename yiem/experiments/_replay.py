"""A conversation item replayed on another model: each item's two replies and costs side by side."""

from __future__ import annotations

from pydantic import BaseModel

from yiem.experiments._results import ExperimentResult


class ReplyDiff(BaseModel):
    """One (item, repeat): the baseline's and the candidate's replies, and what each cost (None: unknown)."""

    item_id: str
    repeat: int
    baseline_output: str
    candidate_output: str
    baseline_cost: float | None
    candidate_cost: float | None

    @property
    def same_reply(self) -> bool:
        return self.baseline_output.strip() == self.candidate_output.strip()

    @property
    def cost_change(self) -> float | None:
        """Candidate dollars minus baseline dollars; None when either price is unknown."""
        if self.baseline_cost is None or self.candidate_cost is None:
            return None
        return self.candidate_cost - self.baseline_cost


def reply_diffs(result: ExperimentResult, baseline: str, candidate: str) -> list[ReplyDiff]:
    """The replies and costs of two variants of a run, paired by (item, repeat), in the run's order."""
    before = {(o.item_id, o.repeat): o for o in result.outcomes_of(baseline)}
    return [
        ReplyDiff(
            item_id=after.item_id,
            repeat=after.repeat,
            baseline_output=before[key].output,
            candidate_output=after.output,
            baseline_cost=before[key].cost,
            candidate_cost=after.cost,
        )
        for after in result.outcomes_of(candidate)
        if (key := (after.item_id, after.repeat)) in before
    ]
