"""A server's log stream (level, filter) and protocol log (lines, export), against server-everything."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import pytest

from tests.fixtures.mcp import StdioServer
from yiem.explorer import (
    ServerEvents,
    filter_events,
    log_level_of,
    message_summary,
    protocol_log_json,
    protocol_rows,
)
from yiem.mcp import McpClient, McpNotification
from yiem.redaction import add_secrets


@pytest.fixture
def client(everything_stdio: StdioServer) -> Iterator[McpClient]:
    with McpClient.stdio(everything_stdio.command, everything_stdio.args) as found:
        yield found


def test_the_log_stream_of_the_server_is_kept_and_filtered(client: McpClient) -> None:
    events = ServerEvents()
    events.attach(client)
    heard = threading.Event()
    previous = client.event_sink

    def sink(notification: McpNotification) -> None:
        assert previous is not None
        previous(notification)
        if log_level_of(notification) is not None:
            heard.set()

    client.event_sink = sink
    client.set_logging_level("debug")
    client.call_tool("toggle-simulated-logging")  # one message at once, then one every 5 s
    assert heard.wait(30), [n.method for _, n in events.recent()]
    client.call_tool("toggle-simulated-logging")
    (when, real), *_ = filter_events(events.recent(200), "debug", logs_only=True)
    level = log_level_of(real)
    assert level is not None and str(real.params["data"]).lower().startswith(level)
    # The filter, over the real message and two made-up neighbours.
    quiet = McpNotification(method="notifications/message", params={"level": "debug", "data": "tick"})
    loud = McpNotification(method="notifications/message", params={"level": "alert", "data": "fire"})
    listed = McpNotification(method="notifications/tools/list_changed")
    stream = [(when, real), (when, quiet), (when, loud), (when, listed)]
    assert [n for _, n in filter_events(stream, "alert")] == [loud, listed] or level in ("alert", "emergency")
    assert [n for _, n in filter_events(stream, "alert", logs_only=True) if n is not real] == [loud]
    assert [n for _, n in filter_events(stream, "debug", "TICK")] == [quiet]
    assert filter_events(stream, "debug", "no line says this") == []


def test_protocol_log_rows_and_export_mask_secrets(client: McpClient) -> None:
    secret = "sk-test-protocol-log-secret-123"
    add_secrets(secret)
    client.call_tool("echo", {"message": f"key {secret}"})
    rows = protocol_rows(client.protocol_log)
    assert rows[0]["direction"] == "← received" and rows[0]["message"].startswith("result for #")
    assert any(row["message"].startswith("tools/call (request #") for row in rows)
    assert any(row["message"] == "notifications/initialized (notification)" for row in rows)
    assert protocol_rows(client.protocol_log, "tools/call")[0]["direction"] == "→ sent"
    # server-everything does not speak 2026-07-28: the discover probe, then the handshake.
    assert [row["revision"] for row in rows if row["message"].startswith("server/discover")] == ["2026-07-28"]
    assert [row["revision"] for row in rows if row["message"].startswith("initialize")] == ["2025-11-25"]
    exported = protocol_log_json("everything", client.protocol_log, client.protocol_version)
    assert secret not in exported and "***" in exported
    data = json.loads(exported)
    assert data["server"] == "everything"
    assert data["messages"][0]["direction"] == "sent"
    assert data["protocolVersion"] == "2025-11-25"
    assert data["messages"][0]["message"]["method"] == "server/discover"
    assert data["messages"][2]["message"]["method"] == "initialize"
    assert data["messages"][0]["time"].endswith("+00:00")
    assert secret not in json.dumps(protocol_rows(client.protocol_log))


def test_message_summary_in_words() -> None:
    assert message_summary({"jsonrpc": "2.0", "id": 3, "method": "ping"}) == "ping (request #3)"
    assert message_summary({"id": 3, "error": {"code": -1, "message": "no"}}) == "error for #3: no"


def test_a_lone_surrogate_from_a_server_is_shown_and_exported_replaced() -> None:
    """Issue 12: JSON's "\\ud800" in a server's message made the log's lines and export raise."""
    answer = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "odd \ud800"}]}}
    [row] = protocol_rows([(0.0, "received", answer)])
    assert row["bytes"] == len(json.dumps(answer, separators=(",", ":")).encode()) - len("\\ud800") + 3
    exported = protocol_log_json("odd", [(0.0, "received", answer)])
    assert (
        json.loads(exported.encode())["messages"][0]["message"]["result"]["content"][0]["text"]
        == "odd \ufffd"
    )
