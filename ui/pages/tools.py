"""The Tools page: an MCP explorer. Connect to servers, try their tools, read resources and prompts."""

from __future__ import annotations

import streamlit as st

from ui import bootstrap
from ui.server_questions import draw_questions
from ui.state import TOOL_HISTORY, TOOLS_TAB
from ui.tools import connect as connection
from ui.tools.browse import draw_prompts, draw_resources
from ui.tools.calls import draw_history, draw_tools, finish_run
from ui.tools.checks import draw_checks
from ui.tools.log import draw_log
from ui.tools.templates import draw_templates

bootstrap.ensure_session()

st.title("Tools", anchor=False)
st.caption("Connect to MCP servers, try their tools, read their resources and prompts.")

finish_run()
server = connection.draw_connection_panel()

TABS = ["Tools", "Resources", "Prompts", "History", "Checks", "Log"]
if server is None:
    if TOOL_HISTORY.get():
        st.subheader("History", anchor=False)
        draw_history()
    st.stop()

client = connection.clients()[server]
draw_questions(server)
tools_tab, resources_tab, prompts_tab, history_tab, checks_tab, log_tab = st.tabs(
    TABS, key=TOOLS_TAB.name, on_change="rerun"
)
if tools_tab.open:
    with tools_tab:
        draw_tools(server, client)
if resources_tab.open:
    with resources_tab:
        draw_resources(client, server)
        draw_templates(client, server)
if prompts_tab.open:
    with prompts_tab:
        draw_prompts(client, server)
if history_tab.open:
    with history_tab:
        draw_history()
if checks_tab.open:
    with checks_tab:
        draw_checks()
if log_tab.open:
    with log_tab:
        draw_log(server, client)
