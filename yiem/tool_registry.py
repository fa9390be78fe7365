"""Tools for the agent from MCP servers and typed Python functions, as one ordered name → AgentTool map."""

from __future__ import annotations

import inspect
import json
import logging
import re
import threading
from collections.abc import Callable
from typing import Any, get_type_hints

from pydantic import ConfigDict, TypeAdapter, create_model

from yiem.errors import YiemError
from yiem.mcp.apps import ViewCache, tool_view_uri, visible_to_model
from yiem.mcp.client import McpClient
from yiem.mcp.models import (
    AudioBlock,
    CallToolResult,
    ContentBlock,
    EmbeddedResourceBlock,
    ImageBlock,
    McpNotification,
    McpProgress,
    McpTool,
    ResourceLinkBlock,
    TextBlock,
)
from yiem.redaction import redact
from yiem.types import AbortSignal, AgentTool, ImageContent, MessageContent, TextContent, ToolOutput

logger = logging.getLogger(__name__)

# What OpenAI and Anthropic accept as a function name.
_NAME_OK = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_NAME_BAD_CHARS = re.compile(r"[^A-Za-z0-9_-]")

OnUpdate = Callable[..., None]
"""The loop's `on_update(update, *, progress, total, message)`."""


def llm_safe_name(name: str) -> str:
    """`name` with characters LLM APIs refuse replaced by `_`, at most 64 characters."""
    return name if _NAME_OK.match(name) else (_NAME_BAD_CHARS.sub("_", name)[:64] or "tool")


def mcp_content_to_message(blocks: list[ContentBlock]) -> list[MessageContent]:
    """MCP content as message content: text and images as they are, everything else as text naming it."""
    content: list[MessageContent] = []
    for block in blocks:
        if isinstance(block, TextBlock):
            content.append(TextContent(text=block.text))
        elif isinstance(block, ImageBlock):
            content.append(ImageContent(data=block.data, mime_type=block.mime_type))
        elif isinstance(block, AudioBlock):
            content.append(TextContent(text=f"[audio: {block.mime_type}, {len(block.data) * 3 // 4} bytes]"))
        elif isinstance(block, ResourceLinkBlock):
            label = block.title or block.name or block.uri
            text = f"[resource link: {label} <{block.uri}>"
            text += f" ({block.mime_type})" if block.mime_type else ""
            text += f" — {block.description}]" if block.description else "]"
            content.append(TextContent(text=text))
        elif isinstance(block, EmbeddedResourceBlock):
            resource = block.resource
            kind = f" ({resource.mime_type})" if resource.mime_type else ""
            if resource.text is not None:
                content.append(TextContent(text=f"[resource {resource.uri}{kind}]\n{resource.text}"))
            else:
                size = len(resource.blob or "") * 3 // 4
                content.append(TextContent(text=f"[binary resource {resource.uri}{kind}, {size} bytes]"))
        else:
            content.append(TextContent(text=json.dumps(block.to_wire(), ensure_ascii=False)))
    # A server that echoes a header it was sent (a token) must not put it in the chat.
    return [TextContent(text=redact(b.text)) if isinstance(b, TextContent) else b for b in content]


def mcp_result_to_output(result: CallToolResult, server: str, tool: str) -> ToolOutput:
    """A `tools/call` result as a `ToolOutput` (SP-010): `is_error` kept, structured content in details."""
    content = mcp_content_to_message(result.content)
    if not content and result.structured_content is not None:
        content = [TextContent(text=json.dumps(result.structured_content, ensure_ascii=False))]
    details: dict[str, Any] = {"server": server, "tool": tool}
    if result.structured_content is not None:
        details["structured_content"] = result.structured_content
    return ToolOutput(content=content, details=details, is_error=result.is_error)


def _progress_output(progress: McpProgress) -> ToolOutput:
    amount = f"{progress.progress:g}" + (f"/{progress.total:g}" if progress.total is not None else "")
    text = f"{progress.message} ({amount})" if progress.message else f"progress {amount}"
    return ToolOutput(
        content=[TextContent(text=text)],
        details={"progress": progress.progress, "total": progress.total, "message": progress.message},
    )


class DuplicateToolNameError(YiemError, ValueError):
    """A tool or MCP server name that is already taken; says which to rename."""


