"""What a reply stopped mid-stream used: the provider reports no usage then, so it is estimated."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence

import httpx

from yiem.providers.local_llm import LOCAL_PROVIDER, LocalLlmError, count_tokens
from yiem.types import (
    AgentMessage,
    AssistantMessage,
    AssistantMessageToolCall,
    LlmModel,
    LlmUsage,
    ReasoningContent,
    ToolResultMessage,
    UserMessage,
)

# Without the model's tokenizer: about four characters per token, the usual rule for English text.
CHARS_PER_TOKEN = 4


def estimate_stopped_usage(
    reply: AssistantMessage | AssistantMessageToolCall,
    context: Sequence[AgentMessage],
    system_prompt: str,
    model: LlmModel,
) -> bool:
    """Give a stopped reply that reports no tokens an estimate of them; True when it did.

    Input is the system prompt and `context` (what the model was sent), output the partial reply.
    The embedded llama-server counts with its own tokenizer, any other model by characters.
    """
    if reply.stop_reason != "aborted" or reply.usage.total_tokens:
        return False
    sent = "\n".join(text for text in (system_prompt, *(message_text(m) for m in context)) if text)
    count = token_counter(model)
    reply.usage = LlmUsage(input_tokens=count(sent), output_tokens=count(message_text(reply)))
    reply.cost = None  # ChatSession prices the reply from these tokens
    return True


def by_characters(text: str) -> int:
    """Tokens of `text` by the four-characters rule, for a model whose tokenizer is out of reach."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def token_counter(model: LlmModel) -> Callable[[str], int]:
    """The one token estimate: llama-server's own tokenizer for the embedded model, else characters."""
    if model.provider != LOCAL_PROVIDER or not model.base_url:
        return by_characters
    server = model.base_url.removesuffix("/").removesuffix("/v1")

    def by_tokenizer(text: str) -> int:
        if not text:
            return 0
        try:
            return count_tokens(server, text)
        except (httpx.HTTPError, LocalLlmError, ValueError):
            return by_characters(text)  # the server went away meanwhile: an estimate all the same

    return by_tokenizer


def message_text(message: AgentMessage) -> str:
    """What of a message is sent as text and counted: its text, reasoning and tool calls' arguments."""
    if isinstance(message, UserMessage | ToolResultMessage):
        return message.text
    reasoning = "".join(block.text for block in message.content if isinstance(block, ReasoningContent))
    calls = getattr(message, "tool_calls", [])
    arguments = "".join(call.name + json.dumps(call.arguments, ensure_ascii=False) for call in calls)
    return reasoning + message.text + arguments
