"""What a reply stopped mid-stream used: the provider reports no usage then, so it is estimated."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import httpx

from yiem.budgets import message_text, tokens_by_characters
from yiem.providers.local_llm import LOCAL_PROVIDER, LocalLlmError, count_tokens
from yiem.types import (
    AgentMessage,
    AssistantMessage,
    AssistantMessageToolCall,
    LlmModel,
    LlmUsage,
)


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


def token_counter(model: LlmModel) -> Callable[[str], int]:
    """The one token estimate: llama-server's own tokenizer for the embedded model, else characters."""
    if model.provider != LOCAL_PROVIDER or not model.base_url:
        return tokens_by_characters
    server = model.base_url.removesuffix("/").removesuffix("/v1")

    def by_tokenizer(text: str) -> int:
        if not text:
            return 0
        try:
            return count_tokens(server, text)
        except (httpx.HTTPError, LocalLlmError, ValueError):
            return tokens_by_characters(text)  # the server went away meanwhile: an estimate all the same

    return by_tokenizer