class ToolSignatureError(YiemError, TypeError):
    """A function that cannot become a tool (a missing or unresolvable type hint, `*args`)."""


class _McpServer:
    def __init__(self, name: str, client: McpClient) -> None:
        self.name = name
        self.client = client
        # MCP tool name -> the name the agent knows it by (`server__tool` after a clash).
        self.chat_names: dict[str, str] = {}
        # Every tool as last listed, those meant only for their view too (a view may call them).
        self.tools: dict[str, McpTool] = {}


class ToolRegistry:
    """Holds the agent's tools; MCP servers' tools follow their `tools/list_changed` notifications."""

    def __init__(self) -> None:
        self._tools: dict[str, AgentTool] = {}
        self._servers: dict[str, _McpServer] = {}
        self._lock = threading.RLock()
        self.on_change: Callable[[ToolRegistry], None] | None = None
        # The views of the servers' tools, kept while the tool list they were read under stands: a
        # server listed again (connected anew, its tools changed or refreshed) or removed loses them.
        self.views = ViewCache()

    @property
    def tools(self) -> dict[str, AgentTool]:
        """The ordered name → AgentTool map that `AgentContext.tools` takes (a copy)."""
        with self._lock:
            return dict(self._tools)

    @property
    def servers(self) -> dict[str, McpClient]:
        """The MCP servers added, by name."""
        with self._lock:
            return {name: server.client for name, server in self._servers.items()}

    def chat_names(self, server: str) -> dict[str, str]:
        """A connected server's tools: MCP name -> the name the agent calls it by; empty when unknown."""
        with self._lock:
            found = self._servers.get(server)
            return dict(found.chat_names) if found is not None else {}

    def mcp_tool(self, server: str, name: str) -> McpTool | None:
        """A connected server's tool as last listed, one meant only for its view too; None when unknown."""
        with self._lock:
            found = self._servers.get(server)
            return found.tools.get(name) if found is not None else None

    def add_tool(self, tool: AgentTool) -> AgentTool:
        """Add a ready-made tool; its name must be free."""
        with self._lock:
            if tool.name in self._tools:
                raise DuplicateToolNameError(f"a tool named {tool.name!r} is already registered")
            self._tools[tool.name] = tool
        return tool

    def remove_tool(self, name: str) -> None:
        with self._lock:
            self._tools.pop(name, None)

    def add_function(
        self, fn: Callable[..., Any], name: str | None = None, description: str | None = None
    ) -> AgentTool:
        """Add a typed Python function: schema from its signature, description from its docstring."""
        return self.add_tool(function_tool(fn, name, description))

    def add_mcp_server(self, name: str, client: McpClient) -> list[str]:
        """Wrap every tool of `client` as an AgentTool; returns the names the agent sees."""
        with self._lock:
            if name in self._servers:
                raise DuplicateToolNameError(f"an MCP server named {name!r} is already registered")
            server = _McpServer(name, client)
            self._servers[name] = server
        previous_sink = client.event_sink

        def sink(notification: McpNotification) -> None:
            if previous_sink is not None:
                previous_sink(notification)
            if notification.method == "notifications/tools/list_changed":
                self._refresh_quietly(server)

        client.event_sink = sink
        try:
            self._install(server, client.list_tools())
        except BaseException:
            with self._lock:
                self._servers.pop(name, None)
            client.event_sink = previous_sink
            raise
        return list(server.chat_names.values())

    def remove_mcp_server(self, name: str) -> None:
        """Drop a server's tools (the client stays open: its owner closes it)."""
        with self._lock:
            server = self._servers.pop(name, None)
            if server is None:
                return
            for tool_name in server.chat_names.values():
                self._tools.pop(tool_name, None)
        self.views.forget(name)
        self._changed()

    def refresh(self, name: str) -> list[str]:
        """List a server's tools again and replace its tools with them."""
        with self._lock:
            server = self._servers[name]
        self._install(server, server.client.list_tools())
        return list(server.chat_names.values())

    def _refresh_quietly(self, server: _McpServer) -> None:
        try:
            self._install(server, server.client.list_tools())
        except Exception as exc:
            logger.warning("refreshing the tools of MCP server %s failed: %s", server.name, exc)

    def _install(self, server: _McpServer, mcp_tools: list[McpTool]) -> None:
        with self._lock:
            if self._servers.get(server.name) is not server:
                return  # removed meanwhile
            for old in server.chat_names.values():
                self._tools.pop(old, None)
            chat_names = {}
            # A tool its server meant only for its view is not offered to the model.
            for mcp_tool in filter(visible_to_model, mcp_tools):
                tool = self._wrap_mcp_tool(server, mcp_tool)
                self._tools[tool.name] = tool
                chat_names[mcp_tool.name] = tool.name
            server.chat_names = chat_names
            server.tools = {mcp_tool.name: mcp_tool for mcp_tool in mcp_tools}
        self.views.forget(server.name)
        self._changed()

    def _wrap_mcp_tool(self, server: _McpServer, mcp_tool: McpTool) -> AgentTool:
        """SD-004 `_wrap_mcp_tool`: an MCP tool as an AgentTool whose execute calls `tools/call`."""
        name = llm_safe_name(mcp_tool.name)
        if name in self._tools:
            name = llm_safe_name(f"{server.name}__{mcp_tool.name}")
            if name in self._tools:
                raise DuplicateToolNameError(
                    f"two tools would be named {name!r}; rename the MCP server {server.name!r}"
                )
        client, server_name, tool_name = server.client, server.name, mcp_tool.name
        view_uri = tool_view_uri(mcp_tool)

        def execute(
            tool_call_id: str,
            arguments: dict[str, Any],
            signal: AbortSignal | None = None,
            on_update: OnUpdate | None = None,
        ) -> ToolOutput:
            def on_progress(progress: McpProgress) -> None:
                if on_update is not None:
                    on_update(
                        _progress_output(progress),
                        progress=progress.progress,
                        total=progress.total,
                        message=progress.message,
                    )

            result = client.call_tool(
                tool_name, arguments, on_progress=on_progress if on_update else None, signal=signal
            )
            output = mcp_result_to_output(result, server_name, tool_name)
            if view_uri is not None and isinstance(output.details, dict):
                # What the view is delivered when the conversation is drawn, now or reopened later.
                output.details["view"] = {"uri": view_uri, "result": result.to_wire()}
            return output

        return AgentTool(
            name=name,
            description=mcp_tool.description,
            input_schema=mcp_tool.input_schema,
            execute=execute,
            title=mcp_tool.display_name,  # title, annotations title, label, then name (SP-009)
            label=mcp_tool.label,
            output_schema=mcp_tool.output_schema,
            annotations=mcp_tool.annotations,
            server=server_name,
        )

    def _changed(self) -> None:
        if self.on_change is not None:
            try:
                self.on_change(self)
            except Exception:
                logger.exception("a tool registry listener failed")


