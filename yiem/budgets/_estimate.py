"""What a request may cost before it is sent: input estimated from its text, output up to max tokens."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

from yiem.types import (
    AgentMessage,
    LlmModel,
    LlmUsage,
    ReasoningContent,
    ToolResultMessage,
    UserMessage,
)

# Without the model's tokenizer: about four characters per token, the usual rule for English text.
CHARS_PER_TOKEN = 4
# The output a request is assumed to reach when neither the settings nor the model give a maximum.
DEFAULT_OUTPUT_TOKENS = 4096


def tokens_by_characters(text: str) -> int:
    """Tokens in `text` by the four-characters rule (rounded up)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def message_text(message: AgentMessage) -> str:
    """The text a message sends to (or got from) a model: its text, reasoning and tool calls."""
    if isinstance(message, UserMessage | ToolResultMessage):
        return message.text
    reasoning = "".join(block.text for block in message.content if isinstance(block, ReasoningContent))
    calls = getattr(message, "tool_calls", [])
    arguments = "".join(call.name + json.dumps(call.arguments, ensure_ascii=False) for call in calls)
    return reasoning + message.text + arguments


def input_tokens(system_prompt: str, messages: Sequence[AgentMessage]) -> int:
    """The estimated input of a request sending `system_prompt` and `messages`."""
    sent = "\n".join(text for text in (system_prompt, *(message_text(m) for m in messages)) if text)
    return tokens_by_characters(sent)


def request_cost(
    model: LlmModel, system_prompt: str, messages: Sequence[AgentMessage], max_tokens: int | None = None
) -> float | None:
    """Dollars the request may cost at most: estimated input plus `max_tokens` of output (else the
    model's maximum); None when the model's price is unknown."""
    output = max_tokens or model.max_tokens or DEFAULT_OUTPUT_TOKENS
    cost = model.cost_of(LlmUsage(input_tokens=input_tokens(system_prompt, messages), output_tokens=output))
    return None if cost is None else cost.total
