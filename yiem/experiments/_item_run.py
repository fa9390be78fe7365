"""One item under one variant: a full agent run (turns, tool calls and all), then its scores."""

from __future__ import annotations

from collections.abc import Sequence
from time import perf_counter
from typing import Any

from yiem.events import AgentEndEvent
from yiem.experiments._dataset import DatasetItem
from yiem.experiments._outcome import ItemOutcome, Score, summarize_messages
from yiem.experiments._scorer_base import BrokenScorerError
from yiem.experiments._simulated_user import SimulatedRun, UserModel, simulate
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

NO_PLAYER = (
    "This item has a simulated user, but the experiment names no model to play the user: "
    "choose one (user_model=...) or remove the item's persona and goal."
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
    player: UserModel | None = None,
) -> ItemOutcome | None:
    """Run and score one item; None when the run was stopped before it finished (so it runs again).

    An item with a simulated user goes on for its turns with `player`, the model playing the user."""
    if signal.aborted:
        return None
    prompt = user_message(item)
    # A conversation item replays its messages; its input (if any) is the user's next turn after them.
    given = prompt.content or not (item.messages or item.user)
    opening: list[Any] = [*item.messages, prompt] if given else list(item.messages)

    def agent_turn(messages: list[Any]) -> AgentEndEvent | None:
        context = AgentContext.model_construct(
            system_prompt=variant.render_system_prompt(item.vars),
            messages=messages,
            tools={tool.name: tool for tool in tools} if tools else None,
        )
        end: AgentEndEvent | None = None
        for event in run_agent_loop(context, llm, model, variant.loop_config(), signal):
            if isinstance(event, AgentEndEvent):
                end = event
        return None if end is None or end.stop_reason == "aborted" or signal.aborted else end

    started = perf_counter()
    if item.user is None:
        end = agent_turn(list(opening))
        if end is None:
            return None
        run = SimulatedRun(messages=[*opening, *end.messages], agent_messages=end.messages, end=end)
    elif player is None:
        run = SimulatedRun(messages=opening, error=NO_PLAYER)
    else:
        run = simulate(opening, item.user, player, agent_turn, signal)
        if signal.aborted or (run.end is None and run.error is None):
            return None
    latency_ms = (perf_counter() - started) * 1000
    output, usage, cost, turns = summarize_messages(run.agent_messages)
    end = run.end
    failed = end is not None and end.stop_reason in ("error", "max_turns")
    outcome = ItemOutcome(
        item_id=item.id,
        variant=variant.name,
        repeat=repeat,
        output=output,
        messages=run.messages,
        usage=usage,
        cost=cost,
        latency_ms=latency_ms,
        turns=turns,
        stop_reason=end.stop_reason if end is not None else "error",
        error=(end.error_message if failed and end is not None else None) or run.error,
        given_messages=len(item.messages),
    )
    if item.user is not None:
        outcome.user_usage, outcome.user_cost = run.user_usage, run.user_cost
        outcome.user_turns, outcome.goal_met = run.user_turns, run.goal_met
        outcome.user_replies = run.user_replies
    _score(outcome, item, [scorer.for_variant(variant) for scorer in scorers])
    return outcome


def _score(outcome: ItemOutcome, item: DatasetItem, scorers: Sequence[AnyScorer]) -> None:
    """Give the outcome each scorer's score. A scorer that breaks gives none: its words become the
    cell's error, so the cell counts as an error (as a failed model call does), never as a verdict."""
    scores: list[Score] = []
    broken: list[str] = []
    for scorer in scorers:
        try:
            scores.append(scorer.score(item, outcome))
        except BrokenScorerError as error:
            broken.append(str(error))
        except Exception as error:  # one broken scorer must not lose the item's run
            broken.append(f"The scorer {scorer.name} failed: {error or type(error).__name__}.")
    outcome.scores = scores
    if broken:
        outcome.error = "\n".join([outcome.error, *broken] if outcome.error else broken)
