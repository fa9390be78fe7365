"""The Log tab: the server's log level and log stream (filterable), and its protocol log (exportable)."""

from __future__ import annotations

import streamlit as st

from ui.tools import connect as connection
from yiem.explorer import (
    LOG_LEVELS,
    describe_error,
    filter_events,
    notification_words,
    protocol_log_json,
    protocol_rows,
)
from yiem.mcp import McpClient, McpError


def draw_log(server: str, client: McpClient) -> None:
    _draw_log_stream(server, client)
    st.divider()
    _draw_protocol_log(server, client)


def _draw_log_stream(server: str, client: McpClient) -> None:
    st.markdown("**Log messages and notifications**")
    if "logging" in client.capabilities:
        cols = st.columns([2, 1], vertical_alignment="bottom")
        level = cols[0].selectbox(
            "Server log level",
            LOG_LEVELS,
            index=LOG_LEVELS.index("info"),
            key=f"tools-log-level:{server}",
            help="Asks the server to send log messages at this level and above (logging/setLevel).",
        )
        if cols[1].button("Set level", key=f"tools-log-set:{server}"):
            try:
                client.set_logging_level(level)
                st.toast(f"{server} now sends {level} and above.")
            except McpError as error:
                st.error(f"Setting the level failed: {describe_error(error)}")
    else:
        st.caption(f"{server} does not offer a log level (no logging capability).")
    events = connection.watch(server, client)
    cols = st.columns([1, 2, 1], vertical_alignment="bottom")
    shown_level = cols[0].selectbox("Show from", LOG_LEVELS, key=f"tools-log-show:{server}")
    needle = cols[1].text_input("Filter", key=f"tools-log-filter:{server}", placeholder="text in the line")
    logs_only = cols[2].toggle("Log messages only", key=f"tools-log-only:{server}")
    kept = filter_events(events.recent(200), shown_level, needle, logs_only)
    st.button("Update", key=f"tools-log-update:{server}", icon=":material/refresh:")
    if not kept:
        st.caption("Nothing yet." if not len(events) else "No line matches.")
        return
    lines = [f"{when:%H:%M:%S} {notification_words(event)}" for when, event in kept]
    st.code("\n".join(lines), language=None)


def _draw_protocol_log(server: str, client: McpClient) -> None:
    entries = client.protocol_log
    st.markdown(
        f"**Protocol log** ({len(entries)} messages, newest first) · protocol revision "
        f"**{client.protocol_version}**"
    )
    cols = st.columns([3, 1], vertical_alignment="bottom")
    needle = cols[0].text_input(
        "Search messages", key=f"tools-protocol-filter:{server}", placeholder="method, id or any text"
    )
    cols[1].download_button(
        "Export JSON",
        protocol_log_json(server, entries, client.protocol_version),
        file_name=f"yiem-mcp-{server}-protocol.json",
        mime="application/json",
        icon=":material/download:",
        key=f"tools-protocol-export:{server}",
    )
    rows = protocol_rows(entries, needle, limit=300)
    if rows:
        st.dataframe(rows, hide_index=True, width="stretch")
    else:
        st.caption("No message matches.")
