"""The agent loop (FR-003, FR-005, NFR-101) with real Python tools and ScriptedLlm: events, tools,
hooks, parallel and sequential runs, cost and updates."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from tests.fixtures.core import (
    ADD_SCHEMA,
    ContextFactory,
    add,
    agent_end,
    make_tool,
    run_loop,
    tool_call_response,
    tool_results,
)
from yiem import (
    AbortSignal,
    AfterToolCallContext,
    AfterToolCallResult,
    AgentContext,
    BeforeToolCallContext,
    BeforeToolCallResult,
    GenerationOptions,
    ImageContent,
    LlmModel,
    MessageUpdateEvent,
    ScriptedLlm,
    TextContent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    ToolOutput,
)


def test_tool_call_then_answer_event_order(make_context: ContextFactory, core_model: LlmModel) -> None:
    context = make_context(make_tool("add", add, ADD_SCHEMA))
    llm = ScriptedLlm([tool_call_response(("add", {"a": 1, "b": 2})), "The answer is 3."])
    events = run_loop(context, llm, core_model)
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
    [result] = tool_results(events)
    assert result.content == [TextContent(text="3")] and not result.is_error
    assert result.tool_call_id == "call_0" and result.tool_name == "add"
    end = agent_end(events)
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
    events = run_loop(make_context(), ScriptedLlm(["Hello, streaming world"], chunk_size=3), core_model)
    updates = [e for e in events if isinstance(e, MessageUpdateEvent)]
    assert len(updates) == 8 and all(u.kind == "text" for u in updates)
    assert "".join(u.delta for u in updates) == "Hello, streaming world"


def test_unknown_tool_gives_error_result_and_loop_goes_on(
    make_context: ContextFactory, core_model: LlmModel
) -> None:
    llm = ScriptedLlm([tool_call_response(("nope", {})), "sorry"])
    events = run_loop(make_context(), llm, core_model)
    [result] = tool_results(events)
    assert result.is_error and result.content == [TextContent(text="Tool nope not found")]
    assert not [e for e in events if isinstance(e, ToolExecutionStartEvent)]
    assert agent_end(events).stop_reason == "end_turn"


def test_sp024_invalid_arguments_give_error_result_and_tool_not_run(
    make_context: ContextFactory, core_model: LlmModel
) -> None:
    ran: list[dict[str, Any]] = []

    def spy(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal) -> str:
        ran.append(arguments)
        return "ran"

    context = make_context(make_tool("add", spy, ADD_SCHEMA))
    llm = ScriptedLlm([tool_call_response(("add", {"a": "one"})), "ok"])
    [result] = tool_results(run_loop(context, llm, core_model))
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
    results = tool_results(run_loop(context, llm, core_model, before_tool_call=before))
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
    events = run_loop(context, llm, core_model, before_tool_call=before, after_tool_call=after)
    texts = [(r.is_error, r.content[0].text) for r in tool_results(events)]  # type: ignore[union-attr]
    assert texts == [
        (True, "before_tool_call failed: before broke"),
        (True, "after_tool_call failed: after broke"),
        (False, "2"),
    ]
    assert agent_end(events).stop_reason == "end_turn"


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
    events = run_loop(context, llm, core_model, before_tool_call=before, after_tool_call=after)
    texts = [(r.is_error, r.content[0].text) for r in tool_results(events)]  # type: ignore[union-attr]
    assert texts == [
        (True, "not that one"),
        (False, "replaced"),
        (True, "before_tool_call returned int, not a BeforeToolCallResult, a dict or None"),
    ]
    assert agent_end(events).stop_reason == "end_turn"


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
    [result] = tool_results(run_loop(context, llm, core_model, after_tool_call=after))
    assert result.content == [TextContent(text="redacted")]
    assert result.details == {"why": "policy"} and result.is_error


def test_tool_exception_and_tool_output_error(make_context: ContextFactory, core_model: LlmModel) -> None:
    def boom(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal) -> str:
        raise ValueError("the disk is full")

    def soft_fail(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal) -> ToolOutput:
        return ToolOutput(content=[TextContent(text="server said no")], details={"code": 7}, is_error=True)

    context = make_context(make_tool("boom", boom), make_tool("soft", soft_fail))
    llm = ScriptedLlm([tool_call_response(("boom", {}), ("soft", {})), "ok"])
    events = run_loop(context, llm, core_model)
    boom_result, soft_result = tool_results(events)
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
    results = tool_results(run_loop(make_context(*tools), llm, core_model))
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
    events = run_loop(context, llm, core_model, tool_execution="parallel")
    ended = [e.tool_call.name for e in events if isinstance(e, ToolExecutionEndEvent)]
    assert ended == ["fast", "slow"]  # completion order
    assert [r.content[0].text for r in tool_results(events)] == ["slow", "fast"]  # type: ignore[union-attr]


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
    events = run_loop(context, llm, core_model, tool_execution="sequential")
    assert log == ["start 0", "end 0", "start 1", "end 1", "start 2", "end 2"]
    assert [r.content[0].text for r in tool_results(events)] == ["0", "1", "2"]  # type: ignore[union-attr]
    types = [e.type for e in events if e.type.startswith("tool_execution")]
    assert types == ["tool_execution_start", "tool_execution_end"] * 3


def test_cost_duration_ttft_and_options(make_context: ContextFactory, core_model: LlmModel) -> None:
    llm = ScriptedLlm([{"content": "hi there", "usage": {"inputTokens": 1_000_000, "outputTokens": 2_000}}])
    events = run_loop(make_context(), llm, core_model, temperature=0.3, max_tokens=64)
    [reply] = agent_end(events).messages
    assert reply.cost is not None
    assert reply.cost.input == pytest.approx(3.0) and reply.cost.output == pytest.approx(0.03)
    assert reply.cost.total == pytest.approx(3.03)
    assert reply.ttft_ms is not None and reply.duration_ms is not None
    assert 0 <= reply.ttft_ms <= reply.duration_ms
    assert llm.requests[0].options == GenerationOptions(temperature=0.3, max_tokens=64)


def test_unknown_price_leaves_cost_empty(make_context: ContextFactory) -> None:
    model = LlmModel(id="local", price_known=False)
    [reply] = agent_end(run_loop(make_context(), ScriptedLlm(["hi"]), model)).messages
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
    events = run_loop(context, llm, core_model, tool_execution="sequential")
    updates = [e for e in events if isinstance(e, ToolExecutionUpdateEvent)]
    assert [(u.progress, u.total, u.message) for u in updates] == [
        (1, 2, "half"),
        (None, None, None),
        (2, 2, None),
    ]
    assert updates[1].partial_result.content == [TextContent(text="partial text")]
    assert [r.content[0].text for r in tool_results(events)] == ["done", "got on_update", "3"]  # type: ignore[union-attr]


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
    events = run_loop(context, ScriptedLlm([response, "4"]), core_model)
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
    events = run_loop(make_context(make_tool("where", where)), llm, core_model, max_turns=turns + 1)
    assert agent_end(events).stop_reason == "end_turn"
    assert len(workers) == 1 and threading.get_ident() not in workers


def test_update_with_tool_output_fields(make_context: ContextFactory, core_model: LlmModel) -> None:
    def partial(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal, on_update: Any) -> str:
        on_update({"content": [{"type": "text", "text": "half way"}], "details": {"step": 1}})
        return "done"

    llm = ScriptedLlm([tool_call_response(("partial", {})), "ok"])
    events = run_loop(make_context(make_tool("partial", partial)), llm, core_model)
    [update] = [e for e in events if isinstance(e, ToolExecutionUpdateEvent)]
    assert update.partial_result.content == [TextContent(text="half way")]
    assert update.partial_result.details == {"step": 1}


def test_a_client_written_to_stream_model_context_signal_works(
    make_context: ContextFactory, core_model: LlmModel
) -> None:
    """`LlmClient.stream(model, context, signal)` is the interface; options are keyword-only extras."""

    class ThreeArgumentLlm:
        def __init__(self) -> None:
            self.scripted = ScriptedLlm(["hello"])

        def stream(self, model: LlmModel, context: AgentContext, signal: AbortSignal | None = None) -> Any:
            return self.scripted.stream(model, context, signal)

    events = run_loop(make_context(), ThreeArgumentLlm(), core_model, temperature=0.2)  # type: ignore[arg-type]
    end = agent_end(events)
    assert end.stop_reason == "end_turn" and end.error_message is None
    assert end.messages[0].text == "hello"  # type: ignore[union-attr]
    # A client that takes options still gets them, by keyword.
    llm = ScriptedLlm(["hi"])
    run_loop(make_context(), llm, core_model, temperature=0.2)
    assert llm.requests[0].options == GenerationOptions(temperature=0.2)
