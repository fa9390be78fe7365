"""A tool's MCP App view on the Tools page: drawn under its result, and what the view may do, in words."""

from __future__ import annotations

from uuid import uuid4

import streamlit as st

from ui.app_view import draw_app_view, session_host
from ui.state import AHEAD_VIEWS, CALL_VIEWS
from ui.tools import connect as connection
from yiem.explorer import CallRecord, describe_error
from yiem.mcp import McpClient, McpError, McpTool
from yiem.mcp.apps import csp_words, permission_words, tool_view_uri


def _ahead_key(server: str, tool: str) -> str:
    """The key of the view loaded ahead of the tool's next call; new for each call (no answers carried)."""
    return AHEAD_VIEWS.setdefault(dict).setdefault((server, tool), f"tools-view-{uuid4().hex[:12]}")


def _call_key(record: CallRecord) -> str:
    """A call's view takes the key of the view loaded ahead for its tool, so its frame is kept."""
    keys = CALL_VIEWS.setdefault(dict)
    if record.id not in keys:
        ahead = AHEAD_VIEWS.setdefault(dict).pop((record.server, record.tool), None)
        keys[record.id] = ahead or f"tools-view-{record.id}"
    return keys[record.id]


def draw_tool_view(
    server: str,
    client: McpClient,
    tool: McpTool,
    record: CallRecord | None,
    *,
    waiting: bool = False,
    just_called: bool = False,
) -> None:
    """The view of `tool` for the call `record`, with a tab that says what the view may do.

    With no `record`, the view is loaded ahead of the call (its document is drawn by the time the person
    presses Call); while `waiting`, the call runs. The same key in the same place keeps the frame from
    run to run, so it is only sent the call's input, then its result.
    """
    uri = tool_view_uri(tool)
    if uri is None:
        return
    if just_called and (server, tool.name) in AHEAD_VIEWS.get({}):
        # Drawn as it was loaded ahead: the same data, so the browser's cache spares Streamlit sending
        # the whole document again while the call runs; the next run brings the input (and the result).
        record = None
    if record is not None and not waiting and record.result is None:
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
            key=_call_key(record) if record is not None else _ahead_key(server, tool.name),
            host=session_host(server, client, connection.registry()),
            tool=tool,
            arguments=record.arguments if record is not None else None,
            result=None if waiting or record is None else record.result,
        )
        if record is None and not just_called:
            st.caption("The view is loaded ahead; it shows the result when you call the tool.")
        elif waiting or just_called:
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
