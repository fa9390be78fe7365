"""JSON-RPC request tracking and dispatch for one MCP session (the session owns the MCP methods).

As in the official SDK, this part correlates replies with requests, enforces timeouts and
cancellation, delivers notifications in order on a thread of their own and answers the
server's requests with the handlers it is given. It knows nothing about MCP's methods.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any, Literal

from yiem.amounts import duration
from yiem.mcp.errors import (
    INTERNAL_ERROR,
    METHOD_NOT_FOUND,
    McpCancelledError,
    McpConnectionError,
    McpError,
    McpTimeoutError,
)
from yiem.mcp.models import McpNotification, McpProgress
from yiem.mcp.transport import Latch, Message, Transport
from yiem.types import AbortSignal

logger = logging.getLogger(__name__)

EventSink = Callable[[McpNotification], None]
ProgressCallback = Callable[[McpProgress], None]
RequestHandler = Callable[[dict[str, Any]], dict[str, Any]]
RequestId = int | str
# (request, seconds it may take, set once answered or failed elsewhere): see HttpTransport.post_and_read.
PostAndRead = Callable[[Message, float, Latch], None]
Direction = Literal["sent", "received"]
# One line of the protocol log: wall-clock time (epoch seconds), direction, the message itself.
LogEntry = tuple[float, Direction, Message]
PROTOCOL_LOG_SIZE = 2000


class _Pending:
    """One request waiting for its reply."""

    __slots__ = ("done", "error", "last_activity", "method", "on_progress", "result", "seen_seq")

    def __init__(self, method: str, on_progress: ProgressCallback | None) -> None:
        self.method = method
        self.on_progress = on_progress
        self.done = Latch()
        self.result: dict[str, Any] | None = None
        self.error: McpError | None = None
        self.last_activity = time.monotonic()
        self.seen_seq = 0

    def fail(self, error: McpError) -> None:
        if not self.done.is_set():
            self.error = error
            self.done.set()


class RpcDispatcher:
    """Sends requests and waits for their replies; routes what the server sends on its own."""

    def __init__(
        self,
        transport: Transport,
        *,
        timeout: float,
        max_timeout: float,
        event_sink: EventSink | None = None,
        request_handlers: Mapping[str, RequestHandler] | None = None,
    ) -> None:
        self.transport = transport
        # A transport that can send a request and read its reply on the caller's own thread.
        self._post_and_read: PostAndRead | None = getattr(transport, "post_and_read", None)
        self.timeout = timeout
        self.max_timeout = max_timeout
        self.event_sink = event_sink
        self.request_handlers: dict[str, RequestHandler] = dict(request_handlers or {})
        # Every message both ways, bounded: the Tools page shows and exports it.
        self.protocol_log: deque[LogEntry] = deque(maxlen=PROTOCOL_LOG_SIZE)
        self.closed_error: McpError | None = None
        self._ids = itertools.count(1)
        self._pending: dict[RequestId, _Pending] = {}
        self._lock = threading.Lock()
        self._closed = False
        # Notifications and server requests run on their own thread, in order, so a callback
        # may call the client without blocking the reader that would deliver its reply.
        self._inbox: queue.SimpleQueue[tuple[int, Message, ProgressCallback | None] | None] = (
            queue.SimpleQueue()
        )
        self._queued_seq = 0
        self._handled_seq = 0
        self._handled = threading.Condition()
        self._dispatcher: threading.Thread | None = None
        # Server requests being answered: while one waits (on a person), ours are not idle.
        self._serving = 0
        self._last_served = 0.0

    @property
    def label(self) -> str:
        return self.transport.label

    # --- outgoing ----------------------------------------------------------------------

    def send(self, message: Message) -> None:
        """Send one message as it is, logging it."""
        self.protocol_log.append((time.time(), "sent", message))
        self.transport.send(message)

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification (no reply)."""
        message: Message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def request(
        self,
        method: str,
        params: dict[str, Any] | None,
        timeout: float | None,
        max_timeout: float | None,
        on_progress: ProgressCallback | None,
        signal: AbortSignal | None,
    ) -> dict[str, Any]:
        """Send one request and wait for its `result`; an error reply raises `McpError`."""
        if self.closed_error is not None:
            raise self.closed_error
        if signal is not None and signal.aborted:
            raise McpCancelledError(f"{method!r} was not sent: " + (signal.reason or "aborted"))
        request_id = next(self._ids)
        message: Message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if on_progress is not None:
            params = {
                **(params or {}),
                "_meta": {**(params or {}).get("_meta", {}), "progressToken": request_id},
            }
        if params is not None:
            message["params"] = params
        pending = _Pending(method, on_progress)
        with self._lock:
            if self._closed:
                raise McpConnectionError(f"the session with MCP server {self.label} is closed")
            self._pending[request_id] = pending
        unsubscribe = signal.on_abort(lambda reason: self.cancel(request_id, reason)) if signal else None
        try:
            started = time.monotonic()
            if self._post_and_read is None:
                self.send(message)
            else:
                # The transport may send it and read the reply on this thread, for at most the
                # time this wait would allow (the wait below then finds it answered, or words why not).
                self.protocol_log.append((time.time(), "sent", message))
                self._post_and_read(message, min(self._limits(timeout, max_timeout)), pending.done)
            self._wait(request_id, pending, timeout, max_timeout, started)
        finally:
            with self._lock:
                self._pending.pop(request_id, None)
            if unsubscribe is not None:
                unsubscribe()
        if pending.error is not None:
            if signal is not None and signal.aborted and not isinstance(pending.error, McpCancelledError):
                # Another abort listener can make the server answer first (a task's tasks/cancel
                # ends its tasks/result, "no result stored"): the caller who aborted hears a cancel.
                reason = signal.reason or "aborted"
                raise McpCancelledError(f"{method!r} was cancelled: {reason}") from pending.error
            raise pending.error
        # Notifications that came before the reply reach their callbacks before the caller goes on.
        self._wait_handled(pending.seen_seq)
        assert pending.result is not None
        return pending.result

    def _limits(self, timeout: float | None, max_timeout: float | None) -> tuple[float, float]:
        """How long the server may stay silent, and the cap on the whole wait, in seconds."""
        idle = self.timeout if timeout is None else timeout
        # A long per-call timeout lifts the client's default cap; an explicit cap always holds.
        cap = max(self.max_timeout, idle) if max_timeout is None else max_timeout
        return idle, cap

    def _wait(
        self,
        request_id: RequestId,
        pending: _Pending,
        timeout: float | None,
        max_timeout: float | None,
        started: float,
    ) -> None:
        idle, cap = self._limits(timeout, max_timeout)
        while not pending.done.is_set():
            now = time.monotonic()
            # While the server waits on our answer (a question to the person) it is not silent.
            served = now if self._serving else self._last_served
            pending.last_activity = max(pending.last_activity, served)
            deadline = min(pending.last_activity + idle, started + cap)
            if now >= deadline:
                limit = f"its time limit of {cap:g} s" if deadline == started + cap else f"{idle:g} s"
                pending.fail(
                    McpTimeoutError(
                        f"MCP server {self.label} did not answer {pending.method!r} within {limit}"
                    )
                )
                self._send_cancel(request_id, f"timed out after {duration((now - started) * 1000)}")
                return
            pending.done.wait(min(deadline - now, 1.0) if self._serving else deadline - now)

    def cancel(self, request_id: RequestId, reason: str | None = None) -> None:
        """Stop waiting for `request_id` and tell the server (`notifications/cancelled`)."""
        with self._lock:
            pending = self._pending.get(request_id)
        if pending is None or pending.done.is_set():
            return
        pending.fail(
            McpCancelledError(f"{pending.method!r} was cancelled" + (f": {reason}" if reason else ""))
        )
        self._send_cancel(request_id, reason)

    def _send_cancel(self, request_id: RequestId, reason: str | None) -> None:
        self.transport.abandon(request_id)
        params: dict[str, Any] = {"requestId": request_id}
        if reason:
            params["reason"] = reason
        try:
            self.notify("notifications/cancelled", params)
        except McpError as exc:
            logger.info("could not tell MCP server %s about the cancellation: %s", self.label, exc)

    @property
    def pending_requests(self) -> list[RequestId]:
        """Ids of the requests still waiting for a reply."""
        with self._lock:
            return list(self._pending)

    def mark_closed(self) -> bool:
        """Refuse new requests from now on; False when already closed."""
        with self._lock:
            if self._closed:
                return False
            self._closed = True
        return True

    def stop(self, error: McpError) -> None:
        """After the transport closed: fail what still waits and end the dispatch thread."""
        self._fail_all(error)
        self._inbox.put(None)

    # --- incoming ----------------------------------------------------------------------

    def on_message(self, message: Message) -> None:
        """The transport's callback for every message the server sends."""
        self.protocol_log.append((time.time(), "received", message))
        if "method" not in message:
            with self._lock:
                pending = self._pending.get(message.get("id"))  # type: ignore[arg-type]
                seq = self._queued_seq
            if pending is None:
                logger.debug("MCP server %s answered an unknown request id %r", self.label, message.get("id"))
                return
            pending.seen_seq = seq
            error = message.get("error")
            if isinstance(error, dict):
                pending.fail(error_from_wire(error))
            else:
                result = message.get("result")
                pending.result = result if isinstance(result, dict) else {}
                pending.done.set()
            return
        on_progress = None
        if message.get("method") == "notifications/progress":
            pending = self._pending_for_progress(message.get("params"))
            if pending is not None:
                pending.last_activity = time.monotonic()
                # Taken now: the request may be answered before the dispatcher gets here.
                on_progress = pending.on_progress
        with self._lock:
            self._queued_seq += 1
            seq = self._queued_seq
        self._ensure_dispatcher()
        self._inbox.put((seq, message, on_progress))

    def _pending_for_progress(self, params: Any) -> _Pending | None:
        token = params.get("progressToken") if isinstance(params, dict) else None
        if not isinstance(token, int | str):
            return None
        with self._lock:
            return self._pending.get(token)

    def on_failure(self, request_id: RequestId | None, error: McpError) -> None:
        """The transport's callback when one request, or the whole connection (None), failed."""
        if request_id is None:
            self.closed_error = error
            self._fail_all(error)
            return
        with self._lock:
            pending = self._pending.get(request_id)
        if pending is not None:
            pending.fail(error)

    def _fail_all(self, error: McpError) -> None:
        with self._lock:
            pendings = list(self._pending.values())
        for pending in pendings:
            pending.fail(error)

    def _ensure_dispatcher(self) -> None:
        if self._dispatcher is None:
            with self._lock:
                if self._dispatcher is None:
                    self._dispatcher = threading.Thread(
                        target=self._dispatch_loop, name=f"mcp-events-{self.label}", daemon=True
                    )
                    self._dispatcher.start()

    def _dispatch_loop(self) -> None:
        while (item := self._inbox.get()) is not None:
            seq, message, on_progress = item
            try:
                if "id" in message:
                    self._answer_server_request(message)
                else:
                    self._deliver_notification(message, on_progress)
            except Exception:
                logger.exception("handling %s from MCP server %s failed", message.get("method"), self.label)
            finally:
                with self._handled:
                    self._handled_seq = seq
                    self._handled.notify_all()

    def _wait_handled(self, seq: int) -> None:
        if seq <= self._handled_seq or threading.current_thread() is self._dispatcher:
            return
        with self._handled:
            self._handled.wait_for(lambda: self._handled_seq >= seq or self._closed, timeout=5.0)

    def _deliver_notification(self, message: Message, on_progress: ProgressCallback | None) -> None:
        params = message.get("params")
        notification = McpNotification(
            method=str(message["method"]), params=params if isinstance(params, dict) else {}
        )
        if on_progress is not None:
            try:
                on_progress(McpProgress.model_validate(notification.params))
            except Exception:
                logger.exception("a progress callback for MCP server %s failed", self.label)
        if self.event_sink is not None:
            self.event_sink(notification)

    def _answer_server_request(self, message: Message) -> None:
        # Each server request is answered on a thread of its own: a handler may wait for a
        # person (elicitation, sampling) while the server goes on sending notifications.
        handler = self.request_handlers.get(str(message["method"]))
        if handler is None:
            self._reply(message, None)
        else:
            threading.Thread(
                target=self._reply, args=(message, handler), name="mcp-server-request", daemon=True
            ).start()

    def _reply(self, message: Message, handler: RequestHandler | None) -> None:
        method = str(message["method"])
        reply: Message = {"jsonrpc": "2.0", "id": message["id"]}
        if handler is None:
            reply["error"] = {"code": METHOD_NOT_FOUND, "message": f"Method not found: {method}"}
        else:
            with self._lock:
                self._serving += 1
            try:
                params = message.get("params")
                reply["result"] = handler(params if isinstance(params, dict) else {})
            except McpError as exc:
                reply["error"] = {"code": exc.code, "message": exc.message, "data": exc.data}
            except Exception as exc:
                logger.exception("the handler for %s failed", method)
                reply["error"] = {"code": INTERNAL_ERROR, "message": f"{method} failed: {exc}"}
            finally:
                with self._lock:
                    self._serving -= 1
                    self._last_served = time.monotonic()
        try:
            self.send(reply)
        except McpError as exc:
            logger.info("could not answer %s from MCP server %s: %s", method, self.label, exc)


def error_from_wire(error: dict[str, Any]) -> McpError:
    """The `McpError` for a JSON-RPC `error` object."""
    code = error.get("code")
    return McpError(
        code if isinstance(code, int) else INTERNAL_ERROR,
        str(error.get("message") or "unknown error"),
        error.get("data"),
    )
