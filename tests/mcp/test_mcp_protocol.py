"""McpClient's exact protocol paths, against the in-repo scripted server (tests/mcp_servers/scripted.py)."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.fixtures.mcp import SCRIPTED_STDIO
from tests.mcp_servers.scripted import ScriptedHttpServer
from yiem.mcp import (
    McpCancelledError,
    McpClient,
    McpConnectionError,
    McpError,
    McpNotification,
    McpProgress,
    McpProtocolError,
    McpTimeoutError,
)
from yiem.mcp.http import iter_sse_data
from yiem.types import AbortSignal


def scripted_stdio(*flags: str, **options: Any) -> McpClient:
    return McpClient.stdio(SCRIPTED_STDIO.command, [*SCRIPTED_STDIO.args, *flags], **options)


@pytest.fixture
def stdio_client() -> Iterator[McpClient]:
    with scripted_stdio() as client:
        yield client


@pytest.fixture
def http_server() -> Iterator[ScriptedHttpServer]:
    with ScriptedHttpServer() as server:
        yield server


@pytest.fixture(params=["stdio", "http"])
def client(request: pytest.FixtureRequest) -> Iterator[McpClient]:
    """A session with the scripted server, once per transport."""
    if request.param == "stdio":
        with scripted_stdio() as stdio:
            yield stdio
    else:
        with ScriptedHttpServer() as server, McpClient.http(server.url) as http:
            yield http


def test_sp009_pagination_follows_next_cursor(client: McpClient) -> None:
    """SP-009: nextCursor is followed over three pages, in order."""
    names = [tool.name for tool in client.list_tools()]
    assert names == [
        "fail",
        "stuck",
        "add",
        "slow",
        "hang",
        "crash",
        "ask_client",
        "log_then_answer",
        "change_tools",
    ]


def test_sp009_pagination_asks_three_times(http_server: ScriptedHttpServer) -> None:
    with McpClient.http(http_server.url) as client:
        assert len(client.list_tools()) == 9
    assert [r["method"] for r in http_server.requests].count("tools/list") == 3
    cursors = [
        m.get("params", {}).get("cursor")
        for m in http_server.core.received
        if m.get("method") == "tools/list"
    ]
    assert cursors == [None, "3", "6"]


def test_sp009_repeating_cursor_is_refused() -> None:
    with (
        scripted_stdio("--repeat-cursor") as client,
        pytest.raises(McpProtocolError, match="repeated the cursor"),
    ):
        client.list_tools()


def test_sp009_method_not_found(client: McpClient) -> None:
    """SP-009 error shape: -32601 raises McpError with the code and reads as method not found."""
    with pytest.raises(McpError) as caught:
        client.request("resources/list")
    assert caught.value.code == -32601
    assert "method not found" in str(caught.value).lower()


def test_server_that_dies_at_start_fails_at_once_quoting_stderr() -> None:
    """A dead server is a clear McpError at once, never a hang (the default timeout is 30 s)."""
    code = "import sys; print('error: GITHUB_TOKEN is not set', file=sys.stderr); sys.exit(2)"
    with pytest.raises(McpConnectionError) as caught:
        McpClient.stdio(sys.executable, ["-c", code])
    assert "exited with code 2" in str(caught.value)
    assert "GITHUB_TOKEN is not set" in str(caught.value)


def test_unsupported_protocol_version_is_refused() -> None:
    with pytest.raises(McpProtocolError, match="1999-01-01"):
        scripted_stdio("--protocol", "1999-01-01")


@pytest.mark.parametrize("version", ["2025-06-18", "2025-03-26"])
def test_older_protocol_versions_are_accepted(version: str) -> None:
    with scripted_stdio("--protocol", version) as client:
        assert client.protocol_version == version
        assert client.call_tool("add", {"a": 1, "b": 2}).text == "3"


def test_line_that_is_not_json_is_skipped(caplog: pytest.LogCaptureFixture) -> None:
    with scripted_stdio("--noise") as client:
        assert client.call_tool("add", {"a": 1, "b": 1}).text == "2"
    assert any("not JSON" in record.message for record in caplog.records)


def test_progress_in_order_before_the_result(client: McpClient) -> None:
    seen: list[McpProgress] = []
    result = client.call_tool("slow", {"steps": 3, "delay": 0.01}, on_progress=seen.append)
    assert result.text == "done after 3 steps"
    assert [(p.progress, p.total, p.message) for p in seen] == [
        (1, 3, "step 1"),
        (2, 3, "step 2"),
        (3, 3, "step 3"),
    ]


def test_progress_resets_the_timeout(client: McpClient) -> None:
    """Six steps of 0.15 s outlast a 0.5 s idle timeout only because each progress resets it."""
    result = client.call_tool("slow", {"steps": 6, "delay": 0.15}, timeout=0.5, on_progress=lambda p: None)
    assert result.text == "done after 6 steps"


def test_hard_cap_stops_a_call_despite_progress(client: McpClient) -> None:
    with pytest.raises(McpTimeoutError, match=r"time limit of 0\.4 s"):
        client.request(
            "tools/call",
            {"name": "slow", "arguments": {"steps": 50, "delay": 0.05}},
            timeout=1.0,
            max_timeout=0.4,
            on_progress=lambda p: None,
        )
    client.ping()  # the session goes on


def test_timeout_cancels_the_request(client: McpClient) -> None:
    with pytest.raises(McpTimeoutError, match=r"within 0\.3 s"):
        client.call_tool("hang", {}, timeout=0.3)
    assert client.pending_requests == []
    client.ping()


def test_abort_signal_cancels_the_call(client: McpClient) -> None:
    signal = AbortSignal()
    threading.Timer(0.2, signal.abort, args=("user pressed stop",)).start()
    with pytest.raises(McpCancelledError, match="user pressed stop"):
        client.call_tool("hang", {}, signal=signal)
    client.ping()


def test_an_error_answering_an_aborted_request_first_still_ends_as_a_cancel(
    stdio_client: McpClient,
) -> None:
    """Seen with tasks under load: Cancel's tasks/cancel made the server answer the waiting
    tasks/result ("no result stored") before the abort reached that request."""
    signal = AbortSignal()
    signal.on_abort(lambda _reason: stdio_client.call_tool("release", {}))  # runs before the call's own
    threading.Timer(0.2, signal.abort, args=("the person pressed Cancel",)).start()
    with pytest.raises(McpCancelledError, match="the person pressed Cancel"):
        stdio_client.call_tool("hold_until_released", {}, signal=signal)
    stdio_client.ping()


def test_already_aborted_signal_sends_nothing(client: McpClient) -> None:
    signal = AbortSignal()
    signal.abort("stopped before it began")
    with pytest.raises(McpCancelledError, match="stopped before it began"):
        client.call_tool("add", {"a": 1, "b": 2}, signal=signal)
    assert client.pending_requests == []


def test_cancel_by_request_id_tells_the_server(http_server: ScriptedHttpServer) -> None:
    errors: list[BaseException] = []
    with McpClient.http(http_server.url) as client:

        def call() -> None:
            try:
                client.call_tool("hang", {})
            except McpError as exc:
                errors.append(exc)

        thread = threading.Thread(target=call)
        thread.start()
        while not client.pending_requests:
            time.sleep(0.01)
        (request_id,) = client.pending_requests
        client.cancel(request_id, "no longer needed")
        thread.join(5)
    assert isinstance(errors[0], McpCancelledError)
    assert "no longer needed" in str(errors[0])
    assert request_id in http_server.core.cancelled
    cancel = next(m for m in http_server.core.received if m.get("method") == "notifications/cancelled")
    assert cancel["params"] == {"requestId": request_id, "reason": "no longer needed"}


def test_timeout_tells_the_server(http_server: ScriptedHttpServer) -> None:
    with McpClient.http(http_server.url) as client, pytest.raises(McpTimeoutError):
        client.call_tool("hang", {}, timeout=0.2)
    cancel = next(m for m in http_server.core.received if m.get("method") == "notifications/cancelled")
    assert cancel["params"]["reason"].startswith("timed out after")


def test_crash_fails_pending_call_at_once_quoting_stderr(stdio_client: McpClient) -> None:
    with pytest.raises(McpConnectionError) as caught:
        stdio_client.call_tool("crash", {}, timeout=30)
    message = str(caught.value)
    assert "exited with code 3" in message
    assert "simulated crash in the middle of a call" in message
    with pytest.raises(McpConnectionError):
        stdio_client.ping()


def test_http_crash_mid_call_is_an_error_not_a_hang(http_server: ScriptedHttpServer) -> None:
    with (
        McpClient.http(http_server.url) as client,
        pytest.raises(McpConnectionError, match="before it answered"),
    ):
        client.call_tool("crash", {}, timeout=30)


def test_server_request_is_answered_method_not_found(client: McpClient) -> None:
    result = client.call_tool("ask_client", {})
    assert '"code": -32601' in result.text


def test_server_request_handler_answers() -> None:
    def sample(params: dict[str, object]) -> dict[str, object]:
        return {"role": "assistant", "content": {"type": "text", "text": "sampled"}, "model": "test"}

    with scripted_stdio(request_handlers={"sampling/createMessage": sample}) as client:
        assert "sampled" in client.call_tool("ask_client", {}).text


def test_notifications_before_the_answer_reach_the_sink(client: McpClient) -> None:
    events: list[McpNotification] = []
    client.event_sink = events.append
    assert client.call_tool("log_then_answer", {}).text == "answered"
    assert [(e.method, e.params["data"]) for e in events] == [("notifications/message", "about to answer")]


def test_sink_that_raises_does_not_break_the_session(client: McpClient) -> None:
    def broken(notification: McpNotification) -> None:
        raise RuntimeError("listener bug")

    client.event_sink = broken
    assert client.call_tool("log_then_answer", {}).text == "answered"
    client.ping()


def test_http_sends_session_and_protocol_headers(http_server: ScriptedHttpServer) -> None:
    with McpClient.http(http_server.url, headers={"Authorization": "Bearer s3cret"}) as client:
        client.ping()
        session = client.session_id
    # The stateless revision is tried first; the scripted server does not speak it.
    discover, initialize, *after = http_server.requests
    assert discover["method"] == "server/discover"
    assert discover["headers"]["MCP-Protocol-Version"] == "2026-07-28"
    assert discover["headers"]["Mcp-Method"] == "server/discover"
    assert initialize["method"] == "initialize"
    assert "Mcp-Session-Id" not in initialize["headers"]
    assert "Mcp-Method" not in initialize["headers"]
    assert all(r["headers"]["Mcp-Session-Id"] == session for r in after)
    assert all(r["headers"]["MCP-Protocol-Version"] == "2025-11-25" for r in after)
    assert all(r["headers"]["Authorization"] == "Bearer s3cret" for r in http_server.requests)
    assert http_server.deleted == [session]  # close() ended the session


@pytest.mark.parametrize("status", [404, 400])
def test_http_session_loss_initialises_again_once(http_server: ScriptedHttpServer, status: int) -> None:
    with McpClient.http(http_server.url) as client:
        first = client.session_id
        http_server.lose_sessions(status)
        assert client.call_tool("add", {"a": 20, "b": 22}).text == "42"
        assert client.session_id != first
    methods = [r["method"] for r in http_server.requests]
    assert methods.count("initialize") == 2


def test_http_cancelled_streams_free_their_workers(http_server: ScriptedHttpServer) -> None:
    """A server that ignores cancellation must not use up the client's eight reader threads."""
    with McpClient.http(http_server.url) as client:
        for _ in range(10):
            with pytest.raises(McpTimeoutError):
                client.call_tool("stuck", {}, timeout=0.1)
        assert client.call_tool("add", {"a": 1, "b": 1}, timeout=10).text == "2"


