"""How full the model's context window is, and what the next send will cost, before it is sent."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from yiem.amounts import dollars
from yiem.amounts import tokens as token_words
from yiem.budgets import message_text
from yiem.types import (
    AgentMessage,
    AssistantMessage,
    AssistantMessageToolCall,
    LlmModel,
    LlmUsage,
    UserMessage,
)

AMBER = 0.8  # the gauge warns from here on
RECENT_REPLIES = 5  # the output estimate averages this many of the latest replies
KEEP_FRACTION = 0.5  # dropping old turns keeps the latest ones that fit in this much of the window

GaugeLevel = Literal["ok", "amber", "full", "unknown"]


@dataclass(frozen=True)
class ContextGauge:
    """The conversation's tokens against the context window, its level and the words to show."""

    tokens: int
    window: int
    fraction: float | None
    level: GaugeLevel
    words: str


@dataclass(frozen=True)
class SendEstimate:
    """What the next send is expected to use and cost (None when its price is unknown)."""

    input_tokens: int
    output_tokens: int
    cost: float | None
    words: str


def _reply(message: AgentMessage) -> AssistantMessage | AssistantMessageToolCall | None:
    return message if isinstance(message, AssistantMessage | AssistantMessageToolCall) else None


def conversation_tokens(
    messages: Sequence[AgentMessage],
    system_prompt: str,
    count: Callable[[str], int],
    since: datetime | None = None,
) -> int:
    """Tokens the conversation sends now: the latest reply's usage (input + output) plus an estimate of
    the messages after it; all estimated when no reply of this conversation counted them.

    Replies older than `since` (the conversation's creation) were counted elsewhere, with turns this
    conversation no longer has (an import, or old turns dropped), so their usage does not apply.
    """
    for index in range(len(messages) - 1, -1, -1):
        reply = _reply(messages[index])
        if reply is None or not reply.usage.total_tokens or (since is not None and reply.timestamp < since):
            continue
        after = "\n".join(message_text(m) for m in messages[index + 1 :])
        return reply.usage.total_tokens + (count(after) if after else 0)
    sent = "\n".join(text for text in (system_prompt, *(message_text(m) for m in messages)) if text)
    return count(sent) if sent else 0


def context_gauge(tokens: int, window: int) -> ContextGauge:
    """`tokens` against a context window of `window`: ok, amber from 80%, full from 100%."""
    if window <= 0:
        return ContextGauge(
            tokens, 0, None, "unknown", "The model's context window is unknown, so there is no gauge of it."
        )
    fraction = tokens / window
    # Rounded down, so a gauge below 80% or 100% never reads as that level.
    percent = math.floor(fraction * 100)
    told = f"{token_words(tokens)} of {token_words(window)} tokens of the context window ({percent}%)"
    if fraction >= 1:
        return ContextGauge(
            tokens,
            window,
            fraction,
            "full",
            f"{told}: this does not fit, so it is not sent. Start a new chat, or drop the oldest turns "
            "to go on with the latest ones.",
        )
    if fraction >= AMBER:
        return ContextGauge(
            tokens,
            window,
            fraction,
            "amber",
            f"{told}: nearly full. Start a new chat or drop the oldest turns before it fills up.",
        )
    return ContextGauge(tokens, window, fraction, "ok", told)


def expected_output(messages: Sequence[AgentMessage], max_tokens: int | None) -> int:
    """Output tokens to expect: the recent replies' average, at most `max_tokens`; `max_tokens` when
    there is no reply yet (0 when neither is known)."""
    replies = [reply for message in messages if (reply := _reply(message)) is not None]
    outputs = [reply.usage.output_tokens for reply in replies if reply.usage.output_tokens]
    recent = outputs[-RECENT_REPLIES:]
    if not recent:
        return max_tokens or 0
    average = round(sum(recent) / len(recent))
    return min(average, max_tokens) if max_tokens else average


def send_estimate(input_tokens: int, output_tokens: int, model: LlmModel) -> SendEstimate:
    """The send's cost at the model's prices (via `LlmModel.cost_of`) and the words with its source."""
    usage = LlmUsage(input_tokens=input_tokens, output_tokens=output_tokens)
    cost = model.cost_of(usage)
    tokens = f"{token_words(input_tokens)} tokens in + about {token_words(output_tokens)} out"
    if cost is None:
        source = model.price_source if model.price_source and model.price_source != "price unknown" else ""
        words = f"This send: {tokens} · price unknown" + (f" ({source})" if source else "")
        return SendEstimate(input_tokens, output_tokens, None, words)
    source = model.price_source or "the catalogue"
    return SendEstimate(
        input_tokens,
        output_tokens,
        cost.total,
        f"This send ≈ {dollars(cost.total)} ({tokens}; prices from {source})",
    )


def latest_turns_start(messages: Sequence[AgentMessage], count: Callable[[str], int], budget: int) -> int:
    """Where the latest whole turns that fit in `budget` tokens begin (`len(messages)` when none fits).

    A turn starts at a prompt, so a tool result never goes without its call.
    """
    start, used = len(messages), 0
    for index in range(len(messages) - 1, -1, -1):
        used += count(message_text(messages[index]))
        if used > budget:
            break
        if isinstance(messages[index], UserMessage):
            start = index
    return start
