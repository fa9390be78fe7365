"""The agent loop calling real MCP tools through the ToolRegistry (SP-009, SP-010, FR-004)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fixtures.core import tool_call_response
from tests.fixtures.mcp import SCRIPTED_STDIO, StdioServer
from yiem.events import AgentEndEvent, ToolExecutionEndEvent, ToolExecutionUpdateEvent
from yiem.loop import run_agent_loop
from yiem.mcp import McpClient
from yiem.scripted_llm import ScriptedLlm
from yiem.tool_registry import ToolRegistry
from yiem.types import AgentContext, LlmModel, TextContent, ToolResultMessage, UserMessage


@pytest.fixture(scope="module")
def registry(everything_stdio: StdioServer) -> Iterator[ToolRegistry]:
    registry = ToolRegistry()
    with McpClient.stdio(everything_stdio.command, everything_stdio.args) as client:
        registry.add_mcp_server("everything", client)
        yield registry


def context_for(registry: ToolRegistry, text: str) -> AgentContext:
    return AgentContext(
        system_prompt="Use the tools.",
        messages=[UserMessage(content=[TextContent(text=text)])],
        tools=registry.tools,
    )


def test_sp010_loop_calls_get_sum_and_the_result_reaches_the_next_turn(
    registry: ToolRegistry, core_model: LlmModel
) -> None:
    """SP-009/SP-010 end to end: the model asks for get-sum, the MCP result is the next turn's input."""
    llm = ScriptedLlm([tool_call_response(("get-sum", {"a": 19, "b": 23})), "It is 42."])
    events = list(run_agent_loop(context_for(registry, "What is 19 + 23?"), llm, core_model))

    ends = [e for e in events if isinstance(e, ToolExecutionEndEvent)]
    assert len(ends) == 1 and not ends[0].is_error
    assert ends[0].result.content == [TextContent(text="The sum of 19 and 23 is 42.")]
    # The second LLM call saw the tool result as the last message.
    second = llm.requests[1]
    last = second.messages[-1]
    assert isinstance(last, ToolResultMessage)
    assert last.tool_call_id == "call_0" and last.tool_name == "get-sum"
    assert last.content == [TextContent(text="The sum of 19 and 23 is 42.")]
    assert "get-sum" in second.tool_names
    final = events[-1]
    assert isinstance(final, AgentEndEvent)


def test_mcp_progress_becomes_tool_execution_updates(registry: ToolRegistry, core_model: LlmModel) -> None:
    llm = ScriptedLlm(
        [tool_call_response(("trigger-long-running-operation", {"duration": 1, "steps": 2})), "ok"]
    )
    events = list(run_agent_loop(context_for(registry, "run it"), llm, core_model))
    updates = [e for e in events if isinstance(e, ToolExecutionUpdateEvent)]
    assert [(u.progress, u.total) for u in updates] == [(1, 2), (2, 2)]


def test_mcp_error_result_and_crash_become_error_results(core_model: LlmModel) -> None:
    registry = ToolRegistry()
    with McpClient.stdio(SCRIPTED_STDIO.command, SCRIPTED_STDIO.args) as client:
        registry.add_mcp_server("scripted", client)
        llm = ScriptedLlm([tool_call_response(("fail", {})), tool_call_response(("crash", {})), "sorry"])
        events = list(run_agent_loop(context_for(registry, "break it"), llm, core_model))
    ends = {e.tool_call.name: e for e in events if isinstance(e, ToolExecutionEndEvent)}
    assert ends["crash"].is_error
    crash_text = ends["crash"].result.content[0]
    assert isinstance(crash_text, TextContent) and "simulated crash" in crash_text.text
    assert ends["fail"].is_error  # isError from the server carries over
    assert ends["fail"].result.content == [TextContent(text="it failed on purpose")]
