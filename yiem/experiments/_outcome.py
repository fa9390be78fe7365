"""What one item's run under one variant produced, and the scores given to it."""

from __future__ import annotations

from pydantic import BaseModel, Field

from yiem.types import (
    AgentMessage,
    AgentToolCall,
    AssistantMessage,
    AssistantMessageToolCall,
    LlmUsage,
)

OutcomeKey = tuple[str, str, int]
"""(item id, variant name, repeat): what makes an outcome unique within a run."""


class Score(BaseModel):
    """One scorer's verdict: a score in [0, 1], pass or fail at its threshold, and a one-line reason."""

    scorer: str
    score: float
    passed: bool
    reason: str
    # A model-graded rubric's own tokens and dollars, counted apart from the variant's.
    judge_usage: LlmUsage | None = None
    judge_cost: float | None = None
    judge_model: str | None = None  # provider/model, for the judge's usage rows
    # When the judge replied (its usage row's time): a spending limit's reservation is settled to it.
    judge_ms: int | None = None


class ItemOutcome(BaseModel):
    """The transcript, output, tokens, cost, latency and scores of one (item, variant, repeat)."""

    item_id: str
    variant: str
    repeat: int = 0
    output: str = ""
    messages: list[AgentMessage] = Field(default_factory=list)
    usage: LlmUsage = Field(default_factory=LlmUsage)
    # Dollars; None when a reply's price is unknown (a local model), never shown as $0.
    cost: float | None = None
    latency_ms: float = 0.0
    turns: int = 0
    stop_reason: str = ""
    error: str | None = None
    scores: list[Score] = Field(default_factory=list)
    conversation_id: str | None = None
    # A simulated user's model: its tokens and dollars, counted apart from the variant's, its turns.
    user_usage: LlmUsage | None = None
    user_cost: float | None = None
    user_turns: int = 0
    goal_met: bool | None = None
    # The user model's replies, for their usage rows (the transcript holds their words as user turns).
    user_replies: list[AssistantMessage] = Field(default_factory=list)
    # How many of `messages` the item gave (a conversation item's): replayed, not replied in this run.
    given_messages: int = 0

    @property
    def key(self) -> OutcomeKey:
        return (self.item_id, self.variant, self.repeat)

    @property
    def passed(self) -> bool:
        """No error, and every scorer passed (an item without scorers passes when it did not fail)."""
        return self.error is None and all(score.passed for score in self.scores)

    @property
    def tool_calls(self) -> list[AgentToolCall]:
        """Every tool call the model asked for, in order."""
        return [
            call
            for message in self.messages
            if isinstance(message, AssistantMessageToolCall)
            for call in message.tool_calls
        ]

    @property
    def price_known(self) -> bool:
        """Whether every dollar of this outcome is known: its replies' and its rubric judges'."""
        judged = (score.judge_cost for score in self.scores if score.judge_usage is not None)
        return self.cost is not None and all(cost is not None for cost in judged)

    @property
    def judge_cost(self) -> float:
        """Dollars the rubric judges spent on this outcome (unpriced judges count nothing)."""
        return sum(score.judge_cost or 0.0 for score in self.scores)

    def score_of(self, scorer: str) -> Score | None:
        """The score a named scorer gave, if it ran."""
        return next((score for score in self.scores if score.scorer == scorer), None)


def summarize_messages(messages: list[AgentMessage]) -> tuple[str, LlmUsage, float | None, int]:
    """The last reply's text, tokens summed, dollars (None if any price is unknown) and turns."""
    usage = LlmUsage()
    cost: float | None = 0.0
    output = ""
    turns = 0
    for message in messages:
        if isinstance(message, AssistantMessage | AssistantMessageToolCall):
            turns += 1
            usage = usage + message.usage
            output = message.text
            if message.cost is None:
                cost = None
            elif cost is not None:
                cost += message.cost.total
    return output, usage, cost, turns
