"""The Tools page's MCP extras under AppTest against the real server-everything (issue 16):
resource templates with a form, argument completion, subscriptions, the Log tab."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from tests.fixtures.mcp import StdioServer
from tests.ui.test_tools_page import _call, _choose_tool, _field, _page, address, connected

__all__ = ["address", "connected"]  # fixtures, imported for these tests

TEXT_TEMPLATE = "demo://resource/dynamic/text/{resourceId}"


def _tab(at: AppTest, name: str) -> None:
    at.session_state["tools-tab"] = name
    at.run()
    assert not at.exception, at.exception


def _buttons(at: AppTest) -> dict[str, Any]:
    return {button.label: button for button in at.button}


def test_a_resource_template_is_read_from_its_form(connected: AppTest) -> None:
    at = connected
    _tab(at, "Resources")
    at.selectbox(key="tools-template:everything").set_value(TEXT_TEMPLATE).run()
    at.get_by_key(f"rt:everything:{TEXT_TEMPLATE}:resourceId").input("4")
    at.button(key="tools-template-read").click().run()
    assert not at.exception, at.exception
    server, uri, contents = at.session_state["tools-template-contents"]
    assert (server, uri) == ("everything", "demo://resource/dynamic/text/4")
    assert contents[0].text.startswith("Resource 4:")
    assert any(m.value.startswith("Resource 4:") for m in at.markdown)


def test_prompt_arguments_get_suggestions_that_fill_the_field(connected: AppTest) -> None:
    at = connected
    _tab(at, "Prompts")
    at.selectbox(key="tools-prompt:everything").set_value("completable-prompt").run()
    at.get_by_key("pf:everything:completable-prompt:department").input("S").run()
    assert not at.exception, at.exception
    buttons = _buttons(at)
    assert "Sales" in buttons and "Support" in buttons and "Engineering" not in buttons
    buttons["Sales"].click().run()
    assert at.session_state["pf:everything:completable-prompt:department"] == "Sales"
    # The first argument narrows the second.
    assert {"David", "Eve", "Frank"} <= set(_buttons(at)) and "Alice" not in _buttons(at)


def test_subscribe_to_a_resource(connected: AppTest) -> None:
    at = connected
    _tab(at, "Resources")
    uri = at.selectbox(key="tools-resource:everything").value
    at.button(key="tools-subscribe:everything").click().run()
    assert not at.exception, at.exception
    assert uri in at.session_state["tools-subscribed"]["everything"]
    assert at.button(key="tools-subscribe:everything").label == "Unsubscribe"
    at.button(key="tools-subscribe:everything").click().run()
    assert uri not in at.session_state["tools-subscribed"]["everything"]


def test_log_tab_sets_the_level_and_shows_the_protocol_log(connected: AppTest) -> None:
    at = connected
    _tab(at, "Log")
    at.selectbox(key="tools-log-level:everything").set_value("debug").run()
    at.button(key="tools-log-set:everything").click().run()
    assert not at.exception, at.exception
    client = at.session_state["mcp_clients"]["everything"]
    sent = [m for _, d, m in client.protocol_log if d == "sent" and m.get("method") == "logging/setLevel"]
    assert sent and sent[-1]["params"] == {"level": "debug"}
    (table,) = at.dataframe
    assert "logging/setLevel (request" in " ".join(str(v) for v in table.value["message"])
    at.text_input(key="tools-protocol-filter:everything").input("setLevel").run()
    assert set(at.dataframe[0].value["message"].str.contains("setLevel|#", regex=True)) == {True}


def test_roots_edited_in_mcp_json_reach_the_connected_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, everything_stdio: StdioServer, address: Any
) -> None:
    first, second = tmp_path / "reports", tmp_path / "archive"
    first.mkdir()
    second.mkdir()
    entry = {"command": everything_stdio.command, "args": list(everything_stdio.args)}
    at = _page(tmp_path, monkeypatch, {"mcpServers": {"everything": {**entry, "roots": [str(first)]}}})
    if "everything" not in at.session_state["mcp_clients"]:
        at.button(key="tools-connect").click().run()
    client = at.session_state["mcp_clients"]["everything"]
    try:
        client.list_tools()
        assert first.as_uri() in client.call_tool("get-roots-list").text
        config = tmp_path / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {"everything": {**entry, "roots": [str(second)]}}}))
        at.run()
        assert not at.exception, at.exception
        sent = [m.get("method") for _, d, m in client.protocol_log if d == "sent"]
        assert "notifications/roots/list_changed" in sent
        deadline = time.monotonic() + 10
        while second.as_uri() not in (text := client.call_tool("get-roots-list").text):
            assert time.monotonic() < deadline, text
            time.sleep(0.1)
        assert first.as_uri() not in text
        assert any(second.as_uri() in c.value for c in at.caption)
    finally:
        client.close()


def test_a_task_tool_runs_from_the_page_with_its_badge(connected: AppTest) -> None:
    at = connected
    _choose_tool(at, "simulate-research-query")
    assert any("task (required)" in m.value for m in at.markdown)
    _field(at, "simulate-research-query", "topic").input("tides")
    _call(at)
    record = at.session_state["tools-last"][("everything", "simulate-research-query")]
    assert record.error is None and "Research Report: tides" in record.result.text
