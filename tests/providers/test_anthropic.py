"""AnthropicClient: the real llama-server's `/v1/messages`, and exact stream events from a scripted server."""

from __future__ import annotations

from typing import Any

import pytest

from tests.providers.test_openai_chat import GREEDY, TOOL_OPTIONS, tool_prompt
from tests.scripted_http import ScriptedServer, anthropic_event, json_reply, sse_reply
from yiem.llm import ReasoningDelta, StreamDone, StreamStart, TextDelta, ToolCallDelta
from yiem.providers import AnthropicClient
from yiem.providers.anthropic import to_anthropic_messages
from yiem.providers.local_llm import LocalLlmServer
from yiem.types import (
    AgentContext,
    AgentToolCall,
    AssistantMessage,
    AssistantMessageToolCall,
    ImageContent,
    LlmModel,
    ModelCost,
    ReasoningContent,
    TextContent,
    ToolResultMessage,
    UserMessage,
)


def _hello() -> AgentContext:
    return AgentContext(
        system_prompt="You are a helpful assistant.",
        messages=[UserMessage(content=[TextContent(text="Say hello in one short sentence.")])],
    )


# --- against the real llama-server ---------------------------------------------------------------


@pytest.mark.llama
@pytest.mark.parametrize("streaming", [True, False], ids=["streamed", "non-streamed"])
def test_plain_reply_over_v1_messages(llama_server: LocalLlmServer, streaming: bool) -> None:
    client = AnthropicClient(llama_server.base_url, api_key="unused", streaming=streaming)
    events = list(client.stream(llama_server.llm_model(), _hello(), options=GREEDY))
    assert isinstance(events[0], StreamStart) and isinstance(events[-1], StreamDone)
    message = events[-1].message
    assert isinstance(message, AssistantMessage) and message.error_message is None
    assert message.api == "anthropic-messages" and message.text.strip()
    assert message.stop_reason in ("stop", "length")
    assert message.usage.output_tokens > 0
    assert message.usage.input_tokens + message.usage.cache_read_tokens > 0
    if streaming:
        assert sum(isinstance(event, TextDelta) for event in events) > 1


@pytest.mark.llama
@pytest.mark.parametrize("streaming", [True, False], ids=["streamed", "non-streamed"])
def test_tool_use_from_a_real_reply(llama_server_tools: LocalLlmServer, streaming: bool) -> None:
    client = AnthropicClient(
        llama_server_tools.base_url, streaming=streaming, extra_body={"tool_choice": {"type": "any"}}
    )
    events = list(client.stream(llama_server_tools.llm_model(), tool_prompt(), options=TOOL_OPTIONS))
    message = events[-1].message  # type: ignore[union-attr]
    assert isinstance(message, AssistantMessageToolCall), message.error_message
    assert message.stop_reason == "tool_calls"
    assert all(
        call.name == "get_weather" and isinstance(call.arguments.get("city"), str)
        for call in message.tool_calls
    )
    if streaming:
        assert sum(isinstance(event, ToolCallDelta) for event in events) > len(message.tool_calls)


@pytest.mark.llama
def test_tool_result_blocks_are_accepted(llama_server_tools: LocalLlmServer) -> None:
    model = llama_server_tools.llm_model()
    asked = AnthropicClient(
        llama_server_tools.base_url, extra_body={"tool_choice": {"type": "any"}}
    ).complete(model, tool_prompt(), options=TOOL_OPTIONS)
    assert isinstance(asked, AssistantMessageToolCall)
    context = tool_prompt()
    context.messages = [context.messages[0], asked]
    context.messages += [
        ToolResultMessage(tool_call_id=call.id, tool_name=call.name, content=[TextContent(text="Sunny")])
        for call in asked.tool_calls
    ]
    follow_up = AnthropicClient(llama_server_tools.base_url).complete(model, context, options=GREEDY)
    assert follow_up.error_message is None, follow_up.error_message


@pytest.mark.llama
def test_list_models(llama_server: LocalLlmServer) -> None:
    assert "smollm2" in AnthropicClient(llama_server.base_url).list_models()


# --- conversion -----------------------------------------------------------------------------------


