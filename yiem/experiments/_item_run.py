"""One item under one variant: a full agent run (turns, tool calls and all), then its scores."""

from __future__ import annotations

from collections.abc import Sequence
from time import perf_counter
from typing import Any

from yiem.events import AgentEndEvent
from yiem.experiments._dataset import DatasetItem
from yiem.experiments._outcome import ItemOutcome, Score, summarize_messages
from yiem.experiments._variant import Variant
from yiem.experiments.scorers import AnyScorer
from yiem.llm import LlmClient
from yiem.loop import run_agent_loop
from yiem.types import (
    AbortSignal,
    AgentContext,
    AgentTool,
    LlmModel,
    MessageContent,
    TextContent,
    UserMessage,
)


def user_message(item: DatasetItem) -> UserMessage:
    """The item as the first message of its transcript: its input text, then its images."""
    content: list[MessageContent] = [TextContent(text=item.input)] if item.input else []
    content.extend(item.images)
    return UserMessage(content=content)


def run_item(
    variant: Variant,
    item: DatasetItem,
    repeat: int,
    llm: LlmClient,
    model: LlmModel,
    tools: Sequence[AgentTool],
    scorers: Sequence[AnyScorer],
    signal: AbortSignal,
) -> ItemOutcome | None:
    """Run and score one item; None when the run was stopped before it finished (so it runs again)."""
    if signal.aborted:
        return None
    prompt = user_message(item)
    # A conversation item replays its messages; its input (if any) is the user's next turn after them.
    given = prompt.content or not item.messages
    opening: list[Any] = [*item.messages, prompt] if given else list(item.messages)
    context = AgentContext.model_construct(
        system_prompt=variant.render_system_prompt(item.vars),
        messages=list(opening),
        tools={tool.name: tool for tool in tools} if tools else None,
    )
    started = perf_counter()
    end: AgentEndEvent | None = None
    for event in run_agent_loop(context, llm, model, variant.loop_config(), signal):
        if isinstance(event, AgentEndEvent):
            end = event
    latency_ms = (perf_counter() - started) * 1000
    if end is None or end.stop_reason == "aborted" or signal.aborted:
        return None
    messages: list[Any] = [*opening, *end.messages]
    output, usage, cost, turns = summarize_messages(end.messages)
    outcome = ItemOutcome(
        item_id=item.id,
        variant=variant.name,
        repeat=repeat,
        output=output,
        messages=messages,
        usage=usage,
        cost=cost,
        latency_ms=latency_ms,
        turns=turns,
        stop_reason=end.stop_reason,
        error=end.error_message if end.stop_reason in ("error", "max_turns") else None,
    )
    outcome.scores = [_score(scorer, item, outcome) for scorer in scorers]
    return outcome


def _score(scorer: AnyScorer, item: DatasetItem, outcome: ItemOutcome) -> Score:
    try:
        return scorer.score(item, outcome)
    except Exception as error:  # one broken scorer must not lose the item's run
        return Score(
            scorer=scorer.name, score=0.0, passed=False, reason=f"the scorer failed: {error or type(error)}"
        )
