"""Simulated users: a second model plays a persona with a goal for up to N turns, or until it says the
goal is met. Its replies are the user's turns of the transcript; its tokens and dollars are its own."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field, field_validator

from yiem.budgets import BudgetCheck, BudgetGuard
from yiem.errors import YiemError
from yiem.events import AgentEndEvent
from yiem.experiments._variant import Variant
from yiem.llm import LlmClient
from yiem.loop import run_agent_loop
from yiem.types import (
    AbortSignal,
    AgentContext,
    AgentLoopConfig,
    AgentMessage,
    AssistantMessage,
    AssistantMessageToolCall,
    LlmModel,
    LlmUsage,
    TextContent,
    UserMessage,
)

GOAL_MET = "GOAL MET"
"""What the simulated user says, alone, when its goal is met: the conversation ends there."""

_INSTRUCTIONS = (
    "You are playing a user talking to an AI assistant. Stay in character and write only the user's "
    "next message, short and plain.\n\nWho you are: {persona}\n\nWhat you want: {goal}\n\n"
    f"When the assistant has done what you want, reply with exactly {GOAL_MET} and nothing else."
)


class SimulatedUserError(YiemError, ValueError):
    """A simulated user set up wrongly (a persona with no goal, no turns); says what to add.

    A ValueError too, so pydantic turns it into a validation error when an item is read."""


class SimulatedUser(BaseModel):
    """Who the simulated user is, what it wants, and how many of its turns the conversation may take."""

    persona: str = ""
    goal: str
    max_turns: int = Field(default=5, ge=1, le=50)

    @field_validator("goal")
    @classmethod
    def _goal_given(cls, goal: str) -> str:
        if not goal.strip():
            raise SimulatedUserError("a simulated user needs a goal: say what the user wants done")
        return goal


def simulated_user(persona: str, goal: str, max_turns: int | None = None) -> SimulatedUser | None:
    """The simulated user a persona and a goal describe (None when both are empty); a persona with no
    goal raises `SimulatedUserError` in words."""
    if not persona.strip() and not goal.strip():
        return None
    if not goal.strip():
        raise SimulatedUserError("a simulated user needs a goal: say what the user wants done")
    fields = {} if max_turns is None else {"max_turns": max_turns}
    return SimulatedUser(persona=persona.strip(), goal=goal.strip(), **fields)


@dataclass
class UserModel:
    """The model that plays the user (any provider), connected once for a run."""

    llm: LlmClient
    model: LlmModel
    temperature: float | None = None
    max_tokens: int | None = 200


def connect_player(
    variant: Variant | None,
    budget: BudgetGuard | None = None,
    on_refuse: Callable[[BudgetCheck, AbortSignal | None], None] | None = None,
) -> UserModel | None:
    """The run's user model connected (`VariantError` in words when it will not), or None if it has none.

    With `budget`, its requests are checked against the person's spending limits as the variants' are."""
    if variant is None:
        return None
    llm, model = variant.connect()
    if budget is not None:
        llm = budget.wrap(llm, on_refuse)
    return UserModel(
        llm=llm, model=model, temperature=variant.temperature, max_tokens=variant.max_tokens or 200
    )


@dataclass
class SimulatedRun:
    """The whole transcript, the agent's replies alone, the user model's usage and whether it was done."""

    messages: list[AgentMessage] = field(default_factory=list)
    agent_messages: list[AgentMessage] = field(default_factory=list)
    user_usage: LlmUsage = field(default_factory=LlmUsage)
    user_cost: float | None = 0.0
    user_replies: list[AssistantMessage] = field(default_factory=list)
    user_turns: int = 0
    goal_met: bool = False
    end: AgentEndEvent | None = None
    error: str | None = None


AgentTurn = Callable[[list[AgentMessage]], AgentEndEvent | None]
"""Runs the agent on the transcript so far; its end event, or None when it was stopped."""


def simulate(
    opening: list[AgentMessage], user: SimulatedUser, player: UserModel, agent: AgentTurn, signal: AbortSignal
) -> SimulatedRun:
    """Alternate the agent and the user model, starting with `opening` (the user model opens when empty)."""
    run = SimulatedRun(messages=list(opening))
    if not run.messages and not _user_turn(run, user, player, signal):
        return run
    while True:
        end = agent(list(run.messages))
        run.end = end
        if end is None:
            return run
        run.messages += end.messages
        run.agent_messages += end.messages
        if end.stop_reason in ("error", "aborted", "max_turns") or run.user_turns >= user.max_turns:
            return run
        if not _user_turn(run, user, player, signal):
            return run


def _user_turn(run: SimulatedRun, user: SimulatedUser, player: UserModel, signal: AbortSignal) -> bool:
    """Ask the user model for its next message; False when the conversation ends (goal met or failure)."""
    # The user model sees the conversation from the other side: the agent's replies are its input.
    flipped: list[Any] = [
        UserMessage(content=[TextContent(text=m.text or "(the assistant called tools)")])
        if isinstance(m, AssistantMessage | AssistantMessageToolCall)
        else AssistantMessage(content=[TextContent(text=m.text)])
        for m in run.messages
        if isinstance(m, AssistantMessage | AssistantMessageToolCall | UserMessage)
    ]
    if not flipped:
        flipped = [UserMessage(content=[TextContent(text="(Start the conversation.)")])]
    context = AgentContext.model_construct(
        system_prompt=_INSTRUCTIONS.format(persona=user.persona or "a person", goal=user.goal),
        messages=flipped,
        tools=None,
    )
    config = AgentLoopConfig(max_turns=1, temperature=player.temperature, max_tokens=player.max_tokens)
    end = next(
        (
            e
            for e in run_agent_loop(context, player.llm, player.model, config, signal)
            if isinstance(e, AgentEndEvent)
        ),
        None,
    )
    reply = (
        next((m for m in reversed(end.messages) if isinstance(m, AssistantMessage)), None) if end else None
    )
    if reply is not None:
        run.user_replies.append(reply)
        run.user_usage = run.user_usage + reply.usage
        run.user_cost = (
            None if reply.cost is None or run.user_cost is None else run.user_cost + reply.cost.total
        )
    if end is None or end.stop_reason == "aborted":
        return False
    if reply is None or reply.error_message or end.stop_reason == "error":
        words = (reply.error_message if reply else None) or end.error_message or "no reply"
        run.error = f"The model playing the user failed: {words}"
        return False
    text = reply.text.strip()
    if GOAL_MET.casefold() in text.casefold():
        run.goal_met = True
        return False
    run.user_turns += 1
    run.messages.append(UserMessage(content=[TextContent(text=text)]))
    return True
