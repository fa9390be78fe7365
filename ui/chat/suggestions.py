"""The empty chat of a person with no conversation yet: what Chat is for and three prompts to send."""

from __future__ import annotations

import streamlit as st

from ui import bootstrap
from ui.state import ENABLED_TOOLS, PENDING
from yiem.chat import ChatSession, chat_suggestions, user_message
from yiem.model_setup import calls_tools
from yiem.store import StoreError


def _send(text: str) -> None:
    PENDING.set(user_message(text))  # the page's one way in sends it on the next run


def _first_run(chat: ChatSession) -> bool:
    if chat.messages or chat.conversation_id:
        return False
    try:
        return not chat.store.list_conversations(limit=1)
    except StoreError:
        return False


def draw(chat: ChatSession) -> None:
    """On a first run only: the sentence, the suggested prompts as buttons, and the tool note."""
    if not _first_run(chat):
        return
    offered = chat_suggestions(calls_tools(bootstrap.settings().provider), set(ENABLED_TOOLS.get() or set()))
    st.info(offered.intro, icon=":material/chat:")
    for index, (column, text) in enumerate(
        zip(st.columns(len(offered.prompts)), offered.prompts, strict=True)
    ):
        column.button(
            text, key=f"chat_suggestion_{index}", icon=":material/lightbulb:", on_click=_send, args=(text,)
        )
    if offered.note:
        st.caption(offered.note)
