"""Replies that come as an event stream: read to the end, and resumed after a graceful end (SEP-1699)."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from typing import Any

import httpx

from yiem._sse import sse_events
from yiem.mcp.errors import McpConnectionError
from yiem.mcp.transport import decode_message

logger = logging.getLogger(__name__)


class EventReplies:
    """HttpTransport's reading of event-stream replies (the transport gives the parts declared here)."""

    url: str
    _closed: bool
    _stopped: threading.Event
    _http: httpx.Client

    def _headers(self, accept: str = "", message: Any = None) -> dict[str, str]:
        raise NotImplementedError

    def _reading(self, key: int | str, response: httpx.Response) -> contextlib.AbstractContextManager[None]:
        raise NotImplementedError

    def _lines(self, response: httpx.Response) -> Iterator[str]:
        raise NotImplementedError

    def _deliver(self, payload: Any, request_id: int | str | None = None) -> bool:
        raise NotImplementedError

    def _read_events(self, response: httpx.Response, request_id: int | str) -> None:
        resume = _Resume()
        # Read on after the answer until the server ends the stream: the connection then
        # goes back to the pool instead of being torn down.
        answered = self._read_stream(response, request_id, resume, stop_when_answered=False)
        attempts = 0
        while not answered and resume.event_id is not None and attempts < MAX_RESUMES and not self._closed:
            # A stream that ends gracefully after an event id is resumable (SEP-1699): wait the
            # server's `retry`, then ask for the rest with `Last-Event-ID` on a GET.
            attempts += 1
            if self._stopped.wait(resume.retry_s):
                break
            answered = self._resume(request_id, resume)
        if not answered:
            raise McpConnectionError(f"MCP server {self.url} ended the event stream before it answered")

    def _resume(self, request_id: int | str, resume: _Resume) -> bool:
        headers = self._headers(accept="text/event-stream") | {"Last-Event-ID": str(resume.event_id)}
        logger.info("resuming the reply of MCP server %s after event %s", self.url, resume.event_id)
        with self._http.stream("GET", self.url, headers=headers) as reply, self._reading(request_id, reply):
            if reply.status_code >= 400:
                raise McpConnectionError(
                    f"MCP server {self.url} ended the event stream before it answered and refused to "
                    f"resume it (HTTP {reply.status_code} to a GET with Last-Event-ID)",
                    data={"status": reply.status_code},
                )
            return self._read_stream(reply, request_id, resume, stop_when_answered=True)

    def _read_stream(
        self, response: httpx.Response, request_id: int | str, resume: _Resume, *, stop_when_answered: bool
    ) -> bool:
        answered = False
        for event in sse_events(self._lines(response)):
            if event.id:
                resume.event_id = event.id
            if event.retry is not None:
                resume.retry_s = event.retry / 1000
            if not event.data.strip():
                continue  # a priming event
            try:
                payload = decode_message(event.data)
            except ValueError:
                logger.warning("MCP server %s sent an event that is not JSON: %.200r", self.url, event.data)
                continue
            answered = self._deliver(payload, request_id) or answered
            if answered and stop_when_answered:
                break
        return answered


MAX_RESUMES = 5


class _Resume:
    """Where a reply's event stream got to: its last event id and the wait the server asked for."""

    __slots__ = ("event_id", "retry_s")

    def __init__(self) -> None:
        self.event_id: str | None = None
        self.retry_s = 1.0