def test_conversion_merges_tool_results_into_one_user_turn() -> None:
    call_a = AgentToolCall(id="a", name="f", arguments={"x": 1})
    call_b = AgentToolCall(id="b", name="g", arguments={})
    messages = to_anthropic_messages(
        [
            UserMessage(content=[TextContent(text="hi"), ImageContent(data="QUJD", mime_type="image/jpeg")]),
            AssistantMessageToolCall(
                content=[ReasoningContent(text="hmm"), TextContent(text="calling")],
                tool_calls=[call_a, call_b],
            ),
            ToolResultMessage(tool_call_id="a", tool_name="f", content=[TextContent(text="1")]),
            ToolResultMessage(
                tool_call_id="b", tool_name="g", content=[TextContent(text="no")], is_error=True
            ),
            AssistantMessage(content=[], stop_reason="error", error_message="boom"),
            UserMessage(content=[TextContent(text="next")]),
        ]
    )
    assert messages == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "hi"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "QUJD"}},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "calling"},
                {"type": "tool_use", "id": "a", "name": "f", "input": {"x": 1}},
                {"type": "tool_use", "id": "b", "name": "g", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "a", "content": [{"type": "text", "text": "1"}]},
                {
                    "type": "tool_result",
                    "tool_use_id": "b",
                    "content": [{"type": "text", "text": "no"}],
                    "is_error": True,
                },
                {"type": "text", "text": "next"},
            ],
        },
    ]


# --- exact events from the scripted server ---------------------------------------------------------

SCRIPTED = LlmModel(
    id="claude-scripted",
    provider="anthropic",
    cost=ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75),
    price_known=True,
    max_tokens=1234,
)


def _final(server: ScriptedServer, **kwargs: Any) -> Any:
    events = list(AnthropicClient(server.url, api_key="sk-ant", **kwargs).stream(SCRIPTED, tool_prompt()))
    assert sum(isinstance(event, StreamDone) for event in events) == 1
    return events


def _start(usage: dict[str, int] | None = None) -> bytes:
    message = {
        "id": "m",
        "model": "claude-scripted-1",
        "usage": usage or {"input_tokens": 10, "output_tokens": 1},
    }
    return anthropic_event("message_start", message=message)


