"""Tool calls in Compare's columns, drawn as Chat draws a finished one (AppTest, scripted server)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.scripted_http import Reply, ScriptedServer, openai_chunk, sse
from tests.ui.test_compare_saved import _answer, _compare_page, _send, _specs, db_url, server
from yiem.tool_registry import ToolRegistry
from yiem.types import AgentTool, AssistantMessageToolCall, TextContent, ToolResultMessage

__all__ = ["db_url", "server"]  # the fixtures this module uses, imported with the helpers


def _clock(tool_call_id: str, arguments: dict[str, Any], signal: Any) -> Any:
    return [TextContent(text=json.dumps({"time": "12:00", "zone": arguments.get("zone")}))]


def _calls_the_clock() -> Reply:
    call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "clock", "arguments": ""}}
    args = {"index": 0, "function": {"arguments": json.dumps({"zone": "UTC"})}}
    chunks = [
        openai_chunk({"role": "assistant", "content": None, "tool_calls": [call]}),
        openai_chunk({"tool_calls": [args]}),
        openai_chunk({}, "tool_calls"),
        sse("[DONE]"),
    ]
    return Reply(headers={"Content-Type": "text/event-stream"}, chunks=chunks)


@pytest.fixture
def other() -> Iterator[ScriptedServer]:
    scripted = ScriptedServer()
    yield scripted
    scripted.close()


def test_a_column_s_tool_call_and_result_are_drawn_as_in_chat(
    db_url: str, server: ScriptedServer, other: ScriptedServer
) -> None:
    # Two columns, each on its own server (replies go in order of arrival): the first calls the
    # tool and then answers, the second answers at once.
    server.script(_calls_the_clock(), _answer("It is noon"))
    other.script(_answer("No tools here"))
    at = _compare_page()
    at.session_state["compare_specs"] = [_specs(server)[0], _specs(other)[1]]
    at.run()
    registry: ToolRegistry = at.session_state["tool_registry"]
    registry.add_tool(AgentTool(name="clock", description="The time.", execute=_clock))
    at.run()
    at.multiselect(key="cmp_tools_0").select("clock").run()
    comparison = _send(at, "What time is it?")
    caller = next(c for c in comparison.columns if c.spec.tools)
    calls = [m for m in caller.turn if isinstance(m, AssistantMessageToolCall)]
    results = [m for m in caller.turn if isinstance(m, ToolResultMessage)]
    names = [call.name for m in calls for call in m.tool_calls]
    assert names == ["clock"], [c.error for c in comparison.columns]
    assert len(results) == 1 and not results[0].is_error
    expanders = [e for e in at.expander if "clock" in e.label]
    assert [e.label for e in expanders] == ["Tool `clock`"]
    shown = "\n".join(str(code.value) for code in expanders[0].code)
    assert '"zone": "UTC"' in shown and '"time": "12:00"' in shown
