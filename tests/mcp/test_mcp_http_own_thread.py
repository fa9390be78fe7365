"""A 2026-07-28 request over HTTP is sent and read on its caller's own thread: timeouts, aborts,
progress on an event-stream reply and the closed client still behave as they do through a worker."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from tests.scripted_http import ScriptedServer, json_reply, sse, sse_reply
from yiem.mcp import McpCancelledError, McpClient, McpConnectionError, McpProgress, McpTimeoutError
from yiem.types import AbortSignal

DISCOVER = {
    "jsonrpc": "2.0",
    "id": 1,
    "result": {
        "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "s"},
    },
}


def _result(request_id: int, text: str = "5") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": text}]}}


# A slow reply's headers come after pytest's own time limit: a call that was not cut would wait past
# it and fail, so no test here needs to time the cut (tests never assert on wall time).
SLOW = 600.0


def _connected(server: ScriptedServer) -> McpClient:
    server.script(json_reply(DISCOVER))
    client = McpClient.http(server.url + "/mcp")
    assert client.protocol_version == "2026-07-28"
    return client


def test_a_silent_server_times_out_in_words_and_the_next_call_works(scripted_server: ScriptedServer) -> None:
    with _connected(scripted_server) as client:
        slow = json_reply(_result(2))
        slow.delay_headers = SLOW
        scripted_server.script(slow)
        with pytest.raises(McpTimeoutError, match=r"did not answer 'tools/call' within 0.3 s"):
            client.call_tool("add", {"a": 2, "b": 3}, timeout=0.3)
        scripted_server.script(json_reply(_result(3, "7")))
        assert client.call_tool("add", {"a": 3, "b": 4}).text == "7"


def test_an_abort_cuts_a_call_still_waiting_for_its_headers(scripted_server: ScriptedServer) -> None:
    with _connected(scripted_server) as client:
        slow = json_reply(_result(2))
        slow.delay_headers = SLOW
        scripted_server.script(slow)
        signal = AbortSignal()
        threading.Timer(0.2, signal.abort, args=("stopped by the person",)).start()
        with pytest.raises(McpCancelledError, match="stopped by the person"):
            client.call_tool("add", {"a": 2, "b": 3}, signal=signal)
        # The cut was this call's alone: the same thread's next call goes through.
        scripted_server.script(json_reply(_result(3, "7")))
        assert client.call_tool("add", {"a": 3, "b": 4}).text == "7"


def test_an_aborted_signal_sends_nothing(scripted_server: ScriptedServer) -> None:
    with _connected(scripted_server) as client:
        signal = AbortSignal()
        signal.abort("before it began")
        with pytest.raises(McpCancelledError, match="was not sent"):
            client.call_tool("add", {"a": 2, "b": 3}, signal=signal)
        assert len(scripted_server.requests) == 1  # discover only


def test_progress_on_an_event_stream_keeps_a_slow_call_alive(scripted_server: ScriptedServer) -> None:
    with _connected(scripted_server) as client:
        progress = [
            sse(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": 2, "progress": n},
                }
            )
            for n in range(1, 5)
        ]
        # Four progress events 0.3 s apart, then the result: 1.5 s in all, against a 0.6 s timeout.
        scripted_server.script(sse_reply([*progress, sse(_result(2, "done"))], delay=0.3))
        heard: list[McpProgress] = []
        result = client.call_tool("add", {"a": 2, "b": 3}, timeout=0.6, on_progress=heard.append)
        assert result.text == "done"
        assert [event.progress for event in heard] == [1, 2, 3, 4]


def test_closing_the_client_ends_a_call_waiting_on_its_own_thread(scripted_server: ScriptedServer) -> None:
    client = _connected(scripted_server)
    slow = json_reply(_result(2))
    slow.delay_headers = SLOW
    scripted_server.script(slow)
    threading.Timer(0.2, client.close).start()
    with pytest.raises(McpConnectionError):
        client.call_tool("add", {"a": 2, "b": 3})