def test_full_stream_with_thinking_text_tool_use_and_cache_usage(scripted_server: ScriptedServer) -> None:
    usage = {
        "input_tokens": 12,
        "cache_read_input_tokens": 1000,
        "cache_creation_input_tokens": 50,
        "output_tokens": 1,
    }
    scripted_server.script(
        sse_reply(
            [
                _start(usage),
                anthropic_event("ping"),
                anthropic_event(
                    "content_block_start", index=0, content_block={"type": "thinking", "thinking": ""}
                ),
                anthropic_event(
                    "content_block_delta", index=0, delta={"type": "thinking_delta", "thinking": "Weather."}
                ),
                anthropic_event(
                    "content_block_delta", index=0, delta={"type": "signature_delta", "signature": "s"}
                ),
                anthropic_event("content_block_stop", index=0),
                anthropic_event("content_block_start", index=1, content_block={"type": "text", "text": ""}),
                anthropic_event(
                    "content_block_delta", index=1, delta={"type": "text_delta", "text": "Let me check."}
                ),
                anthropic_event("content_block_stop", index=1),
                anthropic_event(
                    "content_block_start",
                    index=2,
                    content_block={"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}},
                ),
                anthropic_event(
                    "content_block_delta",
                    index=2,
                    delta={"type": "input_json_delta", "partial_json": '{"city"'},
                ),
                anthropic_event(
                    "content_block_delta",
                    index=2,
                    delta={"type": "input_json_delta", "partial_json": ': "Oslo"}'},
                ),
                anthropic_event("content_block_stop", index=2),
                anthropic_event(
                    "message_delta", delta={"stop_reason": "tool_use"}, usage={"output_tokens": 40}
                ),
                anthropic_event("message_stop"),
            ]
        )
    )
    events = _final(scripted_server)
    request = scripted_server.requests[0]
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == "sk-ant" and request.headers["anthropic-version"] == "2023-06-01"
    assert request.body["system"] == "You are a helpful assistant." and request.body["max_tokens"] == 1234
    assert request.body["tools"][0]["input_schema"]["required"] == ["city"]
    assert [event.delta for event in events if isinstance(event, ReasoningDelta)] == ["Weather."]
    message = events[-1].message
    assert isinstance(message, AssistantMessageToolCall)
    assert message.tool_calls == [AgentToolCall(id="toolu_1", name="get_weather", arguments={"city": "Oslo"})]
    assert message.text == "Let me check." and message.content[0] == ReasoningContent(text="Weather.")
    assert message.stop_reason == "tool_calls" and message.model == "claude-scripted-1"
    assert (
        message.usage.input_tokens,
        message.usage.cache_read_tokens,
        message.usage.cache_write_tokens,
    ) == (
        12,
        1000,
        50,
    )
    assert message.usage.output_tokens == 40
    assert message.cost.cache_write == pytest.approx(50 * 3.75 / 1e6)
    assert message.cost.total == pytest.approx((12 * 3 + 1000 * 0.3 + 50 * 3.75 + 40 * 15) / 1e6)


@pytest.mark.parametrize(
    ("wire", "ours"), [("end_turn", "stop"), ("max_tokens", "length"), ("stop_sequence", "stop")]
)
def test_stop_reasons_are_mapped(scripted_server: ScriptedServer, wire: str, ours: str) -> None:
    scripted_server.script(
        sse_reply(
            [
                _start(),
                anthropic_event("content_block_start", index=0, content_block={"type": "text", "text": "Hi"}),
                anthropic_event("message_delta", delta={"stop_reason": wire}, usage={"output_tokens": 2}),
                anthropic_event("message_stop"),
            ]
        )
    )
    message = _final(scripted_server)[-1].message
    assert message.stop_reason == ours and message.text == "Hi" and message.error_message is None


def test_error_event_mid_stream(scripted_server: ScriptedServer) -> None:
    scripted_server.script(
        sse_reply(
            [
                _start(),
                anthropic_event("content_block_start", index=0, content_block={"type": "text", "text": ""}),
                anthropic_event(
                    "content_block_delta", index=0, delta={"type": "text_delta", "text": "Partial"}
                ),
                anthropic_event("error", error={"type": "overloaded_error", "message": "Overloaded"}),
            ]
        )
    )
    message = _final(scripted_server)[-1].message
    assert message.stop_reason == "error"
    assert (
        "Overloaded (overloaded_error)" in message.error_message
        and "partial reply is kept" in message.error_message
    )
    assert message.text == "Partial"


def test_http_error_body_is_quoted(scripted_server: ScriptedServer) -> None:
    body = {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}
    scripted_server.script(json_reply(body, 401))
    message = _final(scripted_server)[-1].message
    assert message.stop_reason == "error"
    assert "HTTP 401" in message.error_message and "invalid x-api-key" in message.error_message


def test_stream_without_message_stop_is_incomplete(scripted_server: ScriptedServer) -> None:
    scripted_server.script(
        sse_reply(
            [
                _start(),
                anthropic_event(
                    "content_block_start", index=0, content_block={"type": "text", "text": "Hal"}
                ),
            ]
        )
    )
    message = _final(scripted_server)[-1].message
    assert message.stop_reason == "error" and message.text == "Hal"
    assert "ended before the reply was complete" in message.error_message


def test_non_streamed_reply(scripted_server: ScriptedServer) -> None:
    scripted_server.script(
        json_reply(
            {
                "type": "message",
                "model": "claude-x",
                "content": [
                    {"type": "text", "text": "Sure."},
                    {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"city": "Rome"}},
                ],
                "stop_reason": "tool_use",
                "usage": {"input_tokens": 3, "output_tokens": 4, "cache_read_input_tokens": 2},
            }
        )
    )
    message = _final(scripted_server, streaming=False)[-1].message
    assert isinstance(message, AssistantMessageToolCall)
    assert message.tool_calls[0].arguments == {"city": "Rome"} and message.text == "Sure."
    assert message.usage.cache_read_tokens == 2 and message.usage.output_tokens == 4
