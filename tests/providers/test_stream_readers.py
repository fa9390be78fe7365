"""Both wire readers take any JSON a server may send without crashing (hypothesis).

A reader may reject a chunk with ProviderStreamError (which becomes the error message);
anything else escaping it would be a bug hidden only by `stream()`'s last-resort catch.
Whole streams from a loopback server keep the stream's invariants: exactly one final message,
last; `error_message` set when the input was broken; the text streamed so far kept.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from httpx_sse import ServerSentEvent
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.scripted_http import ScriptedServer, sse, sse_reply
from yiem.llm import ReasoningDelta, StreamDone, StreamEvent, TextDelta
from yiem.providers import AnthropicClient, OpenAIChatClient
from yiem.providers._http import HttpLlmClient, ProviderStreamError
from yiem.providers._message_builder import MessageBuilder
from yiem.types import AgentContext, AssistantMessageToolCall, LlmModel, TextContent, UserMessage

MODEL = LlmModel(id="fuzz", price_known=True)

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False), st.text(max_size=8)
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)
# Known keys with values of any type, so the readers' shape checks are exercised.
openai_keys = [
    "choices",
    "usage",
    "error",
    "model",
    "x_groq",
    "delta",
    "message",
    "index",
    "finish_reason",
    "content",
    "reasoning_content",
    "reasoning",
    "tool_calls",
    "function",
    "id",
    "name",
    "arguments",
    "prompt_tokens",
    "completion_tokens",
    "prompt_tokens_details",
    "cached_tokens",
]
anthropic_keys = [
    "type",
    "message",
    "usage",
    "index",
    "content_block",
    "delta",
    "text",
    "thinking",
    "partial_json",
    "stop_reason",
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "id",
    "name",
    "input",
    "error",
    "content",
    "model",
]
anthropic_types = st.sampled_from(
    [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "ping",
        "text",
        "thinking",
        "tool_use",
        "text_delta",
        "input_json_delta",
        "thinking_delta",
        "other",
    ]
)


def shaped(keys: list[str], extra: st.SearchStrategy[Any] | None = None) -> st.SearchStrategy[Any]:
    values = json_values if extra is None else st.one_of(json_values, extra)
    return st.recursive(
        st.dictionaries(st.sampled_from(keys), values, max_size=4),
        lambda inner: st.one_of(
            st.dictionaries(
                st.sampled_from(keys), st.one_of(inner, st.lists(inner, max_size=2), values), max_size=5
            )
        ),
        max_leaves=20,
    )


STOP_REASONS = {"stop", "length", "tool_calls", "error", "aborted"}
BROKEN = b"data: {not json\n\n"
CONTEXT = AgentContext(messages=[UserMessage(content=[TextContent(text="hi")])])


def _check_final(message: Any, builder: MessageBuilder | None = None) -> None:
    """What every final message holds, whatever the input was."""
    assert message.stop_reason in STOP_REASONS
    if message.stop_reason == "error":
        assert message.error_message
    if isinstance(message, AssistantMessageToolCall):
        # Tool calls are only handed on when every one of them could be read.
        assert message.tool_calls and message.error_message is None
        assert all(call.name and isinstance(call.arguments, dict) for call in message.tool_calls)
    if builder is not None:
        assert message.text == "".join(
            block.text for block in builder.partial.content if isinstance(block, TextContent)
        )


def _stream(client: HttpLlmClient, server: ScriptedServer, events: list[bytes]) -> Any:
    """Stream `events` from the loopback server; checks the invariants and returns the final message."""
    server.script(sse_reply(events))
    received: list[StreamEvent] = list(client.stream(MODEL, CONTEXT))
    finals = [event for event in received if isinstance(event, StreamDone)]
    assert len(finals) == 1 and received[-1] is finals[0]
    message = finals[0].message
    _check_final(message)
    # The text and reasoning streamed so far are kept in the final message, broken input or not.
    text = "".join(event.delta for event in received if isinstance(event, TextDelta))
    reasoning = "".join(event.delta for event in received if isinstance(event, ReasoningDelta))
    assert message.text == text
    assert "".join(block.text for block in message.content if block.type == "reasoning") == reasoning
    return message


@pytest.fixture(scope="module")
def fuzz_server() -> Any:
    server = ScriptedServer()
    yield server
    server.close()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.one_of(shaped(openai_keys), json_values), max_size=5),
    st.booleans(),
    st.integers(0, 5),
)
def test_openai_stream_keeps_its_invariants(
    fuzz_server: ScriptedServer, chunks: list[Any], broken: bool, at: int
) -> None:
    events = [sse(chunk) for chunk in chunks]
    if broken:
        events.insert(min(at, len(events)), BROKEN)
    else:
        events.append(sse("[DONE]"))
    message = _stream(OpenAIChatClient(fuzz_server.url + "/v1"), fuzz_server, events)
    if broken:
        assert message.stop_reason == "error" and message.error_message


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(anthropic_types, shaped(anthropic_keys, anthropic_types)), max_size=5),
    st.booleans(),
    st.integers(0, 5),
)
def test_anthropic_stream_keeps_its_invariants(
    fuzz_server: ScriptedServer, chunks: list[tuple[str, Any]], broken: bool, at: int
) -> None:
    events = [sse(data, name) for name, data in chunks]
    if broken:
        events.insert(min(at, len(events)), BROKEN)
    else:
        events.append(sse({"type": "message_stop"}, "message_stop"))
    message = _stream(AnthropicClient(fuzz_server.url, api_key="sk-ant"), fuzz_server, events)
    if broken:
        assert message.stop_reason == "error" and message.error_message


def test_a_stream_cut_after_some_text_keeps_it_and_says_so(fuzz_server: ScriptedServer) -> None:
    """The invariants above, on one input written out: text, then a chunk that is not JSON."""
    chunk = {"choices": [{"index": 0, "delta": {"content": "half a rep"}}]}
    message = _stream(OpenAIChatClient(fuzz_server.url + "/v1"), fuzz_server, [sse(chunk), BROKEN])
    assert message.text == "half a rep" and message.stop_reason == "error"
    assert "not valid JSON" in message.error_message or "malformed JSON" in message.error_message


def _feed(client: HttpLlmClient, chunks: list[Any], events: list[str] | None = None) -> None:
    sse = [
        ServerSentEvent(event=(events[i] if events else "message"), data=json.dumps(chunk))
        for i, chunk in enumerate(chunks)
    ]
    builder = MessageBuilder(MODEL, "fuzz")
    with contextlib.suppress(ProviderStreamError):
        list(client.read_events(iter(sse), builder))
    _check_final(builder.finish().message, builder)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(shaped(openai_keys), json_values), max_size=6))
def test_openai_reader_survives_any_json(chunks: list[Any]) -> None:
    _feed(OpenAIChatClient("http://unused"), chunks)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(shaped(anthropic_keys, anthropic_types), max_size=6),
    st.lists(anthropic_types, min_size=6, max_size=6),
)
def test_anthropic_reader_survives_any_json(chunks: list[Any], names: list[str]) -> None:
    _feed(AnthropicClient("http://unused"), chunks, names)


@settings(max_examples=100, deadline=None)
@given(st.one_of(shaped(openai_keys), json_values))
def test_non_streamed_bodies_survive_any_json(body: Any) -> None:
    for client in (OpenAIChatClient("http://unused"), AnthropicClient("http://unused")):
        builder = MessageBuilder(MODEL, "fuzz")
        with contextlib.suppress(ProviderStreamError):
            list(client.read_body(body, builder))
        _check_final(builder.finish().message, builder)
