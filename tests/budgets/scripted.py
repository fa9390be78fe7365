"""A priced scripted model for the budget tests: each reply costs exactly `REPLY_COST`."""

from __future__ import annotations

from typing import Any

from yiem.scripted_llm import ScriptedLlm
from yiem.types import AssistantMessage, LlmModel, LlmUsage, ModelCost, TextContent

# $10 per million input tokens, $30 per million output: a reply of 100 in and 1,000 out costs $0.031.
MODEL = LlmModel(
    id="priced-test",
    provider="scripted",
    api="openai-completions",
    cost=ModelCost(input=10.0, output=30.0),
    price_known=True,
    max_tokens=1000,
)
UNPRICED = MODEL.model_copy(update={"id": "unpriced-test", "price_known": False})
REPLY_COST = 0.031


def reply(_context: Any = None) -> AssistantMessage:
    """A new reply each call (its own timestamp), of 100 input and 1,000 output tokens."""
    return AssistantMessage(
        content=[TextContent(text="an answer")],
        api=MODEL.api,
        provider=MODEL.provider,
        model=MODEL.id,
        usage=LlmUsage(input_tokens=100, output_tokens=1000),
        stop_reason="stop",
    )


def scripted(count: int) -> ScriptedLlm:
    """A ScriptedLlm with `count` replies; `.requests` lists what it was sent."""
    return ScriptedLlm([reply] * count)
