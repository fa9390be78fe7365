"""yiem's browser app: Chat, Costs, Tools and Experiments over one session of store, models and MCP tools."""

from pathlib import Path

import streamlit as st

from ui import account, bootstrap
from yiem.store import StoreError

st.set_page_config(page_title="yiem", page_icon=":material/forum:", layout="wide")
st.html(Path(__file__).parent / "ui" / "contrast.css")  # style only: drawn nowhere, kept on every page
try:
    bootstrap.ensure_session()
except StoreError as error:
    # Without the store nothing can be saved, so say why in words and draw no page that would lose input.
    st.error(f"The conversation database cannot be opened: {error}")
    st.caption("Check YIEM_DATABASE_URL (or the folder ~/.local/share/yiem/), then reload this page.")
    st.stop()

account.draw_account(bootstrap.owner())
page = st.navigation(
    [
        st.Page("ui/pages/chat.py", title="Chat", icon=":material/chat:", default=True),
        st.Page("ui/pages/costs.py", title="Costs", icon=":material/payments:"),
        st.Page("ui/pages/tools.py", title="Tools", icon=":material/build:"),
        st.Page("ui/pages/experiments.py", title="Experiments", icon=":material/science:"),
        st.Page("ui/pages/compare.py", title="Compare", icon=":material/compare:"),
    ],
    position="top",
)
try:
    page.run()
except StoreError as error:
    # The database failed after start (locked, damaged, unreachable): say so in words on any page.
    st.error(str(error))
