"""BackgroundEvents: a source read in a worker thread, with `Quiet` markers while it is silent."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from yiem.agent import Agent
from yiem.chat import BackgroundEvents, Quiet
from yiem.events import AgentEndEvent, ToolExecutionEndEvent, ToolExecutionStartEvent
from yiem.scripted_llm import ScriptedLlm
from yiem.types import AbortSignal, AgentTool, LlmModel, TextContent

INTERVAL = 0.02
WAIT = 60.0  # only ever reached when something is broken


def _gated(gate: threading.Event, log: list[str]) -> Iterator[str]:
    log.append("started")
    try:
        yield "first"
        assert gate.wait(WAIT)
        yield "second"
    finally:
        log.append("closed")


def test_items_arrive_in_order_with_quiet_markers_while_the_source_is_silent() -> None:
    gate = threading.Event()
    log: list[str] = []
    events = BackgroundEvents(_gated(gate, log), interval=INTERVAL)
    assert log == []  # nothing runs before the first read, as with a generator
    assert next(events) == "first"
    quiet = [next(events), next(events), next(events)]
    assert all(isinstance(marker, Quiet) for marker in quiet)
    seconds = [marker.seconds for marker in quiet if isinstance(marker, Quiet)]
    assert seconds == sorted(seconds) and seconds[0] > 0
    gate.set()
    rest = [item for item in events if not isinstance(item, Quiet)]
    assert rest == ["second"]
    assert log == ["started", "closed"]
    assert list(events) == []  # stays exhausted


def test_an_error_of_the_source_reaches_the_reader_after_the_items_before_it() -> None:
    def failing() -> Iterator[int]:
        yield 1
        raise LookupError("the store is gone")

    events = BackgroundEvents(failing(), interval=INTERVAL)
    seen: list[Any] = []
    with pytest.raises(LookupError, match="the store is gone"):
        for item in events:
            seen.append(item)
    assert [item for item in seen if not isinstance(item, Quiet)] == [1]
    assert list(events) == []


def test_close_closes_the_source_in_its_own_thread() -> None:
    gate = threading.Event()
    log: list[str] = []

    def source() -> Iterator[str]:
        yield from _gated(gate, log)
        log.append("asked for more")
        yield "third"

    events = BackgroundEvents(source(), interval=INTERVAL)
    assert next(events) == "first"
    events.close()
    gate.set()  # the worker hands over "second", then closes the generator instead of asking for more
    rest = [item for item in events if not isinstance(item, Quiet)]
    assert rest == ["second"]
    assert log == ["started", "closed"]


def test_close_before_reading_closes_the_source_and_runs_nothing() -> None:
    source = iter(["never"])
    closed: list[bool] = []

    def generator() -> Iterator[str]:
        try:
            yield from source
        finally:
            closed.append(True)

    started = generator()
    next(started, None)  # a started generator, so close() has a `finally` to run
    events = BackgroundEvents(started, interval=INTERVAL)
    events.close()
    assert closed == [True]
    assert list(events) == []


def test_interval_must_be_positive() -> None:
    with pytest.raises(ValueError, match="interval must be positive"):
        BackgroundEvents(iter(()), interval=0)


def test_an_agent_abort_seen_between_quiet_markers_ends_a_silent_tool_with_an_aborted_result() -> None:
    """The Chat page's Stop, without Streamlit: wake on Quiet, abort, read the aborted results."""
    released = threading.Event()

    def silent(tool_call_id: str, args: dict[str, Any], signal: AbortSignal | None = None) -> str:
        assert signal is not None
        signal.wait(WAIT)
        released.set()
        return "finished"

    llm = ScriptedLlm([{"toolCalls": [{"id": "c1", "name": "silent", "arguments": {}}]}])
    agent = Agent(
        llm, LlmModel(id="m", provider="scripted"), tools=[AgentTool(name="silent", execute=silent)]
    )
    events = BackgroundEvents(agent.prompt("go"), interval=INTERVAL)
    seen: list[Any] = []
    for event in events:
        seen.append(event)
        if isinstance(event, Quiet) and any(isinstance(e, ToolExecutionStartEvent) for e in seen):
            agent.abort("Stopped by the user")
    ends = [e for e in seen if isinstance(e, ToolExecutionEndEvent)]
    assert len(ends) == 1 and ends[0].is_error
    assert [b.text for b in ends[0].result.content if isinstance(b, TextContent)] == [
        "Tool call aborted: Stopped by the user"
    ]
    final = seen[-1]
    assert isinstance(final, AgentEndEvent) and final.stop_reason == "aborted"
    assert released.wait(WAIT)  # the tool saw its signal too
    assert not agent.state.is_running
    assert [m.role for m in agent.state.messages] == ["user", "assistant", "toolResult"]
