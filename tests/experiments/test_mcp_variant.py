"""A variant with an MCP tool: the runner calls the real mcp-server-time through the tool registry."""

from __future__ import annotations

from tests.fixtures.core import tool_call_response
from yiem import ScriptedLlm, ToolResultMessage
from yiem.experiments import Dataset, Variant, run_experiment, scorers
from yiem.tool_registry import ToolRegistry


def test_a_variant_calls_mcp_server_time(time_registry: ToolRegistry) -> None:
    names = sorted(time_registry.tools)
    convert = next(name for name in names if name.endswith("convert_time"))
    arguments = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}
    # The model asks for the conversion, then answers with what the real server said (21:00 in Tokyo).
    llm = ScriptedLlm([tool_call_response((convert, arguments)), "Noon in UTC is 21:00 in Tokyo."])
    data = Dataset.from_records([{"input": "What is 12:00 UTC in Tokyo?", "expected": "21:00"}])
    with_tool = Variant(name="with time", llm=llm, tools=[convert], tool_execution="sequential")
    result = run_experiment(
        data,
        [with_tool],
        [scorers.contains(), scorers.called_tool(convert, {"target_timezone": "Asia/Tokyo"})],
        tools=time_registry.tools,
    )
    outcome = result.outcomes[0]
    assert outcome.error is None and outcome.passed, outcome.scores
    assert llm.requests[0].tool_names == [convert]  # only the tool the variant names is offered
    tool_result = next(m for m in outcome.messages if isinstance(m, ToolResultMessage))
    assert not tool_result.is_error
    assert "21:00" in tool_result.text and "Asia/Tokyo" in tool_result.text  # the server's own answer
