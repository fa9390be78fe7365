"""The Tools page under AppTest, against the real server-everything over stdio."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit import config as st_config
from streamlit.testing.v1 import AppTest

from tests.fixtures.mcp import StdioServer
from tests.fixtures.ports import free_port

PAGE = str(Path(__file__).resolve().parents[2] / "ui" / "pages" / "tools.py")
TIMEOUT = 60


@pytest.fixture
def address() -> Iterator[Any]:
    """Set the address the app says it is bound to; put the old one back afterwards."""
    before = st_config.get_option("server.address")

    def set_address(value: str | None) -> None:
        st_config.set_option("server.address", value)

    set_address("127.0.0.1")
    yield set_address
    set_address(before)


def _page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: dict[str, Any]) -> AppTest:
    config_path = tmp_path / "mcp.json"
    config_path.write_text(json.dumps(config))
    monkeypatch.setenv("YIEM_MCP_CONFIG", str(config_path))
    monkeypatch.setenv("YIEM_DATABASE_URL", f"sqlite:///{tmp_path / 'app.db'}")
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, at.exception
    return at


def _everything_entry(server: StdioServer) -> dict[str, Any]:
    return {"command": server.command, "args": list(server.args)}


@pytest.fixture
def connected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, everything_stdio: StdioServer, address: Any
) -> Iterator[AppTest]:
    """The page connected to server-everything from mcp.json."""
    at = _page(tmp_path, monkeypatch, {"mcpServers": {"everything": _everything_entry(everything_stdio)}})
    if "everything" not in at.session_state["mcp_clients"]:  # the app's bootstrap may have connected it
        at.button(key="tools-connect").click().run()
    assert not at.exception, at.exception
    assert "everything" in at.session_state["mcp_clients"]
    yield at
    for client in at.session_state["mcp_clients"].values():
        client.close()


def _choose_tool(at: AppTest, name: str) -> None:
    at.radio(key="tools-tool:everything").set_value(name).run()
    assert not at.exception, at.exception


def _field(at: AppTest, tool: str, name: str) -> Any:
    return at.get_by_key(f"tf:everything:{tool}:{name}")


def _call(at: AppTest) -> None:
    at.button(key="tools-call").click().run()
    assert not at.exception, at.exception
    # A call that outlasts the page's short wait finishes on a later run (the browser polls for it).
    deadline = time.monotonic() + TIMEOUT
    while _state(at, "tools-run"):
        assert time.monotonic() < deadline, "the call never finished"
        time.sleep(0.2)
        at.run()


def _state(at: AppTest, key: str) -> Any:
    return at.session_state.get(key, None)


def _texts(at: AppTest) -> list[str]:
    return [element.value for element in [*at.markdown, *at.caption, *at.error, *at.warning, *at.success]]


def test_add_server_from_the_form_saves_it_and_connects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, everything_stdio: StdioServer, address: Any
) -> None:
    at = _page(tmp_path, monkeypatch, {"mcpServers": {}})
    at.radio(key="tools-add-kind").set_value("Command (stdio)").run()
    assert not at.warning, "on 127.0.0.1 typed commands are allowed"
    at.text_input(key="tools-add-name").input("everything")
    at.text_input(key="tools-add-command").input(everything_stdio.command)
    at.text_input(key="tools-add-args").input(" ".join(everything_stdio.args))
    at.text_area(key="tools-add-env").input("GREETING=hello")
    at.checkbox(key="tools-add-save").check()
    at.button(key="tools-add-connect").click().run()
    try:
        assert not at.exception, at.exception
        saved = json.loads((tmp_path / "mcp.json").read_text())
        assert saved["mcpServers"]["everything"] == {
            **_everything_entry(everything_stdio),
            "env": {"GREETING": "hello"},
        }
        client = at.session_state["mcp_clients"]["everything"]
        texts = "\n".join(_texts(at))
        assert client.server_info.name in texts and client.protocol_version in texts
        assert "none (stdio)" in texts
        assert "everything" in at.session_state["tool_registry"].servers

        at.button(key="tools-ping").click().run()
        assert any(caption.value.startswith("Ping answered in ") for caption in at.caption)

        at.button(key="tools-disconnect").click().run()
        assert "everything" not in at.session_state["mcp_clients"]
        assert "everything" not in at.session_state["tool_registry"].servers
        # The saved entry stays, and connects again from mcp.json.
        at.button(key="tools-connect").click().run()
        assert "everything" in at.session_state["mcp_clients"]
    finally:
        for client in at.session_state["mcp_clients"].values():
            client.close()


def test_a_broken_mcp_json_is_reported_and_never_overwritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, everything_stdio: StdioServer, address: Any
) -> None:
    at = _page(tmp_path, monkeypatch, {"mcpServers": {}})
    broken = '{"mcpServers": {"x": '
    (tmp_path / "mcp.json").write_text(broken)
    at.run()
    assert any(error.value.startswith("mcp.json could not be read: ") for error in at.error)
    at.radio(key="tools-add-kind").set_value("Command (stdio)").run()
    at.text_input(key="tools-add-name").input("everything")
    at.text_input(key="tools-add-command").input(everything_stdio.command)
    at.text_input(key="tools-add-args").input(" ".join(everything_stdio.args))
    at.checkbox(key="tools-add-save").check()
    at.button(key="tools-add-connect").click().run()
    try:
        assert not at.exception, at.exception
        assert any(warning.value.startswith("The server was not saved: ") for warning in at.warning)
        assert (tmp_path / "mcp.json").read_text() == broken
        assert "everything" in at.session_state["mcp_clients"], "it still connects for this session"
    finally:
        for client in at.session_state["mcp_clients"].values():
            client.close()


def test_typed_commands_are_refused_when_the_app_is_reachable_from_the_network(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, address: Any
) -> None:
    address("0.0.0.0")
    at = _page(tmp_path, monkeypatch, {"mcpServers": {}})
    at.radio(key="tools-add-kind").set_value("Command (stdio)").run()
    assert any("anyone who can reach it could start programs" in w.value for w in at.warning)
    assert at.button(key="tools-add-connect").disabled
    assert at.text_input(key="tools-add-command").disabled

    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {}, "allow_stdio_from_ui": True}))
    at.run()
    assert not at.warning and not at.button(key="tools-add-connect").disabled


def test_a_connection_failure_is_shown_in_words_with_the_servers_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, address: Any
) -> None:
    script = "echo 'cannot open the database: permission denied' >&2; exit 3"
    at = _page(tmp_path, monkeypatch, {"mcpServers": {"broken": {"command": "sh", "args": ["-c", script]}}})
    if "tools-connect" in [button.key for button in at.button]:
        at.button(key="tools-connect").click().run()
    assert not at.exception, at.exception
    errors = "\n".join(error.value for error in at.error)
    assert "Could not connect to **broken**" in errors
    assert "cannot open the database: permission denied" in errors
    assert "Traceback" not in errors


def test_an_unreachable_url_is_reported_in_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, address: Any
) -> None:
    port = free_port()  # nothing listens there
    at = _page(tmp_path, monkeypatch, {"mcpServers": {}})
    at.text_input(key="tools-add-name").input("gone")
    at.text_input(key="tools-add-url").input(f"http://127.0.0.1:{port}/mcp")
    at.button(key="tools-add-connect").click().run()
    assert not at.exception, at.exception
    errors = "\n".join(error.value for error in at.error)
    assert "Could not connect to **gone**" in errors and f"127.0.0.1:{port}" in errors
    assert "gone" not in at.session_state["mcp_clients"]


def test_get_sum_form_call_and_result(connected: AppTest) -> None:
    """SP-009 and SP-010 on the page: every listed tool is offered, get-sum is called from its form."""
    at = connected
    listed = at.session_state["mcp_clients"]["everything"].list_tools()
    assert f"**{len(listed)} tools**" in _texts(at)
    assert at.radio(key="tools-tool:everything").options == [tool.display_name for tool in listed]
    _choose_tool(at, "get-sum")
    a, b = _field(at, "get-sum", "a"), _field(at, "get-sum", "b")
    assert a.label == "a \\*" and b.label == "b \\*", "required fields are marked"
    a.set_value(3.5)
    b.set_value(4)
    _call(at)
    assert "The sum of 3.5 and 4 is 7.5." in _texts(at)
    record = at.session_state["tools-history"][-1]
    assert record.arguments == {"a": 3.5, "b": 4.0}
    assert record.request["params"] == {"name": "get-sum", "arguments": {"a": 3.5, "b": 4.0}}
    assert record.response["content"][0]["text"] == "The sum of 3.5 and 4 is 7.5."


def test_a_missing_required_number_is_refused_before_calling(connected: AppTest) -> None:
    at = connected
    _choose_tool(at, "get-sum")
    _field(at, "get-sum", "a").set_value(1)
    _call(at)
    assert "This field is required." in [error.value for error in at.error]
    assert not _state(at, "tools-history"), "nothing was sent"


def test_an_error_result_is_styled_as_an_error(connected: AppTest) -> None:
    at = connected
    _choose_tool(at, "get-resource-reference")
    _field(at, "get-resource-reference", "resourceId").set_value(1.5)
    _call(at)
    errors = [error.value for error in at.error]
    assert "The tool reported an error:" in errors
    assert "Invalid resourceId: 1.5. Must be a finite positive integer." in errors
    assert at.session_state["tools-history"][-1].result.is_error


def test_an_image_result_is_drawn(connected: AppTest) -> None:
    at = connected
    _choose_tool(at, "get-tiny-image")
    _call(at)
    assert len(at.image) == 1
    assert at.image[0].value[0].startswith("data:image/png;base64,iVBORw0KGgo")
    assert not at.error


def test_a_resource_link_in_a_result_opens_in_place(connected: AppTest) -> None:
    at = connected
    _choose_tool(at, "get-resource-links")
    _field(at, "get-resource-links", "count").set_value(2.0)
    _call(at)
    result = at.session_state["tools-history"][-1].result
    links = [block for block in result.content if block.type == "resource_link"]
    assert len(links) == 2
    opens = [button for button in at.button if button.label == "Open"]
    assert len(opens) == 2
    opens[0].click().run()
    assert not at.exception, at.exception
    assert not [button for button in at.button if button.label == "Open" and button.key == opens[0].key]
    shown = "\n".join(element.value for element in [*at.markdown, *at.caption])
    assert f"`{links[0].uri}`" in shown
    # The first link is a text/plain blob: shown as its text, not as bytes to download.
    assert "Resource 1: This is a base64 blob created at" in shown


def test_structured_content_is_checked_against_the_output_schema(connected: AppTest) -> None:
    at = connected
    _choose_tool(at, "get-structured-content")
    _field(at, "get-structured-content", "location").set_value("Chicago")
    _call(at)
    assert "Structured content" in "\n".join(_texts(at))
    assert any("matches the tool's output schema" in caption.value for caption in at.caption)


def test_raw_json_mode_stays_in_step_with_the_form(connected: AppTest) -> None:
    at = connected
    _choose_tool(at, "get-sum")
    _field(at, "get-sum", "a").set_value(2)
    at.toggle(key="tf:everything:get-sum:@rawmode").set_value(True).run()
    raw = at.text_area(key="tf:everything:get-sum:@raw")
    assert json.loads(raw.value) == {"a": 2.0}
    raw.input('{"a": 10, "b": 32}').run()
    at.toggle(key="tf:everything:get-sum:@rawmode").set_value(False).run()
    assert _field(at, "get-sum", "a").value == 10 and _field(at, "get-sum", "b").value == 32
    at.toggle(key="tf:everything:get-sum:@rawmode").set_value(True).run()
    at.text_area(key="tf:everything:get-sum:@raw").input('{"a": 1,').run()
    at.toggle(key="tf:everything:get-sum:@rawmode").set_value(False).run()
    assert at.toggle(key="tf:everything:get-sum:@rawmode").value, "bad JSON keeps the editor open"
    assert any(error.value.startswith("Not valid JSON") for error in at.error)
    at.text_area(key="tf:everything:get-sum:@raw").input('{"a": "one", "b": 2}').run()
    at.toggle(key="tf:everything:get-sum:@rawmode").set_value(False).run()
    assert at.toggle(key="tf:everything:get-sum:@rawmode").value, "a value the form cannot show keeps it open"
    assert any('a: "one" is not a number.' in error.value for error in at.error)
    at.text_area(key="tf:everything:get-sum:@raw").input('{"a": 1, "b": 2}').run()
    _call(at)
    assert "The sum of 1 and 2 is 3." in _texts(at)


def test_the_form_and_the_chosen_tool_survive_a_visit_to_another_tab(connected: AppTest) -> None:
    at = connected
    _choose_tool(at, "get-sum")
    _field(at, "get-sum", "a").set_value(3)
    at.number_input(key="tools-timeout").set_value(15).run()
    at.session_state["tools-tab"] = "History"
    at.run()
    assert "tf:everything:get-sum:a" not in [widget.key for widget in at.number_input], "Tools is not drawn"
    at.session_state["tools-tab"] = "Tools"
    at.run()
    assert at.radio(key="tools-tool:everything").value == "get-sum"
    assert _field(at, "get-sum", "a").value == 3
    assert at.number_input(key="tools-timeout").value == 15
    _choose_tool(at, "echo")
    _choose_tool(at, "get-sum")
    assert _field(at, "get-sum", "a").value == 3, "each tool keeps its own form"


def test_server_log_messages_show_in_the_notifications_panel(connected: AppTest) -> None:
    at = connected
    _choose_tool(at, "toggle-simulated-logging")
    _call(at)
    try:
        deadline = time.monotonic() + 30
        while not any(re.search(r"[- ]level[- ]message", block.value) for block in at.code):
            assert time.monotonic() < deadline, "no log message shown"
            time.sleep(0.2)
            at.run()
        assert any(expander.label.startswith("Server notifications (") for expander in at.expander)
    finally:
        _call(at)  # logging off again


def test_history_replays_a_call_and_offers_an_export(connected: AppTest) -> None:
    at = connected
    _choose_tool(at, "echo")
    _field(at, "echo", "message").input("hello history")
    _call(at)
    at.session_state["tools-tab"] = "History"
    at.run()
    assert at.get("download_button"), "the history can be exported"
    first = at.session_state["tools-history"][0]
    at.button(key=f"tools-replay-{first.id}").click().run()
    assert not at.exception, at.exception
    records = at.session_state["tools-history"]
    assert [record.arguments for record in records] == [{"message": "hello history"}] * 2
    assert records[1].id != first.id


def test_use_in_chat_sets_the_chat_agents_tools(connected: AppTest) -> None:
    at = connected
    _choose_tool(at, "get-sum")
    at.toggle(key="tools-use:get-sum").set_value(True).run()
    assert "get-sum" in at.session_state["enabled_tools"]
    at.toggle(key="tools-use:get-sum").set_value(False).run()
    assert "get-sum" not in at.session_state["enabled_tools"]
    at.toggle(key="tools-use:get-sum").set_value(True).run()
    at.button(key="tools-disconnect").click().run()
    assert "get-sum" not in at.session_state["enabled_tools"], "a disconnected server's tools leave the chat"


def test_a_server_that_dies_is_reported_in_words_and_can_be_disconnected(connected: AppTest) -> None:
    at = connected
    _choose_tool(at, "get-sum")
    client = at.session_state["mcp_clients"]["everything"]
    os.kill(client.transport.pid, signal.SIGKILL)  # the server process this test started
    at.button(key="tools-ping").click().run()
    assert not at.exception, at.exception
    assert any(caption.value.startswith("Ping no answer: ") for caption in at.caption)
    _field(at, "get-sum", "a").set_value(1)
    _field(at, "get-sum", "b").set_value(2)
    _call(at)
    record = at.session_state["tools-history"][-1]
    assert record.status == "failed" and "MCP server" in (record.error or "")
    assert record.error in [error.value for error in at.error]
    at.button(key="tools-disconnect").click().run()
    assert not at.exception, at.exception
    assert "everything" not in at.session_state["mcp_clients"]


def test_a_long_call_shows_progress_and_can_be_cancelled(connected: AppTest) -> None:
    at = connected
    _choose_tool(at, "trigger-long-running-operation")
    _field(at, "trigger-long-running-operation", "duration").set_value(30.0)
    _field(at, "trigger-long-running-operation", "steps").set_value(30.0)
    at.button(key="tools-call").click().run()
    deadline = time.monotonic() + TIMEOUT
    while not any("of 30" in bar.text for bar in at.progress if bar.text):
        assert time.monotonic() < deadline, "no progress shown"
        time.sleep(0.3)
        at.run()
    at.button(key="tools-cancel").click().run()
    assert not at.exception, at.exception
    record = at.session_state["tools-history"][-1]
    assert record.status == "cancelled"
    assert any(warning.value.startswith("Cancelled after") for warning in at.warning)


def test_the_timeout_setting_ends_a_silent_call_in_words(connected: AppTest) -> None:
    at = connected
    _choose_tool(at, "trigger-long-running-operation")
    _field(at, "trigger-long-running-operation", "duration").set_value(30.0)
    _field(at, "trigger-long-running-operation", "steps").set_value(1.0)
    at.number_input(key="tools-timeout").set_value(1).run()
    _call(at)
    record = at.session_state["tools-history"][-1]
    assert record.status == "failed"
    assert "did not answer 'tools/call' within 1 s" in (record.error or "")
    assert record.error in [error.value for error in at.error]


def test_resources_are_listed_and_read(connected: AppTest) -> None:
    at = connected
    at.session_state["tools-tab"] = "Resources"
    at.run()
    listed = at.session_state["tools-listings"][("everything", "resources")]
    assert len(at.selectbox(key="tools-resource:everything").options) == len(listed) > 1
    at.selectbox(key="tools-resource:everything").set_value(listed[1].uri).run()
    at.button(key="tools-resource-read").click().run()
    assert not at.exception, at.exception
    contents = at.session_state["tools-resource-contents"][2]
    assert contents[0].uri == listed[1].uri and contents[0].text
    assert contents[0].text.splitlines()[0] in "\n".join(m.value for m in at.markdown)


def test_prompts_are_filled_from_a_form(connected: AppTest) -> None:
    at = connected
    at.session_state["tools-tab"] = "Prompts"
    at.run()
    at.selectbox(key="tools-prompt:everything").set_value("args-prompt").run()
    assert not at.exception, at.exception
    at.get_by_key("pf:everything:args-prompt:city").input("Bern")
    at.button(key="tools-prompt-get").click().run()
    assert not at.exception, at.exception
    result = at.session_state["tools-prompt-result"][2]
    assert "Bern" in result.messages[0].content.text
