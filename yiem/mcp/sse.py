"""MCP over the legacy HTTP+SSE transport (protocol 2024-11-05) for servers that predate Streamable HTTP.

A GET opens one event stream; its first `endpoint` event names the URL to POST messages to.
Every reply and server message then arrives on that stream as a `message` event.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator, Mapping
from urllib.parse import urljoin, urlsplit

import httpx

from yiem._netstream import interrupt_response
from yiem._sse import sse_events
from yiem.limits import ResponseLimits, ResponseTooLargeError, read_capped, text_lines
from yiem.mcp.errors import McpConnectionError, McpError
from yiem.mcp.transport import Message, OnFailure, OnMessage, decode_message, encode_message

logger = logging.getLogger(__name__)


def iter_sse_events(lines: Iterator[str]) -> Iterator[tuple[str, str]]:
    """(event name, data) of each server-sent event with data; the name defaults to "message"."""
    return ((event.event, event.data) for event in sse_events(lines) if event.data)


class SseTransport:
    """Reads the GET event stream on a thread and POSTs each message to the endpoint it names."""

    # The 2024-11-05 transport predates the stateless revision: only the handshake goes over it.
    stateless_capable = False

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str] | None = None,
        *,
        connect_timeout: float = 10.0,
        quote_bodies: bool = True,
        limits: ResponseLimits | None = None,
    ) -> None:
        self.url = url
        self.quote_bodies = quote_bodies  # False for a URL typed in a browser (see HttpTransport)
        self.limits = limits or ResponseLimits.from_environment()
        self.label = url
        self.headers = dict(headers or {})
        self.endpoint: str | None = None
        self._http = httpx.Client(
            verify=url.startswith("https://"),
            timeout=httpx.Timeout(connect=connect_timeout, read=None, write=30.0, pool=30.0),
        )
        self._post_timeout = httpx.Timeout(30.0, connect=connect_timeout)
        self._connect_timeout = connect_timeout
        self._ready = threading.Event()
        self._closed = False
        self._stream: httpx.Response | None = None
        self._problem: McpError | None = None

    def start(self, on_message: OnMessage, on_failure: OnFailure) -> None:
        threading.Thread(
            target=self._read, args=(on_message, on_failure), name="mcp-sse", daemon=True
        ).start()
        if not self._ready.wait(self._connect_timeout) or self.endpoint is None:
            self.close()
            raise self._problem or McpConnectionError(
                f"MCP server {self.url} sent no endpoint event within {self._connect_timeout:g} s "
                "(it does not look like an HTTP+SSE server)"
            )

    def send(self, message: Message) -> None:
        if self._closed or self.endpoint is None:
            raise McpConnectionError(f"the connection to MCP server {self.url} is closed")
        body = encode_message(message)
        headers = {"Content-Type": "application/json", **self.headers}
        try:
            with self._http.stream(
                "POST", self.endpoint, content=body, headers=headers, timeout=self._post_timeout
            ) as reply:
                status = reply.status_code
                answer = read_capped(reply.iter_bytes(), self.limits, f"MCP server {self.url}")
        except httpx.HTTPError as exc:
            raise McpConnectionError(f"sending to MCP server {self.url} failed: {exc}") from exc
        except ResponseTooLargeError as exc:
            raise McpConnectionError(str(exc)) from exc
        if status >= 400:
            text = answer[:2000].decode("utf-8", "replace").strip()[:200]
            said = f": {text}" if self.quote_bodies else " (not shown for a typed URL)"
            raise McpConnectionError(f"MCP server {self.url} answered HTTP {status}{said}")

    def initialized(self, protocol_version: str) -> None:
        """The legacy transport carries no version header."""

    def abandon(self, request_id: int | str) -> None:
        """A late reply on the shared stream is simply dropped by the client."""

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        stream = self._stream
        if stream is not None:
            with contextlib.suppress(Exception):  # the reader may be closing it at the same time
                interrupt_response(stream)
        self._http.close()

    def _read(self, on_message: OnMessage, on_failure: OnFailure) -> None:
        headers = {"Accept": "text/event-stream", **self.headers}
        try:
            with self._http.stream("GET", self.url, headers=headers) as reply:
                self._stream = reply
                if reply.status_code >= 400:
                    raise McpConnectionError(
                        f"MCP server {self.url} refused the event stream: HTTP {reply.status_code}"
                    )
                lines = text_lines(reply.iter_bytes(), self.limits, f"MCP server {self.url}")
                for event, data in iter_sse_events(lines):
                    if event == "endpoint":
                        self.endpoint = self._checked_endpoint(data.strip())
                        self._ready.set()
                    elif event == "message":
                        self._deliver(data, on_message)
        except McpError as exc:
            self._problem = exc
        except (httpx.HTTPError, RuntimeError, ValueError, ResponseTooLargeError) as exc:
            if not self._closed:
                self._problem = McpConnectionError(f"the event stream of MCP server {self.url} broke: {exc}")
        finally:
            self._ready.set()
        if not self._closed:
            on_failure(
                None, self._problem or McpConnectionError(f"MCP server {self.url} closed its event stream")
            )

    def _checked_endpoint(self, data: str) -> str:
        endpoint = urljoin(self.url, data)
        # Messages may carry tool arguments: they go only to the server that opened the stream.
        if urlsplit(endpoint)[:2] != urlsplit(self.url)[:2]:
            raise McpConnectionError(
                f"MCP server {self.url} named an endpoint on another origin ({endpoint}); refused"
            )
        return endpoint

    def _deliver(self, data: str, on_message: OnMessage) -> None:
        try:
            payload = decode_message(data)
        except ValueError:
            logger.warning("MCP server %s sent an event that is not JSON: %.200r", self.url, data)
            return
        for message in payload if isinstance(payload, list) else [payload]:
            if isinstance(message, dict):
                on_message(message)
