"""MCP Apps views inside Chat's tool calls: drawn when the person opens one, from the stored result."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import streamlit as st

from ui.app_view import ViewHost, draw_app_view, session_host
from ui.state import KEPT_VIEWS, STORE, TOOL_REGISTRY, UNSENT, view_key, view_notice
from yiem.mcp import CallToolResult, McpClient, McpError, McpTool
from yiem.mcp.apps import McpAppError
from yiem.store import ConversationStore, StoreError, ViewCopies
from yiem.tool_registry import ToolRegistry
from yiem.types import AgentToolCall, ToolResultMessage


def stored_view(result: ToolResultMessage | None) -> tuple[str, str, str, dict[str, Any]] | None:
    """(server, tool, view URI, the call's MCP result) when the call's tool has a view, else None."""
    details = result.details if result is not None else None
    if not isinstance(details, dict):
        return None
    view = details.get("view")
    if not isinstance(view, dict) or not isinstance(view.get("uri"), str):
        return None
    return str(details.get("server", "")), str(details.get("tool", "")), view["uri"], view.get("result") or {}


def _put_in_input(text: str) -> str:
    UNSENT.set(text)
    return "The view's message is in the chat input: read it, then send it or change it."


def draw_chat_view(call: AgentToolCall, result: ToolResultMessage | None, key: str) -> None:
    """A toggle that draws the call's view (views stay closed, so a long chat reruns fast)."""
    found = stored_view(result)
    if found is None:
        return
    server, name, uri, wire = found
    if not st.toggle(
        "Show the tool's view", key=f"{key}:open", help=f"The interactive view {uri} from {server}"
    ):
        return
    registry: ToolRegistry = TOOL_REGISTRY()
    store: ConversationStore = STORE()
    copies = ViewCopies(store.engine, store.owner)
    client: McpClient | None = registry.servers.get(server)
    # Looked up in the server's whole list: the chat's names leave out the tools meant only for views.
    tool = registry.mcp_tool(server, name) if client is not None else None
    if client is None or tool is None:
        _draw_copy(copies, server, name, uri, call, wire, key)
        return
    try:
        view = registry.views.load(client, server, uri)
    except McpError as error:
        st.warning(f"This tool has a view, but it cannot be drawn: {error}")
        return
    kept: set[tuple[str, str, datetime]] = KEPT_VIEWS.setdefault(set)
    if (server, uri, view.fetched_at) not in kept:  # each reading of a view is stored once
        try:
            copies.keep(server, view)
            kept.add((server, uri, view.fetched_at))
        except StoreError as error:
            st.caption(f"{error} The view is drawn, but could not be kept for when {server} is gone.")
    if notice := view_notice(view_key(key)).pop():
        st.success(notice)

    host = session_host(server, client, registry, put_message=_put_in_input)
    draw_app_view(
        view,
        key=view_key(key),
        host=host,
        tool=tool,
        arguments=call.arguments,
        result=CallToolResult.from_wire(wire) if wire else None,
    )


def _draw_copy(
    copies: ViewCopies, server: str, name: str, uri: str, call: AgentToolCall, wire: dict[str, Any], key: str
) -> None:
    """The kept copy of the view, said so, when its server is not connected now."""
    try:
        view = copies.find(server, uri)
    except StoreError as error:
        st.warning(f"{server} is not connected now and its view's copy could not be read: {error}")
        return
    if view is None:
        st.info(
            f"{server} is not connected now, so its view of this call cannot be drawn; the result is above."
        )
        return
    st.info(
        f"{server} is not connected now: this is the copy of its view kept on "
        f"{view.fetched_at:%Y-%m-%d %H:%M} UTC. It shows this call's result, but cannot reach its server."
    )

    def gone(*_: Any) -> Any:
        raise McpAppError(f"{server} is not connected, so the view cannot reach it.")

    host = ViewHost(
        server=server, tool=lambda _: None, call_tool=gone, read_resource=gone, put_message=_put_in_input
    )
    draw_app_view(
        view,
        key=view_key(key),
        host=host,
        tool=McpTool(name=name),
        arguments=call.arguments,
        result=CallToolResult.from_wire(wire) if wire else None,
    )
