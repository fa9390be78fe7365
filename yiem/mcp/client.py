"""A synchronous MCP client: one JSON-RPC session with a server over stdio or Streamable HTTP."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from yiem.mcp import _input_required
from yiem.mcp._auth import GrantAuth
from yiem.mcp._catalog import CatalogMethods
from yiem.mcp._client_features import ClientFeatures, ElicitationHandler, SamplingHandler
from yiem.mcp._headers import header_map, invalid_header_reason
from yiem.mcp._list_cache import ListCache
from yiem.mcp._listen import ListenStream
from yiem.mcp._revision import (
    HANDSHAKE_VERSIONS,
    SERVER_INFO_KEY,
    SUPPORTED_VERSIONS,
    Revision,
    check_result_meta,
    negotiate,
    stamp_meta,
    version_mismatch,
)
from yiem.mcp._rpc import (
    EventSink,
    LogEntry,
    ProgressCallback,
    RequestHandler,
    RequestId,
    RpcDispatcher,
)
from yiem.mcp._tool_tasks import ToolTaskMethods
from yiem.mcp.errors import (
    UNSUPPORTED_PROTOCOL_VERSION,
    McpConnectionError,
    McpError,
    McpSessionExpiredError,
)
from yiem.mcp.http import HttpTransport
from yiem.mcp.models import (
    McpNotification,
    McpTool,
    Root,
    ServerInfo,
)
from yiem.mcp.sse import SseTransport
from yiem.mcp.stdio import StdioTransport
from yiem.mcp.transport import Transport
from yiem.types import AbortSignal

logger = logging.getLogger(__name__)

# What `initialize` proposes to a server that does not speak the stateless revision.
PROTOCOL_VERSION = HANDSHAKE_VERSIONS[0]
SUPPORTED_PROTOCOL_VERSIONS = SUPPORTED_VERSIONS
DISCOVER_TIMEOUT = 10.0
CLIENT_INFO = {"name": "yiem", "version": "0.1.0"}


class McpClient(CatalogMethods, ToolTaskMethods):
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
        roots: Sequence[Root] | None = None,
        sampling: SamplingHandler | None = None,
        elicitation: ElicitationHandler | None = None,
    ) -> None:
        """`roots`, `sampling` and `elicitation` are declared as capabilities only when given."""
        self.transport = transport
        self.features = ClientFeatures(roots, sampling, elicitation)
        self._sink = event_sink
        # Lists a 2026-07-28 server said may be reused for a while (`ttlMs`).
        self.lists = ListCache()
        self.init_timeout = init_timeout
        self.client_info = dict(client_info or CLIENT_INFO)
        self.server_info = ServerInfo()
        self.protocol_version: str | None = None
        # The revision agreed on (None until connected); it stamps every request.
        self.revision: Revision | None = None
        self.capabilities: dict[str, Any] = {}
        self.instructions: str | None = None
        self._rpc = RpcDispatcher(
            transport,
            timeout=timeout,
            max_timeout=max_timeout,
            event_sink=self._on_event,
            request_handlers=self.features.handlers() | dict(request_handlers or {}),
        )
        self._task_support: dict[str, str] = {}
        self._session_lock = threading.Lock()
        self._session_generation = 0
        # At 2026-07-28 the server's own events come on a `subscriptions/listen` stream.
        self.listen = ListenStream(self.request, self._on_event, transport.label)

    def _on_event(self, notification: McpNotification) -> None:
        self.lists.changed(notification.method)
        sink = self._sink
        if sink is not None:
            sink(notification)

    @property
    def event_sink(self) -> EventSink | None:
        """Where notifications from the server go (called on the dispatch thread, in order)."""
        return self._sink

    @event_sink.setter
    def event_sink(self, sink: EventSink | None) -> None:
        self._sink = sink

    @property
    def request_handlers(self) -> dict[str, RequestHandler]:
        """Method -> handler for the requests the server sends us; others get -32601."""
        return self._rpc.request_handlers

    @property
    def timeout(self) -> float:
        """How long a server may stay silent on a request by default, in seconds."""
        return self._rpc.timeout

    @property
    def protocol_log(self) -> list[LogEntry]:
        """The last JSON-RPC messages both ways: (epoch seconds, "sent" or "received", message)."""
        return list(self._rpc.protocol_log)

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
    def http(
        cls,
        url: str,
        headers: Mapping[str, str] | None = None,
        *,
        sse_fallback: bool = True,
        quote_bodies: bool = True,
        auth: GrantAuth | None = None,
        **options: Any,
    ) -> McpClient:
        """Initialise a session with the Streamable HTTP server at `url` (`quote_bodies=False` for a URL
        typed in a browser: what it answers that is not MCP is never quoted in an error).

        A server that refuses it (HTTP 400, 404 or 405 to `initialize`) is tried with the legacy
        HTTP+SSE transport at the same URL, as the specification's backwards compatibility says.
        `auth` sends an OAuth sign-in's token; a server that wants one raises `McpSignInRequiredError`.
        """
        try:
            transport = HttpTransport(url, headers, quote_bodies=quote_bodies, auth=auth)
            return cls(transport, **options).connect()
        except McpConnectionError as exc:
            status = exc.data.get("status") if isinstance(exc.data, dict) else None
            if not sse_fallback or status not in (400, 404, 405):
                raise
            try:
                return cls(SseTransport(url, headers, quote_bodies=quote_bodies), **options).connect()
            except McpError as sse_error:
                raise McpConnectionError(
                    f"{exc.message}; the older HTTP+SSE transport did not work either: {sse_error.message}",
                    data=exc.data,
                ) from sse_error

    @classmethod
    def sse(cls, url: str, headers: Mapping[str, str] | None = None, **options: Any) -> McpClient:
        """Initialise a session over the legacy HTTP+SSE transport (its GET event-stream URL)."""
        return cls(SseTransport(url, headers), **options).connect()

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
        """Open the transport and agree on a revision (`server/discover`, else the `initialize`
        handshake); raises `McpError` and cleans up on failure."""
        self.transport.start(self._rpc.on_message, self._rpc.on_failure)
        try:
            if getattr(self.transport, "stateless_capable", True):
                version, result = negotiate(self._discover, self._handshake, self.label)
            else:
                version, result = self._handshake_checked()
            self._adopt(version, result)
        except BaseException:
            self.close()
            raise
        return self

    @property
    def stateless(self) -> bool:
        """True when the session speaks the stateless 2026-07-28 revision."""
        return self.revision is not None and self.revision.stateless

    def _discover(self, version: str) -> dict[str, Any]:
        params = stamp_meta(None, version, self.client_info, self.features.capabilities(version))
        timeout = min(self.init_timeout, DISCOVER_TIMEOUT)
        return self._rpc.request("server/discover", params, timeout, None, None, None)

    def _handshake(self) -> dict[str, Any]:
        params = {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": self.features.capabilities(),
            "clientInfo": self.client_info,
        }
        return self._rpc.request("initialize", params, self.init_timeout, None, None, None)

    def _handshake_checked(self) -> tuple[str, dict[str, Any]]:
        return negotiate(_no_discover, self._handshake, self.label)

    def _adopt(self, version: str, result: dict[str, Any]) -> None:
        self.revision = Revision(version, self.client_info, self.features.capabilities(version))
        check_result_meta(result, self.revision, "server/discover", self.label)
        self.protocol_version = version
        raw_meta = result.get("_meta")
        meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
        info = result.get("serverInfo") or meta.get(SERVER_INFO_KEY) or {}
        self.server_info = ServerInfo.model_validate(info if isinstance(info, dict) else {})
        capabilities = result.get("capabilities")
        self.capabilities = capabilities if isinstance(capabilities, dict) else {}
        instructions = result.get("instructions")
        self.instructions = instructions if isinstance(instructions, str) else None
        self.transport.initialized(version)
        if not self.revision.stateless:
            self.notify("notifications/initialized")
            return
        lists = {
            kind
            for kind in ("tools", "prompts", "resources")
            if isinstance(self.capabilities.get(kind), dict) and self.capabilities[kind].get("listChanged")
        }
        if lists:
            self.listen.want(lists=lists)

    def _initialize(self) -> None:
        self._adopt(*self._handshake_checked())

    def close(self) -> None:
        """End the session: stop the process or send DELETE; pending requests fail."""
        self.listen.stop()
        if not self._rpc.mark_closed():
            return
        try:
            self.transport.close()
        finally:
            self._rpc.stop(McpConnectionError(f"the session with MCP server {self.label} was closed"))

    def __enter__(self) -> McpClient:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # --- JSON-RPC ----------------------------------------------------------------------

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification (no reply)."""
        self._rpc.notify(method, params)

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

        def send(stamped: dict[str, Any] | None) -> dict[str, Any]:
            return self._rpc.request(method, stamped, timeout, max_timeout, on_progress, signal)

        result = self._request_once(method, params, send, _retry_session)
        if self.stateless and _input_required.needs_input(result):

            def retry(responses: dict[str, Any] | None, state: str | None) -> dict[str, Any]:
                again = _input_required.retry_params(params, responses, state)
                return self._request_once(method, again, send, False)

            result = _input_required.resolve(result, self.request_handlers, retry, self.label, method)
        return result

    def _request_once(
        self,
        method: str,
        params: dict[str, Any] | None,
        send: Callable[[dict[str, Any] | None], dict[str, Any]],
        retry_session: bool,
    ) -> dict[str, Any]:
        revision = self.revision
        stamped = revision.stamp(params) if revision is not None else params
        generation = self._session_generation
        try:
            result = send(stamped)
        except McpSessionExpiredError:
            if not retry_session:
                raise
            self._reinitialize(generation)
            result = send(stamped)
        except McpError as exc:
            if exc.code == UNSUPPORTED_PROTOCOL_VERSION and revision is not None:
                raise version_mismatch(exc, self.label, revision.version) from exc
            raise
        if revision is not None:
            check_result_meta(result, revision, method, self.label)
        return result

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

    def cancel(self, request_id: RequestId, reason: str | None = None) -> None:
        """Stop waiting for `request_id` and tell the server (`notifications/cancelled`)."""
        self._rpc.cancel(request_id, reason)

    @property
    def pending_requests(self) -> list[RequestId]:
        """Ids of the requests still waiting for a reply."""
        return self._rpc.pending_requests

    # --- MCP methods -------------------------------------------------------------------

    def ping(self, timeout: float | None = None) -> None:
        """Check the server answers."""
        self.request("ping", timeout=timeout)

    def list_tools(self) -> list[McpTool]:
        """Every tool, following `nextCursor` to the end (SP-009).

        At 2026-07-28 a tool whose `x-mcp-header` marks break the rules is left out (and logged).
        """
        raws = self._paginate("tools/list", "tools")
        marks = getattr(self.transport, "header_marks", None)
        if self.stateless:
            kept = []
            for raw in raws:
                reason = invalid_header_reason(raw.get("inputSchema"))
                if reason is None:
                    kept.append(raw)
                else:
                    logger.warning("MCP server %s: left out tool %r: %s", self.label, raw.get("name"), reason)
            raws = kept
            if isinstance(marks, dict):
                marks.clear()
                marks.update({str(raw.get("name")): header_map(raw.get("inputSchema")) for raw in raws})
        tools = [McpTool.model_validate(raw) for raw in raws]
        self._task_support = {tool.name: tool.task_support for tool in tools}
        return tools

    def subscribe(self, uri: str) -> None:
        """Ask for `notifications/resources/updated` when the resource at `uri` changes.

        At 2026-07-28 the resource joins the `subscriptions/listen` stream's wish instead."""
        if self.stateless:
            self.listen.want(add=uri)
            return
        self.request("resources/subscribe", {"uri": uri})

    def unsubscribe(self, uri: str) -> None:
        """Stop the updates of `subscribe`."""
        if self.stateless:
            self.listen.want(remove=uri)
            return
        self.request("resources/unsubscribe", {"uri": uri})

    def set_roots(self, roots: Sequence[Root]) -> None:
        """Change the folders this server may use and tell it (`notifications/roots/list_changed`)."""
        self.features.roots = list(roots)
        self.notify("notifications/roots/list_changed")


def _no_discover(version: str) -> dict[str, Any]:
    """For a transport that predates the stateless revision: go straight to the handshake."""
    raise McpError(-32601, f"server/discover is not sent over this transport (revision {version})")
