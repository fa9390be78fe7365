"""The Chat page's Timeline under each reply (issue 15), under AppTest with ScriptedLlm and a Python tool."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from streamlit.testing.v1 import AppTest

from yiem.scripted_llm import ScriptedLlm
from yiem.store import ConversationStore, create_store_engine
from yiem.tool_registry import ToolRegistry
from yiem.types import AssistantMessage, LlmModel, ModelCost, TextContent, UserMessage

ROOT = Path(__file__).resolve().parents[2]
PRICED = LlmModel(
    id="scripted-1", provider="scripted", cost=ModelCost(input=3.0, output=15.0), price_known=True
)


def _charts(at: AppTest) -> list[dict[str, Any]]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def test_the_timeline_is_drawn_only_when_opened_and_again_after_reopening(db_url: str) -> None:
    registry = ToolRegistry()

    def add(a: int, b: int) -> str:
        """Add two integers."""
        return str(a + b)

    registry.add_function(add)
    usage = {"inputTokens": 1000, "outputTokens": 200}
    call = {"id": "call_1", "name": "add", "arguments": {"a": 2, "b": 3}}
    llm = ScriptedLlm([{"content": "", "toolCalls": [call], "usage": usage}, "The sum is 5."])
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["llm_override"] = (llm, PRICED)
    for key, value in {"tool_registry": registry, "mcp_clients": {}, "mcp_errors": {}}.items():
        at.session_state[key] = value
    at.session_state["enabled_tools"] = {"add"}
    at.run()
    at.chat_input[0].set_value("What is 2 + 3?").run()
    assert not at.exception, at.exception
    # One reply (a tool call, its result, the answer), one Timeline under its last message, closed.
    assert [e.label for e in at.expander].count("Timeline") == 1
    assert _charts(at) == []
    conversation_id = at.query_params["c"]
    key = f"timeline-{conversation_id}-3"
    at.session_state[key] = True  # what a click on the expander sets
    at.run()
    (chart,) = _charts(at)
    bars = chart["data"][0]
    assert bars["y"] == ["model", "tools 1", "model"]
    assert bars["text"][0].startswith("scripted-1 · ") and "1,000 in / 200 out · $0.006000" in bars["text"][0]
    assert bars["text"][1].startswith("add · ")
    assert chart["data"][1]["text"] == ["TTFT", "TTFT"]

    # Reopened in a new session from the store: the same reply, the same timeline.
    again = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    again.query_params["c"] = conversation_id
    again.session_state[key] = True
    again.run()
    assert not again.exception, again.exception
    (reopened,) = _charts(again)
    assert reopened["data"][0]["y"] == ["model", "tools 1", "model"]


def test_a_reply_saved_before_timelines_has_no_expander(db_url: str) -> None:
    store = ConversationStore(create_store_engine(db_url))
    conversation = store.create(title="old")
    store.append_message(conversation.id, UserMessage(content=[TextContent(text="hi")]))
    store.append_message(conversation.id, AssistantMessage(content=[TextContent(text="hello")]))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["c"] = conversation.id
    at.run()
    assert not at.exception, at.exception
    assert "Timeline" not in [e.label for e in at.expander]
