"""The agent loop when a run is cut short or goes wrong: tool timeouts, abort, max turns, broken
replies and clients, a bug inside the loop, and mutated responses."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fixtures.core import (
    ADD_SCHEMA,
    RESPONSE_SEEDS,
    ContextFactory,
    add,
    agent_end,
    assert_every_call_has_one_result,
    make_tool,
    mutate_response,
    run_loop,
    tool_call_response,
    tool_results,
)
from yiem import (
    AbortSignal,
    AgentContext,
    AgentLoopConfig,
    AssistantMessage,
    AssistantMessageToolCall,
    LlmModel,
    MessageUpdateEvent,
    ScriptedLlm,
    TextContent,
    ToolResultMessage,
    UserMessage,
    run_agent_loop,
)


def test_tool_timeout_gives_error_result_and_signals_the_tool(
    make_context: ContextFactory, core_model: LlmModel
) -> None:
    """NFR-101: a per-tool timeout gives an error result and aborts that tool's signal (SP-022)."""
    seen_reason: list[str | None] = []
    saw_abort = threading.Event()

    def hang(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal) -> str:
        signal.wait(30)
        seen_reason.append(signal.reason)
        saw_abort.set()
        return "too late"

    context = make_context(make_tool("hang", hang), make_tool("add", add, ADD_SCHEMA))
    llm = ScriptedLlm([tool_call_response(("hang", {}), ("add", {"a": 1, "b": 1})), "ok"])
    events = run_loop(context, llm, core_model, tool_timeout=0.3)
    hang_result, add_result = tool_results(events)
    assert hang_result.is_error and hang_result.content == [
        TextContent(text="Tool hang timed out after 0.3 s")
    ]
    assert add_result.content == [TextContent(text="2")]
    assert saw_abort.wait(5) and seen_reason == ["timeout"]
    assert agent_end(events).stop_reason == "end_turn"


def test_abort_from_another_thread_during_tools(make_context: ContextFactory, core_model: LlmModel) -> None:
    """NFR-101, SP-022: tools see the signal, every call gets one result, the loop ends aborted."""
    started = threading.Barrier(3)
    stopped: list[str] = []

    def wait_for_abort(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal) -> str:
        started.wait(5)
        signal.wait(30)
        stopped.append(tool_call_id)
        return "stopped"

    signal = AbortSignal()
    context = make_context(make_tool("wait", wait_for_abort))
    llm = ScriptedLlm([tool_call_response(("wait", {}), ("wait", {})), "never used"])
    aborter = threading.Thread(target=lambda: (started.wait(5), signal.abort("user pressed stop")))
    aborter.start()
    events = list(run_agent_loop(context, llm, core_model, AgentLoopConfig(), signal))
    aborter.join()
    end = agent_end(events)
    assert end.stop_reason == "aborted"
    results = tool_results(events)
    assert [r.content for r in results] == [[TextContent(text="Tool call aborted: user pressed stop")]] * 2
    assert all(r.is_error for r in results)
    assert_every_call_has_one_result(end.messages)
    assert llm.remaining == 1  # no further LLM call after the abort
    for _ in range(100):
        if len(stopped) == 2:
            break
        threading.Event().wait(0.05)
    assert sorted(stopped) == ["call_0", "call_1"]


def test_abort_in_sequential_mode_answers_calls_never_started(
    make_context: ContextFactory, core_model: LlmModel
) -> None:
    """SP-022: calls never started still get an aborted result."""
    signal = AbortSignal()

    def first(tool_call_id: str, arguments: dict[str, Any], signal_: AbortSignal) -> str:
        threading.Thread(target=signal.abort).start()
        signal_.wait(30)
        return "stopped"

    ran_second: list[bool] = []
    context = make_context(
        make_tool("first", first), make_tool("second", lambda i, a, s: ran_second.append(True))
    )
    llm = ScriptedLlm([tool_call_response(("first", {}), ("second", {}), ("second", {}))])
    config = AgentLoopConfig(tool_execution="sequential")
    events = list(run_agent_loop(context, llm, core_model, config, signal))
    end = agent_end(events)
    assert end.stop_reason == "aborted" and end.error_message == "Aborted"
    assert [r.content[0].text for r in tool_results(events)] == ["Tool call aborted"] * 3  # type: ignore[union-attr]
    assert ran_second == []
    assert_every_call_has_one_result(end.messages)


def test_abort_while_streaming_closes_the_stream(make_context: ContextFactory, core_model: LlmModel) -> None:
    """SP-022: an abort mid-stream closes the LLM stream and keeps the partial text."""
    closed: list[bool] = []

    class ClosingLlm(ScriptedLlm):
        """ScriptedLlm that records when the loop closes its stream."""

        def stream(self, *args: Any, **kwargs: Any) -> Any:
            try:
                yield from super().stream(*args, **kwargs)
            finally:
                closed.append(True)

    signal = AbortSignal()
    llm = ClosingLlm(["x" * 2000], chunk_size=1, delay=0.002)
    events = []
    for event in run_agent_loop(make_context(), llm, core_model, None, signal):
        events.append(event)
        if isinstance(event, MessageUpdateEvent) and len(events) == 10:
            threading.Thread(target=signal.abort, args=("stop",)).start()
    end = agent_end(events)
    assert end.stop_reason == "aborted"
    assert closed == [True]
    [reply] = end.messages
    assert isinstance(reply, AssistantMessage) and reply.stop_reason == "aborted"
    assert 0 < len(reply.text) < 2000


