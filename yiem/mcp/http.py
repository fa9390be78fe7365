"""MCP over Streamable HTTP: each message is a POST whose reply is JSON or a stream of SSE events."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import closing
from typing import Any
from urllib.parse import urlsplit

import httpx

from yiem._netstream import shutdown_stream
from yiem._sse import sse_events
from yiem.limits import ResponseLimits, ResponseTooLargeError, capped, read_capped, text_lines
from yiem.mcp._auth import GrantAuth
from yiem.mcp._headers import HeaderMap, param_headers
from yiem.mcp._http_errors import read_timed_out, status_error
from yiem.mcp._http_events import EventReplies
from yiem.mcp._post import Poster, body_chunks
from yiem.mcp._revision import STATELESS_VERSIONS, message_version, standard_headers
from yiem.mcp._workers import DaemonWorkers
from yiem.mcp.errors import McpConnectionError, McpError
from yiem.mcp.transport import Latch, Message, OnFailure, OnMessage, decode_message, encode_message

logger = logging.getLogger(__name__)

ACCEPT = "application/json, text/event-stream"
# httpx's timeouts, or the same as the dict httpcore takes.
Timeouts = httpx.Timeout | dict[str, float | None]


def iter_sse_data(lines: Iterator[str]) -> Iterator[str]:
    """The `data` of each server-sent event; empty (priming) events are skipped."""
    return (event.data for event in sse_events(lines) if event.data.strip())


class HttpTransport(EventReplies):
    """POSTs each message to `url`, keeping `Mcp-Session-Id`; replies are read in worker threads.

    A message stamped with the stateless revision's `_meta` goes without a session, with the
    standard `Mcp-Method`/`Mcp-Name` headers and its tool's `Mcp-Param-*` headers.
    """

    stateless_capable = True

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str] | None = None,
        *,
        connect_timeout: float = 10.0,
        max_workers: int = 8,
        listen: bool = True,
        limits: ResponseLimits | None = None,
        quote_bodies: bool = True,
        auth: GrantAuth | None = None,
    ) -> None:
        self.url = url
        # An OAuth sign-in's bearer token, refreshed before it expires (None: headers as configured).
        self.auth = auth
        # False for a URL typed in a browser: an answer that is not MCP is never quoted back, so the
        # app cannot be used to read pages of servers that only it can reach.
        self.quote_bodies = quote_bodies
        # How much one reply may hold (a body, or one request's event stream); past it, an error in words.
        self.limits = limits or ResponseLimits.from_environment()
        self.label = url
        self.headers = dict(headers or {})
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        # True once a stateless revision was agreed: no session, no GET stream, no notifications.
        self.stateless = False
        # Tool name -> its `x-mcp-header` marks, from the last `tools/list` (McpClient fills it).
        self.header_marks: dict[str, HeaderMap] = {}
        self._http = httpx.Client(
            # Certificates are loaded only for https (loading them costs tens of milliseconds).
            verify=url.startswith("https://"),
            timeout=httpx.Timeout(connect=connect_timeout, read=None, write=30.0, pool=30.0),
            limits=httpx.Limits(max_connections=max_workers + 4, max_keepalive_connections=max_workers + 4),
            auth=auth,  # signs every request (Bearer, or DPoP with its proof and nonce retry)
        )
        # POSTs, the hot path, skip the Client's per-request machinery; the GET streams and the
        # DELETE keep it. Behind a proxy from the environment every request takes the Client.
        self._poster = Poster(url, self._http.headers, max_connections=max_workers + 4, auth=auth)
        self._fast = not _proxied(url)
        self._answer_timeout = httpx.Timeout(30.0, connect=connect_timeout)
        # A caller's own POST: its read timeout, and its wait for a free connection (the workers'
        # queue before), is the caller's wait; the rest as for the workers.
        self._own_timeout = {"connect": connect_timeout, "read": None, "write": 30.0, "pool": 30.0}
        # Request id -> the thread POSTing it itself (`post_and_read`), so `abandon` can cut it.
        self._callers: dict[int | str, int] = {}
        self._workers = DaemonWorkers(
            max_workers, "mcp-http", f"the connection to MCP server {self.label} is closed"
        )
        self._on_message: OnMessage | None = None
        self._on_failure: OnFailure | None = None
        self._closed = False
        self._lock = threading.Lock()
        self._streams: dict[int | str, httpx.Response] = {}
        # Signalled as readers leave `_streams` and callers `_callers`: `close` waits for them.
        self._left = threading.Condition(self._lock)
        self.listen = listen
        self._listener: threading.Thread | None = None
        self._stopped = threading.Event()
        self._listening = threading.Event()

    def start(self, on_message: OnMessage, on_failure: OnFailure) -> None:
        self._on_message = on_message
        self._on_failure = on_failure

    def initialized(self, protocol_version: str) -> None:
        self.protocol_version = protocol_version
        self.stateless = protocol_version in STATELESS_VERSIONS
        if self.stateless:
            self.session_id = None
        if self.listen and self._listener is None and not self.stateless:
            # Opened before `notifications/initialized`, and waited for, because servers often
            # announce their lists right after it and drop what no stream is open to carry.
            self._listener = threading.Thread(target=self._listen, name="mcp-http-listen", daemon=True)
            self._listener.start()
            self._listening.wait(2.0)

    def abandon(self, request_id: int | str) -> None:
        with self._lock:
            response = self._streams.get(request_id)
            caller = self._callers.get(request_id)
            if caller is not None:
                # Under the lock: the caller leaves `_callers` before its thread makes another POST.
                self._poster.interrupt(caller)
        if response is not None:
            # Frees the worker: a cancelled request's stream may stay open for long. Shut down,
            # never closed here: its reader closes it (see `_shut_down`).
            _shut_down(response)

    def reset_session(self) -> None:
        """Forget the session, so the next `initialize` starts a new one."""
        self.session_id = None
        self.protocol_version = None

    def send(self, message: Message) -> None:
        if self._closed:
            raise McpConnectionError(f"the connection to MCP server {self.label} is closed")
        if "method" in message and "id" in message:
            # A request: its reply may stream for a long time, so a worker reads it.
            self._workers.submit(self._post_request, message)
        elif self.stateless:
            # The stateless revision has no client notifications over HTTP: a cancel is the
            # closed stream (`abandon`), and nothing else is announced.
            logger.debug("not sent to stateless MCP server %s: %s", self.url, message.get("method"))
        else:
            # Notifications and our replies to the server: the server answers 202 at once.
            # The caller waits on this POST itself, so it must not wait forever.
            with closing(self._post(message, self._answer_timeout)) as response:
                body = self._read_body(response)
                if response.status_code >= 400 and message.get("method") != "notifications/cancelled":
                    raise self._status_error(response, message, body)

    def post_and_read(self, message: Message, wait: float, answered: Latch) -> None:
        """Send a request from the thread that waits for it, and read a JSON reply there.

        The hand-over to a worker and the caller's wake-up cost more than a fast server's own time.
        Only stateless (2026-07-28) requests come here: nothing but their own reply can move their
        deadline before it starts, so a read timeout of `wait` (the caller's budget) stands for the
        caller's wait, which then words the timeout. A reply that is an event stream (progress,
        resumption) goes to a worker as before. Others go through `send`.
        """
        if not self._fast or message_version(message) not in STATELESS_VERSIONS:
            self.send(message)
            return
        request_id = message["id"]
        me = threading.get_ident()
        self._poster.reset(me)  # an earlier cut of this thread must not reach this request
        with self._lock:
            if self._closed:
                raise McpConnectionError(f"the connection to MCP server {self.label} is closed")
            # A cancel fails the request before it abandons it: either it is seen here, or
            # `abandon` finds this thread in `_callers` and cuts its socket.
            if answered.is_set():
                return
            self._callers[request_id] = me
        try:
            self._post_request(message, {**self._own_timeout, "read": wait, "pool": wait}, own_thread=True)
        finally:
            with self._lock:
                del self._callers[request_id]
                self._poster.reset(me)
                self._left.notify_all()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._stopped.set()
            for caller in self._callers.values():
                self._poster.interrupt(caller)
        if self.session_id:
            try:
                self._http.delete(self.url, headers=self._headers(), timeout=5.0)
            except (httpx.HTTPError, McpError) as exc:
                logger.info("ending the MCP session at %s failed: %s", self.url, exc)
        self._workers.shutdown()
        self._end_reads()
        self._http.close()
        self._poster.close()

    def _end_reads(self) -> None:
        """Shut every reply being read down and wait (briefly) for its reader to close it.

        Closing the pools under a reader could close its socket just before its next `poll`,
        and a new connection reusing that file descriptor would then hold the reader forever."""
        shut: set[int] = set()
        deadline = time.monotonic() + CLOSE_WAIT_S
        with self._lock:
            while (self._streams or self._callers) and time.monotonic() < deadline:
                for response in self._streams.values():
                    if id(response) not in shut:
                        shut.add(id(response))
                        _shut_down(response)
                self._left.wait(0.05)

    # --- internals ---------------------------------------------------------------------

    def _headers(self, accept: str = ACCEPT, message: Message | None = None) -> dict[str, str]:
        headers = {"Accept": accept, "Content-Type": "application/json", **self.headers}
        stamped = standard_headers(message) if message is not None else {}
        if stamped:
            headers |= stamped
            params = message.get("params") if message is not None else None
            if message is not None and message.get("method") == "tools/call" and isinstance(params, dict):
                marks = self.header_marks.get(str(params.get("name")))
                arguments = params.get("arguments")
                if marks and isinstance(arguments, dict):
                    headers |= param_headers(marks, arguments)
            return headers
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version:
            headers["MCP-Protocol-Version"] = self.protocol_version
        return headers

    def _post(self, message: Message, timeout: Timeouts | None = None) -> httpx.Response:
        body = encode_message(message)
        headers = self._headers(message=message)
        timeout = timeout or self._http.timeout
        try:
            if self._fast:
                times = timeout if isinstance(timeout, dict) else timeout.as_dict()
                return self._fast_post(body, headers, times)
            if isinstance(timeout, dict):
                timeout = httpx.Timeout(**timeout)
            request = self._http.build_request(
                "POST", self.url, content=body, headers=headers, timeout=timeout
            )
            return self._http.send(request, stream=True)
        except httpx.ConnectError as exc:
            raise McpConnectionError(f"could not connect to MCP server {self.url}: {exc}") from exc
        except httpx.HTTPError as exc:
            raise McpConnectionError(f"request to MCP server {self.url} failed: {exc}") from exc

    def _fast_post(
        self, body: bytes, headers: dict[str, str], timeout: dict[str, float | None]
    ) -> httpx.Response:
        response = self._poster.post(body, headers, timeout)
        if "set-cookie" in response.headers:
            # A server that sets cookies (a sticky load balancer, say) gets them back from now on:
            # the Client keeps the jar, so every later POST goes through it.
            response.request = httpx.Request("POST", self.url)
            self._http.cookies.extract_cookies(response)
            self._fast = False
        return response

    def _post_request(
        self, message: Message, timeout: Timeouts | None = None, *, own_thread: bool = False
    ) -> None:
        """POST a request and deliver what it answers; failures go to `on_failure` in words.

        `own_thread`: the caller's own thread, which hands an event stream on to a worker and
        leaves a read timeout to the caller's wait (see `post_and_read`)."""
        assert self._on_message is not None and self._on_failure is not None
        request_id = message["id"]
        response: httpx.Response | None = None
        try:
            response = self._post(message, timeout)
            with self._lock:
                self._streams[request_id] = response
            if response.status_code >= 400:
                raise self._status_error(response, message, self._read_body(response))
            session_id = response.headers.get("mcp-session-id")
            # A stateless exchange has no session, whatever the server's headers say.
            if session_id and message_version(message) is None and not self.stateless:
                self.session_id = session_id
            content_type = response.headers.get("content-type", "")
            if content_type.startswith("text/event-stream"):
                if own_thread:
                    # Raises McpConnectionError if the transport closed meanwhile.
                    self._workers.submit(self._read_events_reporting, response, request_id)
                    response = None  # the worker's now
                    return
                self._read_events(response, request_id)
            else:
                body = self._read_body(response)
                if body.strip():
                    self._deliver(decode_message(body))
        except (McpError, httpx.HTTPError) as exc:
            if not (own_thread and read_timed_out(exc)):
                self._report(request_id, exc)
        except Exception as exc:
            self._report(request_id, exc)
        finally:
            if response is not None:
                self._done_reading(request_id, response)

    def _read_events_reporting(self, response: httpx.Response, request_id: int | str) -> None:
        try:
            self._read_events(response, request_id)
        except Exception as exc:
            self._report(request_id, exc)
        finally:
            self._done_reading(request_id, response)

    @contextlib.contextmanager
    def _reading(self, key: int | str, response: httpx.Response) -> Iterator[None]:
        """`response` in `_streams` while this thread reads it, so `abandon` and `close` can shut it down."""
        with self._lock:
            self._streams[key] = response
        try:
            yield
        finally:
            self._done_reading(key, response)

    def _done_reading(self, key: int | str, response: httpx.Response) -> None:
        response.close()
        with self._lock:
            if self._streams.get(key) is response:
                del self._streams[key]
            self._left.notify_all()

    def _report(self, request_id: int | str, exc: Exception) -> None:
        """A request's failure to its caller, in words; a worker must never die silently."""
        assert self._on_failure is not None
        if isinstance(exc, McpError):
            self._on_failure(request_id, exc)
        elif isinstance(exc, ResponseTooLargeError):
            self._on_failure(request_id, McpConnectionError(str(exc)))
        elif isinstance(exc, httpx.HTTPError | ValueError):
            self._on_failure(
                request_id, McpConnectionError(f"reading the reply of MCP server {self.url} failed: {exc}")
            )
        else:  # the caller would wait forever
            logger.error("MCP HTTP worker failed", exc_info=exc)
            self._on_failure(request_id, McpConnectionError(f"MCP HTTP transport failed: {exc}"))

    def _listen(self) -> None:
        """Read the GET stream that carries the server's own notifications and requests."""
        delay = 0.5
        while not self._closed:
            try:
                with (
                    self._http.stream(
                        "GET", self.url, headers=self._headers(accept="text/event-stream")
                    ) as reply,
                    self._reading("listen", reply),
                ):
                    self._listening.set()
                    if reply.status_code == 405:
                        return  # the server offers no such stream
                    logger.debug("notification stream of %s: HTTP %s", self.url, reply.status_code)
                    if reply.status_code < 400:
                        delay = 0.5
                        lines = text_lines(reply.iter_bytes(), self.limits, f"MCP server {self.url}")
                        for data in iter_sse_data(lines):
                            self._deliver(decode_message(data))
            except (httpx.HTTPError, ValueError, RuntimeError, ResponseTooLargeError) as exc:
                self._listening.set()
                if self._closed:
                    return
                logger.debug("the notification stream of %s broke: %s", self.url, exc)
            # The stream ended or the session was lost: open it again, backing off.
            if self._stopped.wait(delay):
                return
            delay = min(delay * 2, 30.0)

    def _read_body(self, response: httpx.Response) -> bytes:
        """The whole body, or `ResponseTooLargeError` once it passes the limit."""
        return read_capped(body_chunks(response), self.limits, f"MCP server {self.url}")

    def _lines(self, response: httpx.Response) -> Iterator[str]:
        return text_lines(capped(body_chunks(response), self.limits, f"MCP server {self.url}"))

    def _deliver(self, payload: Any, request_id: int | str | None = None) -> bool:
        assert self._on_message is not None
        answered = False
        for message in payload if isinstance(payload, list) else [payload]:
            if not isinstance(message, dict):
                continue
            self._on_message(message)
            if "method" not in message and message.get("id") == request_id:
                answered = True
        return answered

    def _status_error(self, response: httpx.Response, message: Message, body: bytes) -> McpError:
        return status_error(
            self.url,
            response,
            body,
            session_id=self.session_id,
            method=message.get("method"),
            quote_bodies=self.quote_bodies,
        )


# How long `close` waits for the readers of shut-down replies to close them.
CLOSE_WAIT_S = 2.0


def _shut_down(response: httpx.Response) -> None:
    """Wake the thread reading `response` (its read ends); that thread then closes it."""
    shutdown_stream(response.extensions.get("network_stream"))


def _proxied(url: str) -> bool:
    """Whether the environment names a proxy httpx.Client would use for `url` (checked broadly)."""
    proxies = urllib.request.getproxies()
    return urlsplit(url).scheme in proxies or "all" in proxies
