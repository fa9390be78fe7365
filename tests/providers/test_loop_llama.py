"""The agent loop and Agent driving the real llama-server + SmolLM2 through OpenAIChatClient."""

from __future__ import annotations

from typing import Any

import pytest

from tests.providers.test_openai_chat import TOOL_OPTIONS, tool_prompt
from yiem import (
    Agent,
    AgentEndEvent,
    AgentLoopConfig,
    AssistantMessage,
    AssistantMessageToolCall,
    MessageUpdateEvent,
    ToolExecutionEndEvent,
    ToolResultMessage,
    run_agent_loop,
)
from yiem.providers import OpenAIChatClient
from yiem.providers.local_llm import LocalLlmServer

pytestmark = pytest.mark.llama


def test_agent_streams_a_real_reply(llama_server: LocalLlmServer) -> None:
    model = llama_server.llm_model()
    agent = Agent(
        OpenAIChatClient(llama_server.openai_base_url),
        model,
        system_prompt="You are a helpful assistant.",
        config=AgentLoopConfig(temperature=0, max_tokens=24),
    )
    events = list(agent.prompt("Say hello in one short sentence."))
    end = events[-1]
    assert isinstance(end, AgentEndEvent) and end.error_message is None, end.error_message
    assert [e for e in events if isinstance(e, MessageUpdateEvent)]
    reply = agent.state.messages[-1]
    assert isinstance(reply, AssistantMessage) and reply.text.strip()
    assert reply.usage.input_tokens > 0 and reply.usage.output_tokens > 0
    assert reply.ttft_ms is not None and reply.duration_ms is not None and reply.ttft_ms <= reply.duration_ms
    assert reply.cost is None  # a local model's price is unknown, never shown as free
    assert len(agent.state.messages) == 2


def test_loop_runs_the_tool_a_real_model_asks_for(llama_server_tools: LocalLlmServer) -> None:
    ran: list[dict[str, Any]] = []
    context = tool_prompt()
    tool = context.tools["get_weather"]  # type: ignore[index]
    original = tool.execute
    tool.execute = lambda call_id, arguments, signal: (
        ran.append(arguments),
        original(call_id, arguments, signal),
    )[1]
    client = OpenAIChatClient(llama_server_tools.openai_base_url, extra_body={"tool_choice": "required"})
    config = AgentLoopConfig(
        max_turns=1, temperature=TOOL_OPTIONS.temperature, max_tokens=TOOL_OPTIONS.max_tokens
    )
    events = list(run_agent_loop(context, client, llama_server_tools.llm_model(), config))
    end = events[-1]
    assert isinstance(end, AgentEndEvent)
    asked, *results = end.messages
    assert isinstance(asked, AssistantMessageToolCall), asked.error_message
    assert ran and all(isinstance(args.get("city"), str) for args in ran)
    assert [r.tool_call_id for r in results if isinstance(r, ToolResultMessage)] == [
        c.id for c in asked.tool_calls
    ]
    assert not any(e.is_error for e in events if isinstance(e, ToolExecutionEndEvent))
    assert end.stop_reason == "max_turns"  # tool_choice=required would make it call tools for ever


def test_abort_stops_a_real_stream(llama_server: LocalLlmServer) -> None:
    agent = Agent(
        OpenAIChatClient(llama_server.openai_base_url),
        llama_server.llm_model(),
        config=AgentLoopConfig(temperature=0.8, max_tokens=400),
    )
    updates = 0
    events = []
    for event in agent.prompt("Write a long story about a lighthouse keeper."):
        events.append(event)
        if isinstance(event, MessageUpdateEvent):
            updates += 1
            if updates == 3:
                agent.abort("enough")
    end = events[-1]
    assert isinstance(end, AgentEndEvent) and end.stop_reason == "aborted"
    reply = agent.state.messages[-1]
    assert isinstance(reply, AssistantMessage) and reply.stop_reason == "aborted"
    assert not agent.state.is_running