def test_http_json_responses() -> None:
    with ScriptedHttpServer(sse=False) as server, McpClient.http(server.url) as client:
        assert client.call_tool("add", {"a": 1, "b": 2}).text == "3"
        assert len(client.list_tools()) == 9


def test_list_changed_reaches_the_sink(stdio_client: McpClient) -> None:
    events: list[str] = []
    stdio_client.event_sink = lambda n: events.append(n.method)
    stdio_client.call_tool("change_tools", {})
    assert "notifications/tools/list_changed" in events
    assert "extra" in [tool.name for tool in stdio_client.list_tools()]


def test_closed_client_refuses_requests(stdio_client: McpClient) -> None:
    stdio_client.close()
    with pytest.raises(McpConnectionError, match="closed"):
        stdio_client.ping()


def test_sse_parsing_skips_priming_and_comments_and_joins_lines() -> None:
    lines = [
        ": keep-alive",
        "id: 1",
        "data:",
        "",
        "event: message",
        'data: {"a":',
        "data:  1}",
        "",
        "data: tail",
    ]
    assert list(iter_sse_data(iter(lines))) == ['{"a":\n 1}', "tail"]


def test_a_lone_surrogate_in_the_arguments_is_sent_replaced(client: McpClient) -> None:
    """Issue 12: a model's JSON "\\ud800" in a tool's arguments made sending the call raise."""
    assert client.call_tool("add", {"a": "odd \ud800", "b": "!"}).text == "odd \ufffd!"
