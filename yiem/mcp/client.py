"""A synchronous MCP client: one JSON-RPC session with a server over stdio or Streamable HTTP."""

from __future__ import annotations

import itertools
import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from yiem.mcp.errors import (
    METHOD_NOT_FOUND,
    McpCancelledError,
    McpConnectionError,
    McpError,
    McpProtocolError,
    McpSessionExpiredError,
    McpTimeoutError,
)
from yiem.mcp.http import HttpTransport
from yiem.mcp.models import (
    CallToolResult,
    GetPromptResult,
    McpNotification,
    McpProgress,
    McpPrompt,
    McpResource,
    McpTool,
    PromptMessage,
    ResourceContents,
    ServerInfo,
)
from yiem.mcp.stdio import StdioTransport
from yiem.mcp.transport import Message, Transport
from yiem.types import AbortSignal

logger = logging.getLogger(__name__)

PROTOCOL_VERSION = "2025-11-25"
SUPPORTED_PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26")
CLIENT_INFO = {"name": "yiem", "version": "0.1.0"}
MAX_PAGES = 1000

EventSink = Callable[[McpNotification], None]
ProgressCallback = Callable[[McpProgress], None]
RequestHandler = Callable[[dict[str, Any]], dict[str, Any]]
RequestId = int | str


class _Pending:
    """One request waiting for its reply."""

    __slots__ = ("done", "error", "last_activity", "method", "on_progress", "result", "seen_seq")

    def __init__(self, method: str, on_progress: ProgressCallback | None) -> None:
        self.method = method
        self.on_progress = on_progress
        self.done = threading.Event()
        self.result: dict[str, Any] | None = None
        self.error: McpError | None = None
        self.last_activity = time.monotonic()
        self.seen_seq = 0

    def fail(self, error: McpError) -> None:
        if not self.done.is_set():
            self.error = error
            self.done.set()


