"""The legacy HTTP+SSE transport against server-everything in its `sse` mode: chosen by itself when
Streamable HTTP is refused, named in mcp.json as type "sse", and carrying server requests."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tests.fixtures.ports import free_port
from yiem.mcp import (
    ElicitationRequest,
    ElicitationResult,
    McpClient,
    McpConnectionError,
    McpNotification,
    connect_server,
    parse_mcp_config,
)
from yiem.mcp.sse import SseTransport, iter_sse_events


def test_http_falls_back_to_sse_when_streamable_http_is_refused(everything_sse_url: str) -> None:
    heard = threading.Event()

    def sink(notification: McpNotification) -> None:
        if notification.method == "notifications/message":
            heard.set()

    with McpClient.http(everything_sse_url, event_sink=sink) as client:
        assert isinstance(client.transport, SseTransport)
        assert client.transport.endpoint and "sessionId=" in client.transport.endpoint
        assert client.server_info.name == "mcp-servers/everything"
        assert len(client.list_tools()) == 13
        assert client.call_tool("get-sum", {"a": 20, "b": 22}).text == "The sum of 20 and 22 is 42."
        client.set_logging_level("debug")
        client.call_tool("toggle-simulated-logging")
        assert heard.wait(30)
        client.call_tool("toggle-simulated-logging")


def test_no_fallback_when_asked_not_to(everything_sse_url: str) -> None:
    with pytest.raises(McpConnectionError, match="HTTP 404"):
        McpClient.http(everything_sse_url, sse_fallback=False)


def test_type_sse_in_mcp_json_with_a_question_over_the_stream(
    everything_sse_url: str, tmp_path: Path
) -> None:
    config = parse_mcp_config({"mcpServers": {"old": {"type": "sse", "url": everything_sse_url}}})

    def elicit(request: ElicitationRequest) -> ElicitationResult:
        return ElicitationResult(action="accept", content={"name": "Old Server Fan"})

    with connect_server("old", config.servers["old"], elicitation=elicit) as client:
        assert isinstance(client.transport, SseTransport)
        client.list_tools()
        assert "Old Server Fan" in client.call_tool("trigger-elicitation-request").text


def test_a_path_that_is_neither_says_both_failed(everything_http_url: str) -> None:
    wrong = everything_http_url.replace("/mcp", "/nothing-here")
    with pytest.raises(McpConnectionError) as caught:
        McpClient.http(wrong)
    assert "HTTP 404" in str(caught.value) and "HTTP+SSE transport did not work either" in str(caught.value)


def test_nothing_listening_is_not_retried_as_sse() -> None:
    with pytest.raises(McpConnectionError, match="could not connect") as caught:
        McpClient.http(f"http://127.0.0.1:{free_port()}/mcp")
    assert "SSE" not in str(caught.value)


def test_sse_events_parse_names_and_multiline_data() -> None:
    lines = ["event: endpoint", "data: /message?sessionId=1", "", ": comment", "data: {", "data: }", ""]
    assert list(iter_sse_events(iter(lines))) == [("endpoint", "/message?sessionId=1"), ("message", "{\n}")]
