"""The agent loop (FR-003, FR-005, NFR-101) with real Python tools and ScriptedLlm."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fixtures.core import RESPONSE_SEEDS, make_tool, mutate_response, tool_call_response
from yiem import (
    AbortSignal,
    AfterToolCallContext,
    AfterToolCallResult,
    AgentContext,
    AgentEndEvent,
    AgentLoopConfig,
    AssistantMessage,
    AssistantMessageToolCall,
    BeforeToolCallContext,
    BeforeToolCallResult,
    GenerationOptions,
    ImageContent,
    LlmModel,
    MessageEndEvent,
    MessageUpdateEvent,
    ScriptedLlm,
    TextContent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    ToolOutput,
    ToolResultMessage,
    UserMessage,
    run_agent_loop,
)

ContextFactory = Callable[..., AgentContext]
ADD_SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    "required": ["a", "b"],
}


def add(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal) -> str:
    return str(arguments["a"] + arguments["b"])


def _run(context: AgentContext, llm: ScriptedLlm, model: LlmModel, **config: Any) -> list[Any]:
    return list(run_agent_loop(context, llm, model, AgentLoopConfig(**config)))


def _results(events: list[Any]) -> list[ToolResultMessage]:
    return [
        e.message
        for e in events
        if isinstance(e, MessageEndEvent) and isinstance(e.message, ToolResultMessage)
    ]


def _end(events: list[Any]) -> AgentEndEvent:
    assert isinstance(events[-1], AgentEndEvent)
    return events[-1]


def _assert_every_call_has_one_result(messages: list[Any]) -> None:
    calls = [c.id for m in messages if isinstance(m, AssistantMessageToolCall) for c in m.tool_calls]
    answered = [m.tool_call_id for m in messages if isinstance(m, ToolResultMessage)]
    assert sorted(calls) == sorted(answered)
    assert len(answered) == len(set(answered))


def test_tool_call_then_answer_event_order(make_context: ContextFactory, core_model: LlmModel) -> None:
    context = make_context(make_tool("add", add, ADD_SCHEMA))
    llm = ScriptedLlm([tool_call_response(("add", {"a": 1, "b": 2})), "The answer is 3."])
    events = _run(context, llm, core_model)
    types = [e.type for e in events]
    assert types[:3] == ["agent_start", "turn_start", "message_start"]
    first_turn = types[: types.index("turn_end") + 1]
    assert first_turn[-6:] == [
        "message_end",
        "tool_execution_start",
        "tool_execution_end",
        "message_start",
        "message_end",
        "turn_end",
    ]
    assert types[-1] == "agent_end" and types.count("agent_end") == 1
    assert types.count("turn_start") == 2
    [result] = _results(events)
    assert result.content == [TextContent(text="3")] and not result.is_error
    assert result.tool_call_id == "call_0" and result.tool_name == "add"
    end = _end(events)
    assert end.stop_reason == "end_turn" and end.error_message is None
    assert [type(m).__name__ for m in end.messages] == [
        "AssistantMessageToolCall",
        "ToolResultMessage",
        "AssistantMessage",
    ]
    assert end.messages[-1].text == "The answer is 3."
    # The second request saw the tool call and its result.
    assert [m.role for m in llm.requests[1].messages] == ["user", "assistant", "toolResult"]
    assert len(context.messages) == 1  # the caller's context is left as it was


def test_text_is_streamed_as_updates(make_context: ContextFactory, core_model: LlmModel) -> None:
    events = _run(make_context(), ScriptedLlm(["Hello, streaming world"], chunk_size=3), core_model)
    updates = [e for e in events if isinstance(e, MessageUpdateEvent)]
    assert len(updates) == 8 and all(u.kind == "text" for u in updates)
    assert "".join(u.delta for u in updates) == "Hello, streaming world"


def test_unknown_tool_gives_error_result_and_loop_goes_on(
    make_context: ContextFactory, core_model: LlmModel
) -> None:
    llm = ScriptedLlm([tool_call_response(("nope", {})), "sorry"])
    events = _run(make_context(), llm, core_model)
    [result] = _results(events)
    assert result.is_error and result.content == [TextContent(text="Tool nope not found")]
    assert not [e for e in events if isinstance(e, ToolExecutionStartEvent)]
    assert _end(events).stop_reason == "end_turn"


def test_sp024_invalid_arguments_give_error_result_and_tool_not_run(
    make_context: ContextFactory, core_model: LlmModel
) -> None:
    ran: list[dict[str, Any]] = []

    def spy(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal) -> str:
        ran.append(arguments)
        return "ran"

    context = make_context(make_tool("add", spy, ADD_SCHEMA))
    llm = ScriptedLlm([tool_call_response(("add", {"a": "one"})), "ok"])
    [result] = _results(_run(context, llm, core_model))
    assert result.is_error
    assert result.content[0].text.splitlines() == [  # type: ignore[union-attr]
        "Missing required arguments: b",
        "a: 'one' is not of type 'number'",
    ]
    assert ran == []


def test_before_tool_call_blocks_with_reason(make_context: ContextFactory, core_model: LlmModel) -> None:
    """SP-021: before_tool_call may block a call with a reason."""
    seen: list[BeforeToolCallContext] = []

    def before(ctx: BeforeToolCallContext) -> BeforeToolCallResult:
        seen.append(ctx)
        return BeforeToolCallResult(block=ctx.args["a"] > 10, reason="a is too big")

    context = make_context(make_tool("add", add, ADD_SCHEMA))
    llm = ScriptedLlm([tool_call_response(("add", {"a": 100, "b": 1}), ("add", {"a": 1, "b": 1})), "done"])
    results = _results(_run(context, llm, core_model, before_tool_call=before))
    assert [(r.is_error, r.content[0].text) for r in results] == [(True, "a is too big"), (False, "2")]  # type: ignore[union-attr]
    assert seen[0].tool_call.name == "add" and seen[0].context.system_prompt == "You are a test."


def test_hooks_that_raise_become_error_results(make_context: ContextFactory, core_model: LlmModel) -> None:
    """SP-021: a hook that raises becomes an error result; the loop goes on."""

    def before(ctx: BeforeToolCallContext) -> None:
        if ctx.args["a"] == 0:
            raise RuntimeError("before broke")

    def after(ctx: AfterToolCallContext) -> None:
        if ctx.args["a"] == 1:
            raise RuntimeError("after broke")

    context = make_context(make_tool("add", add, ADD_SCHEMA))
    calls = [("add", {"a": 0, "b": 0}), ("add", {"a": 1, "b": 0}), ("add", {"a": 2, "b": 0})]
    llm = ScriptedLlm([tool_call_response(*calls), "done"])
    events = _run(context, llm, core_model, before_tool_call=before, after_tool_call=after)
    texts = [(r.is_error, r.content[0].text) for r in _results(events)]  # type: ignore[union-attr]
    assert texts == [
        (True, "before_tool_call failed: before broke"),
        (True, "after_tool_call failed: after broke"),
        (False, "2"),
    ]
    assert _end(events).stop_reason == "end_turn"


def test_after_tool_call_replaces_content_details_and_error(
    make_context: ContextFactory, core_model: LlmModel
) -> None:
    """SP-021: after_tool_call may replace content, details and is_error."""

    def after(ctx: AfterToolCallContext) -> AfterToolCallResult:
        assert ctx.result.content == [TextContent(text="3")] and not ctx.is_error
        return AfterToolCallResult(
            content=[TextContent(text="redacted")], details={"why": "policy"}, is_error=True
        )

    context = make_context(make_tool("add", add, ADD_SCHEMA))
    llm = ScriptedLlm([tool_call_response(("add", {"a": 1, "b": 2})), "ok"])
    [result] = _results(_run(context, llm, core_model, after_tool_call=after))
    assert result.content == [TextContent(text="redacted")]
    assert result.details == {"why": "policy"} and result.is_error


def test_tool_exception_and_tool_output_error(make_context: ContextFactory, core_model: LlmModel) -> None:
    def boom(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal) -> str:
        raise ValueError("the disk is full")

    def soft_fail(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal) -> ToolOutput:
        return ToolOutput(content=[TextContent(text="server said no")], details={"code": 7}, is_error=True)

    context = make_context(make_tool("boom", boom), make_tool("soft", soft_fail))
    llm = ScriptedLlm([tool_call_response(("boom", {}), ("soft", {})), "ok"])
    events = _run(context, llm, core_model)
    boom_result, soft_result = _results(events)
    assert boom_result.is_error and boom_result.content == [TextContent(text="the disk is full")]
    assert soft_result.is_error and soft_result.details == {"code": 7}
    ends = [e for e in events if isinstance(e, ToolExecutionEndEvent)]
    assert all(e.is_error for e in ends)


def test_tool_return_types(make_context: ContextFactory, core_model: LlmModel) -> None:
    tools = [
        make_tool("blocks", lambda i, a, s: [TextContent(text="t"), ImageContent(data="QUJD")]),
        make_tool("dicts", lambda i, a, s: [{"type": "text", "text": "from dict"}]),
        make_tool("json", lambda i, a, s: {"temperature": 22}),
        make_tool("none", lambda i, a, s: None),
        make_tool("output", lambda i, a, s: ToolOutput(content=[TextContent(text="o")], details=[1, 2])),
    ]
    llm = ScriptedLlm([tool_call_response(*[(t.name, {}) for t in tools]), "ok"])
    results = _results(_run(make_context(*tools), llm, core_model))
    assert results[0].content == [TextContent(text="t"), ImageContent(data="QUJD")]
    assert results[1].content == [TextContent(text="from dict")]
    assert results[2].content == [TextContent(text='{"temperature": 22}')]
    assert results[3].content == []
    assert results[4].details == [1, 2]
    assert not any(r.is_error for r in results)


def test_parallel_runs_concurrently_and_keeps_the_asked_order(
    make_context: ContextFactory, core_model: LlmModel
) -> None:
    """SP-021 "parallel": concurrent, results in the order asked."""
    fast_done = threading.Event()

    def slow(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal) -> str:
        # Finishes only after `fast` has: impossible unless both run at the same time.
        return "slow" if fast_done.wait(10) else "fast never ran alongside"

    def fast(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal) -> str:
        fast_done.set()
        return "fast"

    context = make_context(make_tool("slow", slow), make_tool("fast", fast))
    llm = ScriptedLlm([tool_call_response(("slow", {}), ("fast", {})), "ok"])
    events = _run(context, llm, core_model, tool_execution="parallel")
    ended = [e.tool_call.name for e in events if isinstance(e, ToolExecutionEndEvent)]
    assert ended == ["fast", "slow"]  # completion order
    assert [r.content[0].text for r in _results(events)] == ["slow", "fast"]  # type: ignore[union-attr]


def test_sequential_runs_one_at_a_time_in_order(make_context: ContextFactory, core_model: LlmModel) -> None:
    """SP-021 "sequential": one call at a time."""
    log: list[str] = []
    lock = threading.Lock()

    def step(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal) -> str:
        with lock:
            log.append(f"start {arguments['n']}")
        signal.wait(0.02)  # room for another call to start, if the loop let it
        with lock:
            log.append(f"end {arguments['n']}")
        return str(arguments["n"])

    context = make_context(make_tool("step", step))
    llm = ScriptedLlm([tool_call_response(*[("step", {"n": n}) for n in range(3)]), "ok"])
    events = _run(context, llm, core_model, tool_execution="sequential")
    assert log == ["start 0", "end 0", "start 1", "end 1", "start 2", "end 2"]
    assert [r.content[0].text for r in _results(events)] == ["0", "1", "2"]  # type: ignore[union-attr]
    types = [e.type for e in events if e.type.startswith("tool_execution")]
    assert types == ["tool_execution_start", "tool_execution_end"] * 3


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
    events = _run(context, llm, core_model, tool_timeout=0.3)
    hang_result, add_result = _results(events)
    assert hang_result.is_error and hang_result.content == [
        TextContent(text="Tool hang timed out after 0.3 s")
    ]
    assert add_result.content == [TextContent(text="2")]
    assert saw_abort.wait(5) and seen_reason == ["timeout"]
    assert _end(events).stop_reason == "end_turn"


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
    end = _end(events)
    assert end.stop_reason == "aborted"
    results = _results(events)
    assert [r.content for r in results] == [[TextContent(text="Tool call aborted: user pressed stop")]] * 2
    assert all(r.is_error for r in results)
    _assert_every_call_has_one_result(end.messages)
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
    end = _end(events)
    assert end.stop_reason == "aborted" and end.error_message == "Aborted"
    assert [r.content[0].text for r in _results(events)] == ["Tool call aborted"] * 3  # type: ignore[union-attr]
    assert ran_second == []
    _assert_every_call_has_one_result(end.messages)


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
    end = _end(events)
    assert end.stop_reason == "aborted"
    assert closed == [True]
    [reply] = end.messages
    assert isinstance(reply, AssistantMessage) and reply.stop_reason == "aborted"
    assert 0 < len(reply.text) < 2000


def test_max_turns_stops_with_an_error_message(make_context: ContextFactory, core_model: LlmModel) -> None:
    context = make_context(make_tool("add", add, ADD_SCHEMA))
    llm = ScriptedLlm([tool_call_response(("add", {"a": 1, "b": 1}))] * 5)
    events = _run(context, llm, core_model, max_turns=3)
    end = _end(events)
    assert end.stop_reason == "max_turns"
    assert end.error_message is not None and "max_turns=3" in end.error_message
    assert [e.type for e in events].count("turn_start") == 3
    assert llm.remaining == 2


def test_llm_error_stops_the_loop(make_context: ContextFactory, core_model: LlmModel) -> None:
    llm = ScriptedLlm(
        [{"content": [{"type": "text", "text": "par"}], "error_message": "HTTP 500 from provider"}]
    )
    end = _end(_run(make_context(), llm, core_model))
    assert end.stop_reason == "error" and end.error_message == "HTTP 500 from provider"


def test_error_reply_with_tool_calls_answers_each_call_without_running_it(
    make_context: ContextFactory, core_model: LlmModel
) -> None:
    ran: list[bool] = []
    response = tool_call_response(("add", {"a": 1, "b": 1}))
    response["error_message"] = "stream cut"
    context = make_context(make_tool("add", lambda i, a, s: ran.append(True)))
    events = _run(context, ScriptedLlm([response]), core_model)
    end = _end(events)
    assert end.stop_reason == "error" and end.error_message == "stream cut"
    [result] = _results(events)
    assert result.is_error and "not run" in result.content[0].text  # type: ignore[union-attr]
    assert ran == []


def test_running_out_of_responses_is_an_error_not_an_exception(
    make_context: ContextFactory, core_model: LlmModel
) -> None:
    context = make_context(make_tool("add", add, ADD_SCHEMA))
    end = _end(_run(context, ScriptedLlm([tool_call_response(("add", {"a": 1, "b": 1}))]), core_model))
    assert end.stop_reason == "error" and "no response left" in (end.error_message or "")


def test_cost_duration_ttft_and_options(make_context: ContextFactory, core_model: LlmModel) -> None:
    llm = ScriptedLlm([{"content": "hi there", "usage": {"inputTokens": 1_000_000, "outputTokens": 2_000}}])
    events = _run(make_context(), llm, core_model, temperature=0.3, max_tokens=64)
    [reply] = _end(events).messages
    assert reply.cost is not None
    assert reply.cost.input == pytest.approx(3.0) and reply.cost.output == pytest.approx(0.03)
    assert reply.cost.total == pytest.approx(3.03)
    assert reply.ttft_ms is not None and reply.duration_ms is not None
    assert 0 <= reply.ttft_ms <= reply.duration_ms
    assert llm.requests[0].options == GenerationOptions(temperature=0.3, max_tokens=64)


def test_unknown_price_leaves_cost_empty(make_context: ContextFactory) -> None:
    model = LlmModel(id="local", price_known=False)
    [reply] = _end(_run(make_context(), ScriptedLlm(["hi"]), model)).messages
    assert reply.cost is None


def test_on_update_is_passed_only_to_tools_that_accept_it(
    make_context: ContextFactory, core_model: LlmModel
) -> None:
    def progress(
        tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal, on_update: Callable[..., None]
    ) -> str:
        on_update({"progress": 1, "total": 2, "message": "half"})
        on_update("partial text")
        on_update(progress=2, total=2)
        return "done"

    def kwargs_tool(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal, **extra: Any) -> str:
        return "got " + ",".join(sorted(extra))

    context = make_context(
        make_tool("progress", progress), make_tool("kw", kwargs_tool), make_tool("add", add)
    )
    llm = ScriptedLlm([tool_call_response(("progress", {}), ("kw", {}), ("add", {"a": 1, "b": 2})), "ok"])
    events = _run(context, llm, core_model, tool_execution="sequential")
    updates = [e for e in events if isinstance(e, ToolExecutionUpdateEvent)]
    assert [(u.progress, u.total, u.message) for u in updates] == [
        (1, 2, "half"),
        (None, None, None),
        (2, 2, None),
    ]
    assert updates[1].partial_result.content == [TextContent(text="partial text")]
    assert [r.content[0].text for r in _results(events)] == ["done", "got on_update", "3"]  # type: ignore[union-attr]


def test_reasoning_and_tool_call_deltas_are_updates(
    make_context: ContextFactory, core_model: LlmModel
) -> None:
    response = {
        "message": {
            "reasoning_content": "let me add",
            "tool_calls": [{"id": "c1", "function": {"name": "add", "arguments": '{"a": 2, "b": 2}'}}],
        }
    }
    context = make_context(make_tool("add", add, ADD_SCHEMA))
    events = _run(context, ScriptedLlm([response, "4"]), core_model)
    kinds = {e.kind for e in events if isinstance(e, MessageUpdateEvent)}
    assert kinds == {"reasoning", "toolcall", "text"}


def test_worker_threads_are_reused_across_turns(make_context: ContextFactory, core_model: LlmModel) -> None:
    """One worker serves every call of a sequential run: no thread per call."""
    workers: set[int] = set()

    def where(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal) -> str:
        workers.add(threading.get_ident())
        return "ok"

    turns = 30
    llm = ScriptedLlm([tool_call_response(("where", {}))] * turns + ["done"])
    events = _run(make_context(make_tool("where", where)), llm, core_model, max_turns=turns + 1)
    assert _end(events).stop_reason == "end_turn"
    assert len(workers) == 1 and threading.get_ident() not in workers


def test_client_that_raises_ends_the_turn_with_an_error(
    make_context: ContextFactory, core_model: LlmModel
) -> None:
    """LlmClient.stream must not raise; when one does anyway, the loop ends with a readable error."""

    class BrokenLlm:
        def stream(self, *args: Any, **kwargs: Any) -> Any:
            raise ConnectionError("no route to host")

    end = _end(list(run_agent_loop(make_context(), BrokenLlm(), core_model)))
    assert end.stop_reason == "error"
    assert end.error_message == "The LLM client failed: no route to host"
    assert [m.stop_reason for m in end.messages] == ["error"]


def test_update_with_tool_output_fields(make_context: ContextFactory, core_model: LlmModel) -> None:
    def partial(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal, on_update: Any) -> str:
        on_update({"content": [{"type": "text", "text": "half way"}], "details": {"step": 1}})
        return "done"

    llm = ScriptedLlm([tool_call_response(("partial", {})), "ok"])
    events = _run(make_context(make_tool("partial", partial)), llm, core_model)
    [update] = [e for e in events if isinstance(e, ToolExecutionUpdateEvent)]
    assert update.partial_result.content == [TextContent(text="half way")]
    assert update.partial_result.details == {"step": 1}


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
    end = _end(events)
    messages = end.messages
    _assert_every_call_has_one_result(messages)
    for position, message in enumerate(messages):
        if isinstance(message, AssistantMessageToolCall):
            following = messages[position + 1 : position + 1 + len(message.tool_calls)]
            assert [m.tool_call_id for m in following] == [c.id for c in message.tool_calls]
    if end.stop_reason in ("error", "max_turns"):
        assert end.error_message


def test_a_client_written_to_stream_model_context_signal_works(
    make_context: ContextFactory, core_model: LlmModel
) -> None:
    """`LlmClient.stream(model, context, signal)` is the interface; options are keyword-only extras."""

    class ThreeArgumentLlm:
        def __init__(self) -> None:
            self.scripted = ScriptedLlm(["hello"])

        def stream(self, model: LlmModel, context: AgentContext, signal: AbortSignal | None = None) -> Any:
            return self.scripted.stream(model, context, signal)

    events = _run(make_context(), ThreeArgumentLlm(), core_model, temperature=0.2)  # type: ignore[arg-type]
    end = _end(events)
    assert end.stop_reason == "end_turn" and end.error_message is None
    assert end.messages[0].text == "hello"  # type: ignore[union-attr]
    # A client that takes options still gets them, by keyword.
    llm = ScriptedLlm(["hi"])
    _run(make_context(), llm, core_model, temperature=0.2)
    assert llm.requests[0].options == GenerationOptions(temperature=0.2)


def test_hooks_that_return_plain_dicts_or_nonsense_never_crash_the_loop(
    make_context: ContextFactory, core_model: LlmModel
) -> None:
    """Issue 12: a hook's plain dict is read as its result model; anything else is an error result."""

    def before(ctx: BeforeToolCallContext) -> Any:
        return [{"block": True, "reason": "not that one"}, {"block": False}, 42][ctx.args["a"]]

    def after(ctx: AfterToolCallContext) -> Any:
        return {"content": [{"type": "text", "text": "replaced"}]} if ctx.args["a"] == 1 else None

    context = make_context(make_tool("add", add, ADD_SCHEMA))
    calls = [("add", {"a": 0, "b": 0}), ("add", {"a": 1, "b": 0}), ("add", {"a": 2, "b": 0})]
    llm = ScriptedLlm([tool_call_response(*calls), "done"])
    events = _run(context, llm, core_model, before_tool_call=before, after_tool_call=after)
    texts = [(r.is_error, r.content[0].text) for r in _results(events)]  # type: ignore[union-attr]
    assert texts == [
        (True, "not that one"),
        (False, "replaced"),
        (True, "before_tool_call returned int, not a BeforeToolCallResult, a dict or None"),
    ]
    assert _end(events).stop_reason == "end_turn"


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
    events = _run(context, llm, core_model)
    end = _end(events)
    assert end.stop_reason == "error"
    assert end.error_message == "The agent loop failed: a bug in the loop"
    _assert_every_call_has_one_result(end.messages)
    # The messages this run added are a valid conversation to continue from.
    assert isinstance(end.messages[0], AssistantMessageToolCall)
    assert all(isinstance(m, ToolResultMessage) and m.is_error for m in end.messages[1:])