def test_max_turns_stops_with_an_error_message(make_context: ContextFactory, core_model: LlmModel) -> None:
    context = make_context(make_tool("add", add, ADD_SCHEMA))
    llm = ScriptedLlm([tool_call_response(("add", {"a": 1, "b": 1}))] * 5)
    events = run_loop(context, llm, core_model, max_turns=3)
    end = agent_end(events)
    assert end.stop_reason == "max_turns"
    assert end.error_message is not None and "max_turns=3" in end.error_message
    assert [e.type for e in events].count("turn_start") == 3
    assert llm.remaining == 2


def test_llm_error_stops_the_loop(make_context: ContextFactory, core_model: LlmModel) -> None:
    llm = ScriptedLlm(
        [{"content": [{"type": "text", "text": "par"}], "error_message": "HTTP 500 from provider"}]
    )
    end = agent_end(run_loop(make_context(), llm, core_model))
    assert end.stop_reason == "error" and end.error_message == "HTTP 500 from provider"


def test_error_reply_with_tool_calls_answers_each_call_without_running_it(
    make_context: ContextFactory, core_model: LlmModel
) -> None:
    ran: list[bool] = []
    response = tool_call_response(("add", {"a": 1, "b": 1}))
    response["error_message"] = "stream cut"
    context = make_context(make_tool("add", lambda i, a, s: ran.append(True)))
    events = run_loop(context, ScriptedLlm([response]), core_model)
    end = agent_end(events)
    assert end.stop_reason == "error" and end.error_message == "stream cut"
    [result] = tool_results(events)
    assert result.is_error and "not run" in result.content[0].text  # type: ignore[union-attr]
    assert ran == []


def test_running_out_of_responses_is_an_error_not_an_exception(
    make_context: ContextFactory, core_model: LlmModel
) -> None:
    context = make_context(make_tool("add", add, ADD_SCHEMA))
    end = agent_end(
        run_loop(context, ScriptedLlm([tool_call_response(("add", {"a": 1, "b": 1}))]), core_model)
    )
    assert end.stop_reason == "error" and "no response left" in (end.error_message or "")


def test_client_that_raises_ends_the_turn_with_an_error(
    make_context: ContextFactory, core_model: LlmModel
) -> None:
    """LlmClient.stream must not raise; when one does anyway, the loop ends with a readable error."""

    class BrokenLlm:
        def stream(self, *args: Any, **kwargs: Any) -> Any:
            raise ConnectionError("no route to host")

    end = agent_end(list(run_agent_loop(make_context(), BrokenLlm(), core_model)))
    assert end.stop_reason == "error"
    assert end.error_message == "The LLM client failed: no route to host"
    assert [m.stop_reason for m in end.messages] == ["error"]


def _weather(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal) -> str:
    if "c" in arguments:
        raise KeyError(arguments["c"])
    return f"weather for {arguments}"


PROPERTY_TOOLS = {name: make_tool(name, _weather) for name in ("getWeather", "w")}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_loop_keeps_its_invariants_on_mutated_responses(data: st.DataObject) -> None:
    """Whatever the model sends (SP-017/SP-018 shapes, mutated), the loop never raises, ends once,
    and every tool call in its messages has exactly one result right after it."""
    responses = [
        mutate_response(data.draw(st.sampled_from(RESPONSE_SEEDS)), data)
        for _ in range(data.draw(st.integers(1, 3)))
    ]
    config = AgentLoopConfig(
        max_turns=3, tool_execution=data.draw(st.sampled_from(["parallel", "sequential"]))
    )
    context = AgentContext(messages=[UserMessage(content=[TextContent(text="go")])], tools=PROPERTY_TOOLS)
    events = list(run_agent_loop(context, ScriptedLlm(responses, chunk_size=7), LlmModel(id="p"), config))
    assert events[0].type == "agent_start"
    assert [e.type for e in events].count("agent_end") == 1
    end = agent_end(events)
    messages = end.messages
    assert_every_call_has_one_result(messages)
    for position, message in enumerate(messages):
        if isinstance(message, AssistantMessageToolCall):
            following = messages[position + 1 : position + 1 + len(message.tool_calls)]
            assert [m.tool_call_id for m in following] == [c.id for c in message.tool_calls]
    if end.stop_reason in ("error", "max_turns"):
        assert end.error_message


def test_every_failure_inside_the_loop_ends_with_agent_end(
    make_context: ContextFactory, core_model: LlmModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 12: a bug inside the loop still ends with agent_end, every tool call answered."""
    import yiem.loop

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug in the loop")

    monkeypatch.setattr(yiem.loop, "finalize_tool_call", broken)
    context = make_context(make_tool("add", add, ADD_SCHEMA))
    llm = ScriptedLlm([tool_call_response(("add", {"a": 1, "b": 2}), ("add", {"a": 3, "b": 4})), "done"])
    events = run_loop(context, llm, core_model)
    end = agent_end(events)
    assert end.stop_reason == "error"
    assert end.error_message == "The agent loop failed: a bug in the loop"
    assert_every_call_has_one_result(end.messages)
    # The messages this run added are a valid conversation to continue from.
    assert isinstance(end.messages[0], AssistantMessageToolCall)
    assert all(isinstance(m, ToolResultMessage) and m.is_error for m in end.messages[1:])
