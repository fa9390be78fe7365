"""The spans the loop records with each message (issue 15's run timeline), with ScriptedLlm and real tools."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from pydantic import TypeAdapter

from tests.fixtures.core import make_tool, tool_call_response
from yiem import (
    AbortSignal,
    AgentContext,
    AgentLoopConfig,
    AgentTool,
    AssistantMessage,
    AssistantMessageToolCall,
    LlmModel,
    MessageEndEvent,
    ScriptedLlm,
    ToolResultMessage,
    run_agent_loop,
)
from yiem.timeline import Span
from yiem.types import AgentMessage

ContextFactory = Callable[..., AgentContext]


def _messages(context: AgentContext, llm: ScriptedLlm, model: LlmModel, **config: Any) -> list[Any]:
    events = run_agent_loop(context, llm, model, AgentLoopConfig(**config))
    return [event.message for event in events if isinstance(event, MessageEndEvent)]


def _spans(message: Any, kind: str) -> list[Span]:
    assert message.timeline is not None
    return [span for span in message.timeline.spans if span.kind == kind]


def test_each_reply_and_tool_result_carries_its_spans_in_order(
    make_context: ContextFactory, core_model: LlmModel
) -> None:
    def lookup(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal) -> str:
        return "found"

    llm = ScriptedLlm([tool_call_response(("lookup", {})), "done"])
    asked, result, answer = _messages(make_context(make_tool("lookup", lookup)), llm, core_model)
    assert isinstance(asked, AssistantMessageToolCall) and isinstance(result, ToolResultMessage)
    assert isinstance(answer, AssistantMessage)
    # One run, one clock: every span names it.
    assert asked.timeline.run == result.timeline.run == answer.timeline.run  # type: ignore[union-attr]
    (first,) = _spans(asked, "llm")
    (tool,) = _spans(result, "tool")
    (second,) = _spans(answer, "llm")
    assert first.name == "scripted-1" and first.first_token is not None
    assert first.start <= first.first_token <= first.end
    assert tool.name == "lookup" and tool.call_id == "call_0" and tool.server is None
    # Sent, then the tool in its worker, then the next request: in that order on the run's clock.
    assert first.end <= tool.start <= tool.end <= second.start <= second.end
    assert not _spans(result, "hook")  # no hooks configured, none recorded


def test_parallel_calls_overlap_and_sequential_calls_wait_their_turn(
    make_context: ContextFactory, core_model: LlmModel
) -> None:
    fast_done = threading.Event()

    def slow(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal) -> str:
        return "slow" if fast_done.wait(10) else "fast never ran alongside"

    def fast(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal) -> str:
        fast_done.set()
        return "fast"

    tools = (make_tool("slow", slow), make_tool("fast", fast))
    llm = ScriptedLlm([tool_call_response(("slow", {}), ("fast", {})), "ok"])
    _, slow_result, fast_result, _ = _messages(make_context(*tools), llm, core_model)
    (slow_span,) = _spans(slow_result, "tool")
    (fast_span,) = _spans(fast_result, "tool")
    assert slow_span.start < fast_span.end and fast_span.start < slow_span.end  # ran side by side

    def nap(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal) -> str:
        signal.wait(0.02)
        return "rested"

    llm = ScriptedLlm([tool_call_response(("nap", {}), ("nap", {})), "ok"])
    messages = _messages(make_context(make_tool("nap", nap)), llm, core_model, tool_execution="sequential")
    first, second = messages[1], messages[2]
    (first_tool,) = _spans(first, "tool")
    (waited,) = _spans(second, "wait")
    (second_tool,) = _spans(second, "tool")
    assert waited.name == "queued" and waited.call_id == "call_1"
    assert waited.start <= first_tool.start and first_tool.end <= waited.end <= second_tool.start


def test_hooks_are_spans_of_their_call(make_context: ContextFactory, core_model: LlmModel) -> None:
    def add(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal) -> str:
        return "3"

    llm = ScriptedLlm([tool_call_response(("add", {})), "ok"])
    messages = _messages(
        make_context(make_tool("add", add)),
        llm,
        core_model,
        before_tool_call=lambda context: None,
        after_tool_call=lambda context: None,
    )
    result = messages[1]
    before, after = _spans(result, "hook")
    (tool,) = _spans(result, "tool")
    assert (before.name, after.name) == ("before_tool_call", "after_tool_call")
    assert before.call_id == after.call_id == "call_0"
    assert before.end <= tool.start <= tool.end <= after.start <= after.end


def test_a_timed_out_tool_still_has_its_span_and_its_server(
    make_context: ContextFactory, core_model: LlmModel
) -> None:
    release = threading.Event()

    def stuck(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal) -> str:
        release.wait(10)
        return "late"

    tool = AgentTool(name="stuck", execute=stuck, server="files")
    llm = ScriptedLlm([tool_call_response(("stuck", {})), "ok"])
    try:
        result = _messages(make_context(tool), llm, core_model, tool_timeout=0.05)[1]
    finally:
        release.set()
    assert result.is_error
    (span,) = _spans(result, "tool")
    assert span.server == "files" and span.end > span.start


def test_spans_survive_the_stored_json(make_context: ContextFactory, core_model: LlmModel) -> None:
    llm = ScriptedLlm([tool_call_response(("echo", {})), "ok"])
    echo = make_tool("echo", lambda tool_call_id, arguments, signal: "hi")
    adapter: TypeAdapter[AgentMessage] = TypeAdapter(AgentMessage)
    for message in _messages(make_context(echo), llm, core_model):
        again = adapter.validate_json(message.to_json())
        assert again.timeline == message.timeline  # type: ignore[union-attr]
        assert '"firstToken"' in message.to_json() or isinstance(message, ToolResultMessage)
