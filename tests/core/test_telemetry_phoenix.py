"""The OpenTelemetry export read back from Arize Phoenix, a real receiver (issue 15)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import httpx

from tests.fixtures.core import tool_call_response
from yiem import (
    AbortSignal,
    AgentContext,
    AgentLoopConfig,
    AgentTool,
    LlmModel,
    ScriptedLlm,
    TextContent,
    UserMessage,
    run_agent_loop,
)
from yiem.telemetry import flush_export


def _spans_of_run(phoenix: str, run_id: str) -> list[dict[str, Any]]:
    """The run's spans as Phoenix stores them, waiting until all four have been ingested."""
    pause = threading.Event()
    for _ in range(240):
        answer = httpx.get(f"{phoenix}/v1/projects/default/spans", params={"limit": 1000}, timeout=10)
        answer.raise_for_status()
        spans = answer.json()["data"]
        roots = [s for s in spans if s["attributes"].get("yiem.run.id") == run_id]
        if roots:
            trace_id = roots[0]["context"]["trace_id"]
            found = [s for s in spans if s["context"]["trace_id"] == trace_id]
            if len(found) == 4:
                return found
        pause.wait(0.5)
    raise AssertionError(f"Phoenix never held the 4 spans of run {run_id}")


def test_phoenix_receives_the_run_its_links_and_attributes(
    phoenix: str, otel_export: Callable[..., None], core_model: LlmModel
) -> None:
    otel_export(f"{phoenix}/v1/traces")

    def add(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal) -> str:
        return str(arguments["a"] + arguments["b"])

    tool = AgentTool(name="add", execute=add, server="calculator")
    context = AgentContext(messages=[UserMessage(content=[TextContent(text="2 + 3?")])], tools={"add": tool})
    llm = ScriptedLlm([tool_call_response(("add", {"a": 2, "b": 3})), "5."])
    messages = [
        e.message
        for e in run_agent_loop(context, llm, core_model, AgentLoopConfig())
        if e.type == "message_end"
    ]
    assert flush_export()
    run_id = messages[-1].timeline.run
    spans = {span["name"]: span for span in _spans_of_run(phoenix, run_id)}
    assert sorted(spans) == ["chat scripted-1", "execute_tool add", "invoke_agent yiem"]
    root = spans["invoke_agent yiem"]
    assert root["parent_id"] is None
    for name in ("chat scripted-1", "execute_tool add"):
        assert spans[name]["parent_id"] == root["context"]["span_id"]
    # Phoenix reads the GenAI conventions: it files the spans as an agent, a model call and a tool.
    assert (root["span_kind"], spans["chat scripted-1"]["span_kind"]) == ("AGENT", "LLM")
    assert spans["execute_tool add"]["span_kind"] == "TOOL"
    chat = spans["chat scripted-1"]["attributes"]
    assert chat["gen_ai.provider.name"] == "scripted" and chat["gen_ai.request.model"] == "scripted-1"
    assert chat["gen_ai.operation.name"] == "chat"
    called = spans["execute_tool add"]["attributes"]
    assert (called["gen_ai.tool.name"], called["gen_ai.tool.call.id"]) == ("add", "call_0")
    assert called["yiem.mcp.server"] == "calculator"
    # The run's totals: the scripted answer after the tool reports no usage, so the first request's.
    assert root["attributes"]["gen_ai.usage.input_tokens"] == 100
    assert abs(root["attributes"]["gen_ai.usage.cost"] - (100 * 3.0 + 20 * 15.0) / 1e6) < 1e-9
