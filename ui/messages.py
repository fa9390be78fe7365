"""Drawing parts more than one page shares: the link that opens a stored conversation in Chat."""

from __future__ import annotations

import streamlit as st


def continue_in_chat(conversation_id: str) -> None:
    """A link to Chat with this conversation open (a hidden one joins Chat's list once opened)."""
    st.page_link(
        "ui/pages/chat.py",
        label="Continue in Chat",
        icon=":material/chat:",
        query_params={"c": conversation_id},
    )
