"""yiem's browser app: Chat, Costs and Tools over one session of store, models and MCP tools."""

import streamlit as st

import bootstrap

st.set_page_config(page_title="yiem", page_icon=":material/forum:", layout="wide")
bootstrap.ensure_session()

page = st.navigation(
    [
        st.Page("pages/chat.py", title="Chat", icon=":material/chat:", default=True),
        st.Page("pages/costs.py", title="Costs", icon=":material/payments:"),
        st.Page("pages/tools.py", title="Tools", icon=":material/build:"),
    ],
    position="top",
)
page.run()
