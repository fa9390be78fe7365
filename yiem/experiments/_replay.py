"""A conversation item replayed on another model: each item's two replies and costs side by side.

The two sides are two variants of a run (`reply_diffs`), or the reply the conversation first had in
Chat and a variant's replay of it (`original_diffs`); `diff_lines` shows where the texts part.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence

from pydantic import BaseModel

from yiem.experiments._dataset import DatasetError, DatasetItem, conversation_up_to
from yiem.experiments._results import ExperimentResult
from yiem.types import AgentMessage, AssistantMessage, AssistantMessageToolCall, UserMessage


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


class OriginalReply(BaseModel):
    """The reply a Chat conversation had at the turn an item was made from, by which model, its dollars."""

    text: str
    model: str = ""
    cost: float | None = None


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


def original_diffs(
    result: ExperimentResult, originals: Mapping[str, OriginalReply], variant: str
) -> list[ReplyDiff]:
    """Each item of `originals` that `variant` ran: the Chat reply as the baseline, the replay beside it."""
    return [
        ReplyDiff(
            item_id=outcome.item_id,
            repeat=outcome.repeat,
            baseline_output=originals[outcome.item_id].text,
            candidate_output=outcome.output,
            baseline_cost=originals[outcome.item_id].cost,
            candidate_cost=outcome.cost,
        )
        for outcome in result.outcomes_of(variant)
        if outcome.item_id in originals
    ]


def diff_lines(before: str, after: str) -> list[str]:
    """A unified diff of two replies, word-wrapped lines compared (empty when they are the same)."""
    return list(
        difflib.unified_diff(before.splitlines(), after.splitlines(), "original", "replay", lineterm="", n=2)
    )


def up_to_here(
    conversation_id: str, messages: Sequence[AgentMessage], index: int
) -> tuple[DatasetItem, OriginalReply]:
    """The conversation up to the reply at `index` as an item (its turn the input, what came before the
    item's messages), and that reply as it was: its text, model and the dollars of the turn's replies."""
    if not 0 <= index < len(messages) or not isinstance(
        messages[index], AssistantMessage | AssistantMessageToolCall
    ):
        raise DatasetError(f"Message {index + 1} of the conversation is not a reply.")
    turn = sum(1 for message in messages[: index + 1] if isinstance(message, UserMessage))
    if turn == 0:
        raise DatasetError("That reply answers no message of yours, so there is nothing to replay.")
    item = conversation_up_to(conversation_id, messages[: index + 1], turn)
    start = max(i for i, m in enumerate(messages[: index + 1]) if isinstance(m, UserMessage))
    replies = [
        m for m in messages[start : index + 1] if isinstance(m, AssistantMessage | AssistantMessageToolCall)
    ]
    costs = [reply.cost.total if reply.cost is not None else None for reply in replies]
    reply = messages[index]
    assert isinstance(reply, AssistantMessage | AssistantMessageToolCall)
    return item, OriginalReply(
        text=item.expected or "",
        model=reply.model,
        cost=None if None in costs else sum(c for c in costs if c is not None),
    )