def function_tool(
    fn: Callable[..., Any], name: str | None = None, description: str | None = None
) -> AgentTool:
    """An AgentTool from a typed function; arguments are validated and converted by pydantic."""
    signature = inspect.signature(fn)
    try:
        # Resolves string annotations (`from __future__ import annotations`) in fn's module.
        hints = get_type_hints(fn, include_extras=True)
    except NameError as exc:
        raise ToolSignatureError(f"{fn.__name__}: a type hint cannot be resolved: {exc}") from exc
    fields: dict[str, Any] = {}
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ToolSignatureError(f"{fn.__name__}: *args and **kwargs cannot become tool arguments")
        if param.annotation is inspect.Parameter.empty:
            raise ToolSignatureError(f"{fn.__name__}: parameter {param.name!r} needs a type hint")
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (hints.get(param.name, param.annotation), default)
    model = create_model(f"{fn.__name__}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    returns = TypeAdapter(Any)

    def execute(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal | None = None) -> Any:
        values = model.model_validate(arguments)
        result = fn(**{field: getattr(values, field) for field in fields})
        if isinstance(result, str | ToolOutput) or (
            isinstance(result, list) and all(isinstance(item, TextContent | ImageContent) for item in result)
        ):
            return result
        return json.dumps(returns.dump_python(result, mode="json"), ensure_ascii=False)

    doc = inspect.getdoc(fn) or ""
    return AgentTool(
        name=llm_safe_name(name or fn.__name__),
        description=description if description is not None else doc,
        input_schema=schema,
        execute=execute,
    )
