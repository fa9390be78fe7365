"""Both wire readers take any JSON a server may send without crashing (hypothesis).

A reader may reject a chunk with ProviderStreamError (which becomes the error message);
anything else escaping it would be a bug hidden only by `stream()`'s last-resort catch.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from httpx_sse import ServerSentEvent
from hypothesis import given, settings
from hypothesis import strategies as st

from yiem.providers import AnthropicClient, OpenAIChatClient
from yiem.providers._http import HttpLlmClient, ProviderStreamError
from yiem.providers._message_builder import MessageBuilder
from yiem.types import LlmModel

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


def _feed(client: HttpLlmClient, chunks: list[Any], events: list[str] | None = None) -> None:
    sse = [
        ServerSentEvent(event=(events[i] if events else "message"), data=json.dumps(chunk))
        for i, chunk in enumerate(chunks)
    ]
    builder = MessageBuilder(MODEL, "fuzz")
    with contextlib.suppress(ProviderStreamError):
        list(client.read_events(iter(sse), builder))
    message = builder.finish().message
    assert message.stop_reason


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
        assert builder.finish().message.stop_reason