class McpClient:
    """One session with one MCP server: `McpClient.stdio(...)` or `McpClient.http(...)`."""

    def __init__(
        self,
        transport: Transport,
        *,
        timeout: float = 60.0,
        max_timeout: float = 600.0,
        init_timeout: float = 30.0,
        event_sink: EventSink | None = None,
        request_handlers: Mapping[str, RequestHandler] | None = None,
        client_info: Mapping[str, str] | None = None,
    ) -> None:
        self.transport = transport
        self.timeout = timeout
        self.max_timeout = max_timeout
        self.init_timeout = init_timeout
        self.event_sink = event_sink
        self.request_handlers = dict(request_handlers or {})
        self.client_info = dict(client_info or CLIENT_INFO)
        self.server_info = ServerInfo()
        self.protocol_version: str | None = None
        self.capabilities: dict[str, Any] = {}
        self.instructions: str | None = None
        self._ids = itertools.count(1)
        self._pending: dict[RequestId, _Pending] = {}
        self._lock = threading.Lock()
        self._closed_error: McpError | None = None
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
        self._session_lock = threading.Lock()
        self._session_generation = 0

    # --- construction ------------------------------------------------------------------

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        **options: Any,
    ) -> McpClient:
        """Start `command args` and initialise a session with it over stdio.

        The process gets PATH, HOME and a few more of our variables, plus `env`; nothing else leaks.
        """
        return cls(StdioTransport(command, args, env, cwd), **options).connect()

    @classmethod
    def http(cls, url: str, headers: Mapping[str, str] | None = None, **options: Any) -> McpClient:
        """Initialise a session with the Streamable HTTP server at `url`."""
        return cls(HttpTransport(url, headers), **options).connect()

    @property
    def label(self) -> str:
        """How error messages name this server: its command or URL."""
        return self.transport.label

    @property
    def stderr(self) -> str:
        """The last lines the stdio server wrote to stderr (bounded); empty over HTTP."""
        buffer = getattr(self.transport, "stderr", None)
        return buffer.text() if buffer is not None else ""

    @property
    def session_id(self) -> str | None:
        """The HTTP session id (`Mcp-Session-Id`); None over stdio."""
        return getattr(self.transport, "session_id", None)

    def connect(self) -> McpClient:
        """Open the transport and run the initialize handshake; raises `McpError` and cleans up on failure."""
        self.transport.start(self._on_message, self._on_failure)
        try:
            self._initialize()
        except BaseException:
            self.close()
            raise
        return self

    def _initialize(self) -> None:
        result = self.request(
            "initialize",
            {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": self.client_info},
            timeout=self.init_timeout,
            _retry_session=False,
        )
        version = result.get("protocolVersion")
        if version not in SUPPORTED_PROTOCOL_VERSIONS:
            raise McpProtocolError(
                f"MCP server {self.label} speaks protocol version {version!r}, which yiem does not "
                f"support (it supports {', '.join(SUPPORTED_PROTOCOL_VERSIONS)})",
                data={"protocolVersion": version},
            )
        self.protocol_version = str(version)
        self.server_info = ServerInfo.model_validate(result.get("serverInfo") or {})
        capabilities = result.get("capabilities")
        self.capabilities = capabilities if isinstance(capabilities, dict) else {}
        instructions = result.get("instructions")
        self.instructions = instructions if isinstance(instructions, str) else None
        self.transport.initialized(self.protocol_version)
        self.notify("notifications/initialized")

    def close(self) -> None:
        """End the session: stop the process or send DELETE; pending requests fail."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            self.transport.close()
        finally:
            self._fail_all(McpConnectionError(f"the session with MCP server {self.label} was closed"))
            self._inbox.put(None)

    def __enter__(self) -> McpClient:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # --- JSON-RPC ----------------------------------------------------------------------

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification (no reply)."""
        message: Message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.transport.send(message)

    def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        max_timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        signal: AbortSignal | None = None,
        _retry_session: bool = True,
    ) -> dict[str, Any]:
        """Raw JSON-RPC (the spec's `mcp(...)`): the `result`, or `McpError` for an error reply.

        `timeout` is how long the server may stay silent (progress resets it); `max_timeout` caps the total.
        """
        generation = self._session_generation
        try:
            return self._request_once(method, params, timeout, max_timeout, on_progress, signal)
        except McpSessionExpiredError:
            if not _retry_session:
                raise
            self._reinitialize(generation)
            return self._request_once(method, params, timeout, max_timeout, on_progress, signal)

    def _reinitialize(self, generation: int) -> None:
        with self._session_lock:
            # Another thread may have started the new session already.
            if generation != self._session_generation:
                return
            logger.info("MCP server %s lost the session; initialising again", self.label)
            reset = getattr(self.transport, "reset_session", None)
            if reset is not None:
                reset()
            self._initialize()
            self._session_generation += 1

    def _request_once(
        self,
        method: str,
        params: dict[str, Any] | None,
        timeout: float | None,
        max_timeout: float | None,
        on_progress: ProgressCallback | None,
        signal: AbortSignal | None,
    ) -> dict[str, Any]:
        if self._closed_error is not None:
            raise self._closed_error
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
            self.transport.send(message)
            self._wait(request_id, pending, timeout, max_timeout)
        finally:
            with self._lock:
                self._pending.pop(request_id, None)
            if unsubscribe is not None:
                unsubscribe()
        if pending.error is not None:
            raise pending.error
        # Notifications that came before the reply reach their callbacks before the caller goes on.
        self._wait_handled(pending.seen_seq)
        assert pending.result is not None
        return pending.result

    def _wait(
        self, request_id: RequestId, pending: _Pending, timeout: float | None, max_timeout: float | None
    ) -> None:
        idle = self.timeout if timeout is None else timeout
        # A long per-call timeout lifts the client's default cap; an explicit cap always holds.
        cap = max(self.max_timeout, idle) if max_timeout is None else max_timeout
        started = time.monotonic()
        while not pending.done.is_set():
            now = time.monotonic()
            deadline = min(pending.last_activity + idle, started + cap)
            if now >= deadline:
                limit = f"its time limit of {cap:g} s" if deadline == started + cap else f"{idle:g} s"
                pending.fail(
                    McpTimeoutError(
                        f"MCP server {self.label} did not answer {pending.method!r} within {limit}"
                    )
                )
                self._send_cancel(request_id, f"timed out after {now - started:.1f} s")
                return
            pending.done.wait(deadline - now)

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

    # --- incoming ----------------------------------------------------------------------

    def _on_message(self, message: Message) -> None:
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
                pending.fail(_error_from_wire(error))
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

    def _on_failure(self, request_id: RequestId | None, error: McpError) -> None:
        if request_id is None:
            self._closed_error = error
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
        method = str(message["method"])
        handler = self.request_handlers.get(method)
        reply: Message = {"jsonrpc": "2.0", "id": message["id"]}
        if handler is None:
            reply["error"] = {"code": METHOD_NOT_FOUND, "message": f"Method not found: {method}"}
        else:
            try:
                params = message.get("params")
                reply["result"] = handler(params if isinstance(params, dict) else {})
            except McpError as exc:
                reply["error"] = {"code": exc.code, "message": exc.message, "data": exc.data}
            except Exception as exc:
                logger.exception("the handler for %s failed", method)
                reply["error"] = {"code": -32603, "message": f"{method} failed: {exc}"}
        try:
            self.transport.send(reply)
        except McpError as exc:
            logger.info("could not answer %s from MCP server %s: %s", method, self.label, exc)

    # --- MCP methods -------------------------------------------------------------------

    def ping(self, timeout: float | None = None) -> None:
        """Check the server answers."""
        self.request("ping", timeout=timeout)

    def list_tools(self) -> list[McpTool]:
        """Every tool, following `nextCursor` to the end (SP-009)."""
        return [McpTool.model_validate(raw) for raw in self._paginate("tools/list", "tools")]

    def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        signal: AbortSignal | None = None,
    ) -> CallToolResult:
        """Run a tool (SP-010); a failing tool gives `is_error`, a protocol failure raises `McpError`."""
        result = self.request(
            "tools/call",
            {"name": name, "arguments": arguments or {}},
            timeout=timeout,
            on_progress=on_progress,
            signal=signal,
        )
        return CallToolResult.from_wire(result)

    def list_resources(self) -> list[McpResource]:
        """Every resource, following `nextCursor` to the end."""
        return [McpResource.model_validate(raw) for raw in self._paginate("resources/list", "resources")]

    def read_resource(self, uri: str) -> list[ResourceContents]:
        """The contents of the resource at `uri`."""
        result = self.request("resources/read", {"uri": uri})
        contents = result.get("contents")
        return (
            [ResourceContents.model_validate(raw) for raw in contents] if isinstance(contents, list) else []
        )

    def list_prompts(self) -> list[McpPrompt]:
        """Every prompt, following `nextCursor` to the end."""
        return [McpPrompt.model_validate(raw) for raw in self._paginate("prompts/list", "prompts")]

    def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None) -> GetPromptResult:
        """The prompt `name` filled with `arguments`."""
        result = self.request("prompts/get", {"name": name, "arguments": dict(arguments or {})})
        messages = result.get("messages")
        return GetPromptResult(
            description=result.get("description"),
            messages=[PromptMessage.from_wire(raw) for raw in messages if isinstance(raw, dict)]
            if isinstance(messages, list)
            else [],
        )

    def set_logging_level(self, level: str) -> None:
        """Ask the server to send log messages at `level` and above (`notifications/message`)."""
        self.request("logging/setLevel", {"level": level})

    def _paginate(self, method: str, key: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        seen: set[str] = set()
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            result = self.request(method, {"cursor": cursor} if cursor else None)
            page = result.get(key)
            if isinstance(page, list):
                items.extend(item for item in page if isinstance(item, dict))
            next_cursor = result.get("nextCursor")
            if not next_cursor:
                return items
            if next_cursor in seen:
                raise McpProtocolError(
                    f"MCP server {self.label} repeated the cursor {next_cursor!r} in {method} after "
                    f"{len(items)} items; stopped to avoid an endless loop",
                    data={key: items},
                )
            seen.add(str(next_cursor))
            cursor = str(next_cursor)
        raise McpProtocolError(f"MCP server {self.label} sent more than {MAX_PAGES} pages for {method}")


def _error_from_wire(error: dict[str, Any]) -> McpError:
    code = error.get("code")
    return McpError(
        code if isinstance(code, int) else -32603,
        str(error.get("message") or "unknown error"),
        error.get("data"),
    )
