"""Agent: AgentState (SP-020) kept up to date by prompt, abort, subscribe and reset."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tests.fixtures.core import make_tool, tool_call_response
from yiem import (
    AbortSignal,
    Agent,
    AgentBusyError,
    AgentError,
    AgentEvent,
    AssistantMessageToolCall,
    ImageContent,
    LlmModel,
    ScriptedLlm,
    TextContent,
    ToolExecutionStartEvent,
    ToolResultMessage,
    UserMessage,
)


def echo(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal) -> str:
    return f"echo {arguments.get('text', '')}"


def _agent(responses: list[Any], model: LlmModel, **kwargs: Any) -> Agent:
    return Agent(
        ScriptedLlm(responses), model, system_prompt="sys", tools=[make_tool("echo", echo)], **kwargs
    )


def test_sp020_prompt_updates_messages_and_pending(core_model: LlmModel) -> None:
    agent = _agent([tool_call_response(("echo", {"text": "hi"})), "Done."], core_model)
    pending_during: list[list[str]] = []
    agent.subscribe(
        lambda e: (
            pending_during.append(list(agent.state.pending_tool_calls))
            if isinstance(e, ToolExecutionStartEvent)
            else None
        )
    )
    events = list(agent.prompt("say hi"))
    assert [e.type for e in events[:3]] == ["agent_start", "message_start", "message_end"]
    assert isinstance(events[1].message, UserMessage)
    assert events[-1].type == "agent_end"
    roles = [type(m).__name__ for m in agent.state.messages]
    assert roles == ["UserMessage", "AssistantMessageToolCall", "ToolResultMessage", "AssistantMessage"]
    assert pending_during == [["call_0"]]
    assert agent.state.pending_tool_calls == [] and agent.state.error_message is None
    assert not agent.state.is_running
    # A second prompt continues the same conversation.
    agent.llm = ScriptedLlm(["Again."])
    list(agent.prompt("again"))
    assert len(agent.state.messages) == 6
    assert agent.llm.requests[0].system_prompt == "sys"
    assert len(agent.llm.requests[0].messages) == 5


def test_images_go_into_the_user_message(core_model: LlmModel) -> None:
    agent = _agent(["a cat"], core_model)
    list(agent.prompt("what is it?", images=[ImageContent(data="QUJD", mime_type="image/jpeg")]))
    user = agent.state.messages[0]
    assert user.content == [
        TextContent(text="what is it?"),
        ImageContent(data="QUJD", mime_type="image/jpeg"),
    ]


def test_error_message_is_kept_in_state(core_model: LlmModel) -> None:
    agent = _agent([{"content": "", "error_message": "quota exceeded"}], core_model)
    list(agent.prompt("hi"))
    assert agent.state.error_message == "quota exceeded"


def test_listener_that_raises_is_logged_and_loses_nothing(
    core_model: LlmModel, caplog: pytest.LogCaptureFixture
) -> None:
    agent = _agent(["fine"], core_model)
    received: list[str] = []

    def broken(event: AgentEvent) -> None:
        raise RuntimeError("listener bug")

    agent.subscribe(broken)
    agent.subscribe(lambda e: received.append(e.type))
    with caplog.at_level(logging.ERROR):
        events = [e.type for e in agent.prompt("hi")]
    assert received == events
    assert len(agent.state.messages) == 2
    assert "listener failed" in caplog.text


def test_unsubscribe(core_model: LlmModel) -> None:
    agent = _agent(["a", "b"], core_model)
    received: list[str] = []
    unsubscribe = agent.subscribe(lambda e: received.append(e.type))
    list(agent.prompt("1"))
    count = len(received)
    unsubscribe()
    list(agent.prompt("2"))
    assert len(received) == count > 0


def test_abort_from_another_thread(core_model: LlmModel) -> None:
    started = threading.Event()

    def slow(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal) -> str:
        started.set()
        signal.wait(30)
        return "stopped"

    agent = Agent(
        ScriptedLlm([tool_call_response(("slow", {}))]), core_model, tools=[make_tool("slow", slow)]
    )
    threading.Thread(target=lambda: started.wait(5) and agent.abort("stop pressed")).start()
    events = list(agent.prompt("go"))
    assert events[-1].stop_reason == "aborted"
    assert agent.state.error_message == "Aborted: stop pressed"
    result = agent.state.messages[-1]
    assert isinstance(result, ToolResultMessage) and result.is_error
    assert not agent.state.is_running and agent.state.pending_tool_calls == []


def test_stopping_iteration_early_keeps_history_valid(core_model: LlmModel) -> None:
    tool_saw_abort = threading.Event()

    def slow(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal) -> str:
        if signal.wait(30):
            tool_saw_abort.set()
        return "stopped"

    agent = Agent(
        ScriptedLlm([tool_call_response(("slow", {}))]), core_model, tools=[make_tool("slow", slow)]
    )
    events: Iterator[AgentEvent] = agent.prompt("go")
    for event in events:
        if isinstance(event, ToolExecutionStartEvent):
            break
    events.close()  # type: ignore[attr-defined]
    assert tool_saw_abort.wait(5)
    [assistant] = [m for m in agent.state.messages if isinstance(m, AssistantMessageToolCall)]
    results = [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]
    assert [r.tool_call_id for r in results] == [assistant.tool_calls[0].id]
    assert results[0].is_error
    assert not agent.state.is_running


def test_busy_reset_and_missing_model(core_model: LlmModel) -> None:
    agent = _agent(["one"], core_model)
    events = agent.prompt("hi")
    with pytest.raises(AgentBusyError, match="still answering"):
        agent.prompt("again")
    with pytest.raises(AgentBusyError):
        agent.reset()
    list(events)
    agent.reset()
    assert agent.state.messages == [] and agent.state.system_prompt == "sys"
    assert "echo" in agent.state.tools
    with pytest.raises(AgentError, match="no model"):
        Agent(ScriptedLlm([])).prompt("hi")
