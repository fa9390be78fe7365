"""ScriptedLlm: the scripted LlmClient tests and demos use."""

from __future__ import annotations

import threading
from typing import Any

from yiem import (
    AbortSignal,
    AgentContext,
    AssistantMessageToolCall,
    GenerationOptions,
    LlmClient,
    LlmModel,
    ReasoningDelta,
    ScriptedLlm,
    StreamDone,
    StreamStart,
    TextContent,
    TextDelta,
    ToolCallDelta,
    UserMessage,
)

MODEL = LlmModel(id="scripted", provider="test")
CONTEXT = AgentContext(system_prompt="s", messages=[UserMessage(content=[TextContent(text="hi")])])


def _events(llm: ScriptedLlm, signal: AbortSignal | None = None) -> list[Any]:
    return list(llm.stream(MODEL, CONTEXT, signal))


def test_is_an_llm_client() -> None:
    assert isinstance(ScriptedLlm([]), LlmClient)


def test_streams_text_in_small_deltas_then_one_done() -> None:
    events = _events(ScriptedLlm(["Hello there, world"], chunk_size=4))
    assert isinstance(events[0], StreamStart)
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert [d.delta for d in deltas] == ["Hell", "o th", "ere,", " wor", "ld"]
    assert [type(e) for e in events].count(StreamDone) == 1
    assert isinstance(events[-1], StreamDone)
    assert events[-1].message.text == "Hello there, world"
    assert events[-1].message.model == "scripted"
    # The partial message grows in place as deltas arrive.
    assert deltas[-1].partial.text == "Hello there, world"


def test_streams_reasoning_and_tool_calls() -> None:
    response = {
        "message": {
            "reasoning_content": "think",
            "tool_calls": [{"id": "c1", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}}],
        },
        "usage": {"inputTokens": 10, "outputTokens": 3},
    }
    events = _events(ScriptedLlm([response], chunk_size=2))
    assert "".join(e.delta for e in events if isinstance(e, ReasoningDelta)) == "think"
    tool_deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert tool_deltas[0].id == "c1" and tool_deltas[0].name == "add"
    assert "".join(e.arguments_delta for e in tool_deltas) == '{"a": 1, "b": 2}'
    final = events[-1].message
    assert isinstance(final, AssistantMessageToolCall)
    assert final.tool_calls[0].arguments == {"a": 1, "b": 2}
    assert final.usage.input_tokens == 10


def test_one_response_per_call_and_requests_are_recorded() -> None:
    llm = ScriptedLlm(["one", "two"])
    options = GenerationOptions(temperature=0.2)
    first = list(llm.stream(MODEL, CONTEXT, None, options=options))[-1].message
    second = list(llm.stream(MODEL, CONTEXT))[-1].message
    assert (first.text, second.text) == ("one", "two")
    assert llm.requests[0].options == options
    assert llm.requests[0].system_prompt == "s"
    assert len(llm.requests[1].messages) == 1
    assert llm.remaining == 0


def test_running_out_ends_with_an_error_message() -> None:
    llm = ScriptedLlm(["only"])
    _events(llm)
    events = _events(llm)
    assert isinstance(events[-1], StreamDone)
    assert events[-1].message.stop_reason == "error"
    assert "no response left" in (events[-1].message.error_message or "")


def test_callable_responses_see_the_context() -> None:
    llm = ScriptedLlm([lambda context: f"{len(context.messages)} messages", lambda context: 1 / 0])
    assert _events(llm)[-1].message.text == "1 messages"
    failed = _events(llm)[-1].message
    assert failed.stop_reason == "error" and "ZeroDivisionError" in (failed.error_message or "")


def test_abort_from_another_thread_ends_the_stream() -> None:
    signal = AbortSignal()
    llm = ScriptedLlm(["x" * 400], chunk_size=1, delay=0.01)
    seen: list[Any] = []
    for event in llm.stream(MODEL, CONTEXT, signal):
        seen.append(event)
        if len(seen) == 5:
            threading.Thread(target=signal.abort, args=("user stop",)).start()
    final = seen[-1]
    assert isinstance(final, StreamDone)
    assert [type(e) for e in seen].count(StreamDone) == 1
    assert final.message.stop_reason == "aborted"
    assert final.message.error_message == "Aborted: user stop"
    assert 0 < len(final.message.text) < 400  # partial text is kept


def test_already_aborted_signal_gives_only_start_and_done() -> None:
    signal = AbortSignal()
    signal.abort()
    events = _events(ScriptedLlm(["hello"]), signal)
    assert [e.type for e in events] == ["start", "done"]
    assert events[-1].message.stop_reason == "aborted"
