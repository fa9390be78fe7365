"""A synchronous MCP client: one JSON-RPC session with a server over stdio or Streamable HTTP."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from yiem.mcp._auth import GrantAuth
from yiem.mcp._client_features import ClientFeatures, ElicitationHandler, SamplingHandler
from yiem.mcp._rpc import (
    EventSink,
    LogEntry,
    ProgressCallback,
    RequestHandler,
    RequestId,
    RpcDispatcher,
)
from yiem.mcp._tool_tasks import TaskCallback, ToolTaskMethods, run_tool_task, runs_as_task
from yiem.mcp.errors import McpConnectionError, McpError, McpProtocolError, McpSessionExpiredError
from yiem.mcp.http import HttpTransport
from yiem.mcp.models import (
    CallToolResult,
    CompletionResult,
    GetPromptResult,
    McpPrompt,
    McpResource,
    McpResourceTemplate,
    McpTool,
    PromptMessage,
    ResourceContents,
    Root,
    ServerInfo,
)
from yiem.mcp.sse import SseTransport
from yiem.mcp.stdio import StdioTransport
from yiem.mcp.transport import Transport
from yiem.types import AbortSignal

logger = logging.getLogger(__name__)

PROTOCOL_VERSION = "2025-11-25"
SUPPORTED_PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26")
CLIENT_INFO = {"name": "yiem", "version": "0.1.0"}
MAX_PAGES = 1000


class McpClient(ToolTaskMethods):
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
        self.init_timeout = init_timeout
        self.client_info = dict(client_info or CLIENT_INFO)
        self.server_info = ServerInfo()
        self.protocol_version: str | None = None
        self.capabilities: dict[str, Any] = {}
        self.instructions: str | None = None
        self._rpc = RpcDispatcher(
            transport,
            timeout=timeout,
            max_timeout=max_timeout,
            event_sink=event_sink,
            request_handlers=self.features.handlers() | dict(request_handlers or {}),
        )
        self._task_support: dict[str, str] = {}
        self._session_lock = threading.Lock()
        self._session_generation = 0

    @property
    def event_sink(self) -> EventSink | None:
        """Where notifications from the server go (called on the dispatch thread, in order)."""
        return self._rpc.event_sink

    @event_sink.setter
    def event_sink(self, sink: EventSink | None) -> None:
        self._rpc.event_sink = sink

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
        """Open the transport and run the initialize handshake; raises `McpError` and cleans up on failure."""
        self.transport.start(self._rpc.on_message, self._rpc.on_failure)
        try:
            self._initialize()
        except BaseException:
            self.close()
            raise
        return self

    def _initialize(self) -> None:
        result = self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": self.features.capabilities(),
                "clientInfo": self.client_info,
            },
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
        generation = self._session_generation
        try:
            return self._rpc.request(method, params, timeout, max_timeout, on_progress, signal)
        except McpSessionExpiredError:
            if not _retry_session:
                raise
            self._reinitialize(generation)
            return self._rpc.request(method, params, timeout, max_timeout, on_progress, signal)

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
        """Every tool, following `nextCursor` to the end (SP-009)."""
        tools = [McpTool.model_validate(raw) for raw in self._paginate("tools/list", "tools")]
        self._task_support = {tool.name: tool.task_support for tool in tools}
        return tools

    def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        signal: AbortSignal | None = None,
        *,
        as_task: bool | None = None,
        on_task: TaskCallback | None = None,
    ) -> CallToolResult:
        """Run a tool (SP-010); a failing tool gives `is_error`, a protocol failure raises `McpError`.

        A tool `list_tools` said requires a task runs as one, an optional one too with `as_task=True`;
        `on_task` hears the task as it changes, its status also comes as progress; `signal` cancels it.
        """
        raw = self.call_tool_raw(
            name, arguments, timeout, on_progress, signal, as_task=as_task, on_task=on_task
        )
        return CallToolResult.from_wire(raw)

    def call_tool_raw(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        signal: AbortSignal | None = None,
        *,
        as_task: bool | None = None,
        on_task: TaskCallback | None = None,
    ) -> dict[str, Any]:
        """`call_tool`, the result as the server sent it (for a raw view)."""
        if runs_as_task(self._task_support.get(name), as_task):
            return run_tool_task(self, name, arguments or {}, timeout, on_progress, signal, on_task)
        params = {"name": name, "arguments": arguments or {}}
        return self.request("tools/call", params, timeout=timeout, on_progress=on_progress, signal=signal)

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

    def list_resource_templates(self) -> list[McpResourceTemplate]:
        """Every resource template, following `nextCursor` to the end."""
        raw = self._paginate("resources/templates/list", "resourceTemplates")
        return [McpResourceTemplate.model_validate(item) for item in raw]

    def subscribe(self, uri: str) -> None:
        """Ask for `notifications/resources/updated` when the resource at `uri` changes."""
        self.request("resources/subscribe", {"uri": uri})

    def unsubscribe(self, uri: str) -> None:
        """Stop the updates of `subscribe`."""
        self.request("resources/unsubscribe", {"uri": uri})

    def complete(
        self,
        ref: Mapping[str, str],
        argument: str,
        value: str,
        context: Mapping[str, str] | None = None,
    ) -> CompletionResult:
        """Suggestions for `argument` of a prompt (`{"type": "ref/prompt", "name": …}`) or a
        resource template (`{"type": "ref/resource", "uri": …}`), given what is typed so far."""
        params: dict[str, Any] = {"ref": dict(ref), "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": dict(context)}
        result = self.request("completion/complete", params)
        return CompletionResult.model_validate(result.get("completion") or {})

    def set_roots(self, roots: Sequence[Root]) -> None:
        """Change the folders this server may use and tell it (`notifications/roots/list_changed`)."""
        self.features.roots = list(roots)
        self.notify("notifications/roots/list_changed")

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
