"""A tool's MCP App view on the Tools page: drawn under its result, and what the view may do, in words."""

from __future__ import annotations

import streamlit as st

from ui.app_view import draw_app_view, session_host
from ui.tools import connect as connection
from yiem.explorer import CallRecord, describe_error
from yiem.mcp import McpClient, McpError, McpTool
from yiem.mcp.apps import csp_words, permission_words, tool_view_uri


def draw_tool_view(
    server: str, client: McpClient, tool: McpTool, record: CallRecord, *, waiting: bool = False
) -> None:
    """The view of `tool` for the call `record`, with a tab that says what the view may do.

    While `waiting`, the view is mounted before its call returns (its document loads meanwhile); the
    same key in the same place on the next run keeps the frame, which is then only sent the result.
    """
    uri = tool_view_uri(tool)
    if uri is None:
        return
    if not waiting and record.result is None:
        # A view mounted while the call ran is taken away here, not left blank.
        st.caption(f"The call returned no result, so the view of {tool.display_name} is not drawn.")
        return
    try:
        view = connection.registry().views.load(client, server, uri)
    except McpError as error:
        st.warning(f"This tool has a view, but it cannot be drawn: {describe_error(error)}")
        return
    shown, about = st.tabs(["Interactive view", "View"])
    with shown:
        draw_app_view(
            view,
            key=f"tools-view-{record.id}",
            host=session_host(server, client, connection.registry()),
            tool=tool,
            arguments=record.arguments,
            result=None if waiting else record.result,
        )
        if waiting:
            st.caption("The view is ready; it shows the result as soon as the call returns.")
    with about:
        st.markdown(
            f"The view is `{uri}`, from {server}. It runs in a sealed frame: it cannot see this page, "
            "your sign-in or other servers."
        )
        for line in csp_words(view):
            st.markdown(f"- {line}")
        permissions = permission_words(view)
        st.markdown(
            "\n".join(f"- {line}" for line in permissions)
            if permissions
            else "- It asks for no browser permission (camera, microphone, location, clipboard)."
        )
        st.caption(
            f"Read from the server at {view.fetched_at:%H:%M:%S} UTC; read again when {server} is "
            "connected anew or its tools change."
        )
