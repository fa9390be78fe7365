"""OpenAIChatClient against the real llama-server + SmolLM2 (shapes, not wording)."""

from __future__ import annotations

import pytest

from yiem.llm import GenerationOptions, StreamDone, StreamStart, TextDelta
from yiem.local_llm import LocalLlmServer
from yiem.providers import OpenAIChatClient
from yiem.types import AgentContext, AssistantMessage, TextContent, UserMessage

pytestmark = pytest.mark.llama
GREEDY = GenerationOptions(temperature=0, max_tokens=24)


def _hello() -> AgentContext:
    return AgentContext(
        system_prompt="You are a helpful assistant.",
        messages=[UserMessage(content=[TextContent(text="Say hello in one short sentence.")])],
    )


def test_streams_text_with_usage(llama_server: LocalLlmServer) -> None:
    client = OpenAIChatClient(llama_server.openai_base_url)
    events = list(client.stream(llama_server.llm_model(), _hello(), options=GREEDY))
    assert isinstance(events[0], StreamStart)
    deltas = [event for event in events if isinstance(event, TextDelta)]
    assert len(deltas) > 1
    done = events[-1]
    assert isinstance(done, StreamDone) and [e for e in events if isinstance(e, StreamDone)] == [done]
    message = done.message
    assert isinstance(message, AssistantMessage)
    assert message.error_message is None
    assert message.stop_reason in ("stop", "length")
    assert message.text == "".join(delta.delta for delta in deltas) and message.text.strip()
    assert message.usage.input_tokens + message.usage.cache_read_tokens > 0
    assert message.usage.output_tokens > 0
    assert message.provider == "local" and message.api == "openai-completions"
    assert message.ttft_ms is not None and message.duration_ms is not None
    assert message.duration_ms >= message.ttft_ms


def test_non_streaming_reply_has_the_same_shape(llama_server: LocalLlmServer) -> None:
    client = OpenAIChatClient(llama_server.openai_base_url, streaming=False)
    message = client.complete(llama_server.llm_model(), _hello(), options=GREEDY)
    assert isinstance(message, AssistantMessage) and message.error_message is None
    assert message.text.strip()
    assert message.usage.output_tokens > 0
