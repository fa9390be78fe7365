"""OpenAIChatClient against the real llama-server + SmolLM2 (shapes, not wording)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.scripted_http import ScriptedServer, json_reply, openai_chunk, openai_text_stream, sse, sse_reply
from yiem.llm import GenerationOptions, ReasoningDelta, StreamDone, StreamStart, TextDelta, ToolCallDelta
from yiem.providers import ModelListError, OpenAIChatClient
from yiem.providers.local_llm import LocalLlmServer
from yiem.types import (
    AgentContext,
    AgentTool,
    AgentToolCall,
    AssistantMessage,
    AssistantMessageToolCall,
    LlmModel,
    ModelCost,
    ReasoningContent,
    TextContent,
    ToolResultMessage,
    UserMessage,
)

GREEDY = GenerationOptions(temperature=0, max_tokens=24)


def _hello() -> AgentContext:
    return AgentContext(
        system_prompt="You are a helpful assistant.",
        messages=[UserMessage(content=[TextContent(text="Say hello in one short sentence.")])],
    )


@pytest.mark.llama
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


@pytest.mark.llama
def test_non_streaming_reply_has_the_same_shape(llama_server: LocalLlmServer) -> None:
    client = OpenAIChatClient(llama_server.openai_base_url, streaming=False)
    message = client.complete(llama_server.llm_model(), _hello(), options=GREEDY)
    assert isinstance(message, AssistantMessage) and message.error_message is None
    assert message.text.strip()
    assert message.usage.output_tokens > 0


# --- tool calls against the real server (Qwen2.5 template; see tests/fixtures/llama.py) ----------

WEATHER_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def weather_tool() -> AgentTool:
    return AgentTool(
        name="get_weather",
        description="Get the current weather for a city",
        input_schema=WEATHER_SCHEMA,
        execute=lambda call_id, arguments, signal: f"Sunny in {arguments['city']}",
    )


def tool_prompt() -> AgentContext:
    """The test device: an assistant turn opened with `<tool_call>` makes SmolLM2 emit a call."""
    return AgentContext(
        system_prompt="You are a helpful assistant.",
        tools={"get_weather": weather_tool()},
        messages=[
            UserMessage(content=[TextContent(text="What is the weather in Paris?")]),
            AssistantMessage(content=[TextContent(text="<tool_call>\n")]),
        ],
    )


TOOL_OPTIONS = GenerationOptions(temperature=0, max_tokens=200)


@pytest.mark.llama
@pytest.mark.parametrize("streaming", [True, False], ids=["streamed", "non-streamed"])
def test_tool_calls_are_parsed_from_a_real_reply(llama_server_tools: LocalLlmServer, streaming: bool) -> None:
    client = OpenAIChatClient(
        llama_server_tools.openai_base_url, streaming=streaming, extra_body={"tool_choice": "required"}
    )
    events = list(client.stream(llama_server_tools.llm_model(), tool_prompt(), options=TOOL_OPTIONS))
    message = events[-1].message  # type: ignore[union-attr]
    assert isinstance(message, AssistantMessageToolCall), message.error_message
    assert message.stop_reason == "tool_calls" and message.error_message is None
    assert message.tool_calls and all(call.name == "get_weather" for call in message.tool_calls)
    assert all(isinstance(call.arguments.get("city"), str) for call in message.tool_calls)
    assert len({call.id for call in message.tool_calls}) == len(message.tool_calls)
    fragments = [event for event in events if isinstance(event, ToolCallDelta)]
    if streaming:
        assert len(fragments) > len(message.tool_calls)  # arguments arrived in pieces
        assert "".join(f.arguments_delta for f in fragments if f.index == 0).strip().startswith("{")


@pytest.mark.llama
def test_tool_result_follow_up_is_accepted(llama_server_tools: LocalLlmServer) -> None:
    model = llama_server_tools.llm_model()
    caller = OpenAIChatClient(llama_server_tools.openai_base_url, extra_body={"tool_choice": "required"})
    asked = caller.complete(model, tool_prompt(), options=TOOL_OPTIONS)
    assert isinstance(asked, AssistantMessageToolCall)
    context = tool_prompt()
    context.messages = [context.messages[0], asked]
    context.messages += [
        ToolResultMessage(
            tool_call_id=call.id, tool_name=call.name, content=[TextContent(text="Sunny, 21 C")]
        )
        for call in asked.tool_calls
    ]
    follow_up = OpenAIChatClient(llama_server_tools.openai_base_url).complete(model, context, options=GREEDY)
    assert follow_up.error_message is None, follow_up.error_message
    assert follow_up.stop_reason in ("stop", "length", "tool_calls")


@pytest.mark.llama
def test_list_models_from_the_real_server(llama_server: LocalLlmServer) -> None:
    assert OpenAIChatClient(llama_server.openai_base_url).list_models() == ["smollm2"]


# --- exact wire paths against the scripted server ---------------------------------------------


def _scripted(server: ScriptedServer, **kwargs: Any) -> OpenAIChatClient:
    return OpenAIChatClient(server.url + "/v1", **kwargs)


def _final(client: OpenAIChatClient, context: AgentContext | None = None) -> Any:
    events = list(client.stream(SCRIPTED, context or _hello()))
    assert sum(isinstance(event, StreamDone) for event in events) == 1
    return events[-1].message  # type: ignore[union-attr]


SCRIPTED = LlmModel(
    id="scripted",
    provider="scripted",
    cost=ModelCost(input=2.0, output=8.0, cache_read=0.5),
    price_known=True,
)


def test_request_body_asks_for_usage_and_sends_tools(scripted_server: ScriptedServer) -> None:
    scripted_server.script(sse_reply(openai_text_stream("ok")))
    client = _scripted(scripted_server, api_key="sk-test", max_tokens_field="max_completion_tokens")
    context = tool_prompt()
    events = list(client.stream(SCRIPTED, context, options=GenerationOptions(temperature=0.5, max_tokens=9)))
    assert events[-1].message.text == "ok"  # type: ignore[union-attr]
    request = scripted_server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["Authorization"] == "Bearer sk-test"
    body = request.body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["model"] == "scripted" and body["temperature"] == 0.5 and body["max_completion_tokens"] == 9
    assert body["tools"][0]["function"]["name"] == "get_weather"
    assert body["messages"][0]["role"] == "system"


def test_usage_maps_cached_and_reasoning_tokens(scripted_server: ScriptedServer) -> None:
    usage = {
        "prompt_tokens": 1000,
        "completion_tokens": 300,
        "prompt_tokens_details": {"cached_tokens": 800},
        "completion_tokens_details": {"reasoning_tokens": 200},
    }
    scripted_server.script(sse_reply(openai_text_stream("hi", usage=usage)))
    message = _final(_scripted(scripted_server))
    assert message.usage.input_tokens == 200 and message.usage.cache_read_tokens == 800
    assert message.usage.output_tokens == 300 and message.usage.reasoning_tokens == 200
    assert message.usage.total_tokens == 1300
    assert message.cost.input == pytest.approx(200 * 2.0 / 1e6)
    assert message.cost.cache_read == pytest.approx(800 * 0.5 / 1e6)
    assert message.cost.output == pytest.approx(300 * 8.0 / 1e6)


def test_missing_usage_chunk_is_tolerated(scripted_server: ScriptedServer) -> None:
    scripted_server.script(sse_reply(openai_text_stream("no", " usage")))
    message = _final(_scripted(scripted_server))
    assert message.error_message is None and message.text == "no usage"
    assert message.usage.total_tokens == 0


def test_reasoning_content_streams_as_reasoning(scripted_server: ScriptedServer) -> None:
    scripted_server.script(
        sse_reply(
            [
                openai_chunk({"reasoning_content": "Let me think. "}),
                openai_chunk({"reasoning": "Done."}),
                openai_chunk({"content": "42"}),
                openai_chunk({}, "stop"),
                sse("[DONE]"),
            ]
        )
    )
    events = list(_scripted(scripted_server).stream(SCRIPTED, _hello()))
    assert [event.delta for event in events if isinstance(event, ReasoningDelta)] == [
        "Let me think. ",
        "Done.",
    ]
    message = events[-1].message  # type: ignore[union-attr]
    assert (
        isinstance(message.content[0], ReasoningContent) and message.content[0].text == "Let me think. Done."
    )
    assert message.text == "42"


def test_tool_call_arguments_split_over_50_chunks(scripted_server: ScriptedServer) -> None:
    arguments = json.dumps({"city": "Paris", "units": "metric", "days": [1, 2, 3], "note": "x" * 40})
    pieces = [arguments[len(arguments) * i // 50 : len(arguments) * (i + 1) // 50] for i in range(50)]
    assert len(pieces) == 50 and all(pieces)
    first = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": ""},
    }
    chunks = [openai_chunk({"tool_calls": [first]})]
    chunks += [
        openai_chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}) for piece in pieces
    ]
    chunks += [openai_chunk({}, "tool_calls"), sse("[DONE]")]
    scripted_server.script(sse_reply(chunks))
    events = list(_scripted(scripted_server).stream(SCRIPTED, _hello()))
    fragments = [event for event in events if isinstance(event, ToolCallDelta)]
    assert len(fragments) == 51 and all(f.id == "call_1" and f.name == "get_weather" for f in fragments)
    message = events[-1].message  # type: ignore[union-attr]
    assert isinstance(message, AssistantMessageToolCall)
    assert message.tool_calls == [
        AgentToolCall(id="call_1", name="get_weather", arguments=json.loads(arguments))
    ]


def test_two_tool_calls_interleaved_by_index(scripted_server: ScriptedServer) -> None:
    def part(index: int, text: str, **function: str) -> bytes:
        call: dict[str, Any] = {"index": index, "function": {"arguments": text, **function}}
        if function:
            call["id"] = f"call_{index}"
        return openai_chunk({"tool_calls": [call]})

    scripted_server.script(
        sse_reply(
            [
                part(0, '{"ci', name="a"),
                part(1, '{"x"', name="b"),
                part(0, 'ty": "Oslo"}'),
                part(1, ": 1}"),
                openai_chunk({}, "tool_calls"),
                sse("[DONE]"),
            ]
        )
    )
    message = _final(_scripted(scripted_server))
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [
        ("call_0", "a", {"city": "Oslo"}),
        ("call_1", "b", {"x": 1}),
    ]


def test_tool_calls_without_index_are_told_apart_by_id(scripted_server: ScriptedServer) -> None:
    """Issue 12: servers that send one whole call per chunk and no `index`; fragments without an id
    continue the call before them."""

    def call(call_id: str | None, name: str | None, arguments: str) -> dict[str, Any]:
        fragment: dict[str, Any] = {"function": {"arguments": arguments}}
        if call_id:
            fragment["id"] = call_id
        if name:
            fragment["function"]["name"] = name
        return fragment

    chunks = [
        openai_chunk({"tool_calls": [call("c1", "f", '{"x":1}')]}),
        openai_chunk({"tool_calls": [call("c2", "g", '{"y":')]}),
        openai_chunk({"tool_calls": [call(None, None, "2}")]}),
        openai_chunk({}, "tool_calls"),
        sse("[DONE]"),
    ]
    scripted_server.script(sse_reply(chunks))
    message = list(_scripted(scripted_server).stream(SCRIPTED, _hello()))[-1].message  # type: ignore[union-attr]
    assert isinstance(message, AssistantMessageToolCall), message.error_message
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [
        ("c1", "f", {"x": 1}),
        ("c2", "g", {"y": 2}),
    ]


def test_invalid_final_arguments_are_an_error_not_a_guess(scripted_server: ScriptedServer) -> None:
    call = {"index": 0, "id": "call_9", "function": {"name": "get_weather", "arguments": '{"city": "Par'}}
    scripted_server.script(
        sse_reply(
            [
                openai_chunk({"content": "Checking."}),
                openai_chunk({"tool_calls": [call]}),
                openai_chunk({}, "tool_calls"),
                sse("[DONE]"),
            ]
        )
    )
    message = _final(_scripted(scripted_server))
    assert isinstance(message, AssistantMessage) and not isinstance(message, AssistantMessageToolCall)
    assert message.stop_reason == "error"
    assert "get_weather" in message.error_message and "not valid JSON" in message.error_message
    assert '{"city": "Par' in message.error_message
    assert message.text == "Checking."


def test_content_filter_is_an_error(scripted_server: ScriptedServer) -> None:
    scripted_server.script(sse_reply([openai_chunk({"content": "Once"}), openai_chunk({}, "content_filter")]))
    message = _final(_scripted(scripted_server))
    assert message.stop_reason == "error" and "content filter" in message.error_message
    assert message.text == "Once"


def test_length_finish_is_kept(scripted_server: ScriptedServer) -> None:
    scripted_server.script(
        sse_reply([openai_chunk({"content": "cut"}), openai_chunk({}, "length"), sse("[DONE]")])
    )
    message = _final(_scripted(scripted_server))
    assert message.stop_reason == "length" and message.error_message is None


def test_error_object_inside_the_stream(scripted_server: ScriptedServer) -> None:
    scripted_server.script(
        sse_reply(
            [openai_chunk({"content": "a"}), sse({"error": {"message": "Upstream overloaded", "code": 502}})]
        )
    )
    message = _final(_scripted(scripted_server))
    assert message.stop_reason == "error" and "Upstream overloaded" in message.error_message
    assert message.text == "a"


def test_finish_reason_without_done_marker_is_complete(scripted_server: ScriptedServer) -> None:
    scripted_server.script(sse_reply(openai_text_stream("whole", done=False)))
    message = _final(_scripted(scripted_server))
    assert message.error_message is None and message.text == "whole"


def test_json_answer_to_a_stream_request_is_read(scripted_server: ScriptedServer) -> None:
    scripted_server.script(
        json_reply(
            {
                "model": "scripted-2",
                "choices": [{"message": {"content": "plain"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 5, "completion_tokens": 1},
            }
        )
    )
    message = _final(_scripted(scripted_server))
    assert message.text == "plain" and message.usage.input_tokens == 5 and message.model == "scripted-2"


def test_tool_calls_finished_with_stop_are_still_tool_calls(scripted_server: ScriptedServer) -> None:
    call = {"index": 0, "id": "c1", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}
    scripted_server.script(
        sse_reply([openai_chunk({"tool_calls": [call]}), openai_chunk({}, "stop"), sse("[DONE]")])
    )
    message = _final(_scripted(scripted_server))
    assert isinstance(message, AssistantMessageToolCall) and message.stop_reason == "tool_calls"


def test_non_streamed_tool_call_with_dict_arguments(scripted_server: ScriptedServer) -> None:
    reply = {
        "choices": [
            {
                "message": {"tool_calls": [{"id": "c", "function": {"name": "f", "arguments": {"a": 1}}}]},
                "finish_reason": "tool_calls",
            }
        ]
    }
    scripted_server.script(json_reply(reply))
    message = _final(_scripted(scripted_server, streaming=False))
    assert scripted_server.requests[0].body["stream"] is False
    assert message.tool_calls == [AgentToolCall(id="c", name="f", arguments={"a": 1})]


@pytest.mark.parametrize(
    "payload",
    [
        {"object": "list", "data": [{"id": "gpt-a", "object": "model"}, {"id": "gpt-b"}]},
        {"models": [{"name": "gpt-a", "model": "gpt-a"}, {"model": "gpt-b"}], "data": None},
    ],
    ids=["openai-shape", "llama.cpp-shape"],
)
def test_list_models_accepts_both_shapes(scripted_server: ScriptedServer, payload: dict[str, Any]) -> None:
    scripted_server.script(json_reply(payload))
    assert _scripted(scripted_server, api_key="k").list_models() == ["gpt-a", "gpt-b"]
    assert scripted_server.requests[0].path == "/v1/models"
    assert scripted_server.requests[0].headers["Authorization"] == "Bearer k"


def test_list_models_errors_are_specific(scripted_server: ScriptedServer) -> None:
    scripted_server.script(json_reply({"error": {"message": "no key"}}, 401), json_reply({"weird": 1}))
    with pytest.raises(ModelListError, match=r"HTTP 401.*no key"):
        _scripted(scripted_server).list_models()
    with pytest.raises(ModelListError, match="cannot read"):
        _scripted(scripted_server).list_models()
