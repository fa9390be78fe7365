"""POSTs straight through httpcore (yiem/mcp/_post.py): what httpx.Client used to do for them stays."""

from __future__ import annotations

import queue
from collections.abc import Iterator
from typing import Any

import httpcore
import pytest

from tests.scripted_http import Reply, ScriptedServer, json_reply
from yiem.mcp._post import _OneWriteStream
from yiem.mcp.errors import McpConnectionError
from yiem.mcp.http import HttpTransport


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    scripted = ScriptedServer()
    yield scripted
    scripted.close()


def _call(transport: HttpTransport, request_id: int) -> Any:
    """One request through the transport's worker; its reply, or the error it failed with."""
    got: queue.Queue[Any] = queue.Queue()
    transport.start(got.put, lambda _id, error: got.put(error))
    transport.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/list", "params": {}})
    return got.get(timeout=10)


def _answer(request_id: int, headers: dict[str, str] | None = None) -> Reply:
    return json_reply({"jsonrpc": "2.0", "id": request_id, "result": {"tools": []}}, headers=headers)


def test_a_post_carries_httpx_defaults_and_the_configured_headers(server: ScriptedServer) -> None:
    server.script(_answer(1))
    transport = HttpTransport(f"{server.url}/mcp", {"X-Team": "blue", "Accept": "application/json"})
    try:
        assert _call(transport, 1)["id"] == 1
    finally:
        transport.close()
    headers = server.requests[0].headers
    assert headers["User-Agent"].startswith("python-httpx/")
    assert headers["X-Team"] == "blue"
    assert headers["Accept"] == "application/json"  # the configured one, not the transport's
    assert server.requests[0].body["method"] == "tools/list"


def test_a_cookie_the_server_sets_comes_back(server: ScriptedServer) -> None:
    """A sticky load balancer's cookie is kept: from then on the POSTs go through the httpx.Client."""
    server.script(_answer(1, {"Set-Cookie": "lb=node-7; Path=/"}), _answer(2))
    transport = HttpTransport(f"{server.url}/mcp")
    try:
        assert _call(transport, 1)["id"] == 1
        assert _call(transport, 2)["id"] == 2
    finally:
        transport.close()
    assert "Cookie" not in server.requests[0].headers
    assert server.requests[1].headers["Cookie"] == "lb=node-7"


def test_a_proxy_in_the_environment_sends_every_post_through_the_client(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    proxied = HttpTransport("https://mcp.example/mcp")
    plain = HttpTransport("http://127.0.0.1:9/mcp")
    try:
        assert proxied._fast is False
        assert plain._fast is True
    finally:
        proxied.close()
        plain.close()


def test_a_body_cut_short_is_a_connection_error_in_words(server: ScriptedServer) -> None:
    server.script(Reply(headers={"Content-Type": "text/event-stream"}, chunks=[b"data: {"], drop=True))
    transport = HttpTransport(f"{server.url}/mcp")
    try:
        error = _call(transport, 1)
    finally:
        transport.close()
    assert isinstance(error, McpConnectionError)
    assert f"MCP server {server.url}/mcp" in str(error)


class _Recorder(httpcore.NetworkStream):
    def __init__(self) -> None:
        self.writes: list[bytes] = []

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.writes.append(buffer)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return b""


def test_headers_and_body_leave_in_one_write() -> None:
    inner = _Recorder()
    stream = _OneWriteStream(inner)
    stream.write(b"POST /mcp HTTP/1.1\r\n\r\n")
    stream.write(b"{}")
    assert inner.writes == []
    stream.read(100)
    assert inner.writes == [b"POST /mcp HTTP/1.1\r\n\r\n{}"]
    stream.read(100)
    assert len(inner.writes) == 1
