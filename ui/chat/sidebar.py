"""The Chat page's sidebar: conversations (new, switch, search, rename, delete), settings, files."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import Any

import streamlit as st

from ui.chat import library as chat_library
from ui.chat import settings as chat_settings
from ui.state import DELETING, TEMPORARY_CHAT, TITLE_THREAD
from yiem.chat import ChatSession, Transcript, TranscriptError, export_json, export_markdown, import_json
from yiem.store import MATCH_END, MATCH_START, Conversation, StoreError


def _switch(chat: ChatSession, conversation_id: str | None) -> None:
    if conversation_id is None:
        chat.new()
        st.query_params.pop("c", None)
    else:
        st.query_params["c"] = conversation_id


def _toggle_temporary(chat: ChatSession) -> None:
    # Either way the chat starts afresh: a saved one is not turned temporary half-way, nor back.
    chat.new(temporary=bool(TEMPORARY_CHAT()))
    st.query_params.pop("c", None)


@st.fragment(run_every=1)
def _await_title() -> None:
    # The model writes the title after the reply is shown; the page is drawn again once it has.
    thread = TITLE_THREAD.get()
    if thread is None or not thread.is_alive():
        TITLE_THREAD.pop()
        st.rerun(scope="app")


def _forget_delete() -> None:
    DELETING.pop()


# The dialog is drawn from session state rather than from the button's click, so it survives the
# rerun its own buttons cause; closing it with Esc or × forgets the pending delete.
@st.dialog("Delete this conversation?", on_dismiss=_forget_delete)
def _confirm_delete(chat: ChatSession, conversation: Conversation) -> None:
    st.write(
        f"“{conversation.title or 'Untitled'}” and all its messages will be deleted. Its costs stay "
        "on the Costs page."
    )
    left, right = st.columns(2)
    if left.button("Delete", type="primary", key="confirm-delete"):
        try:
            chat.store.delete(conversation.id)
        except StoreError as error:
            st.error(str(error))
            return
        _forget_delete()
        if chat.conversation_id == conversation.id:
            _switch(chat, None)
        st.rerun()
    if right.button("Keep it", key="cancel-delete"):
        _forget_delete()
        st.rerun()


def _conversation_row(chat: ChatSession, conversation: Conversation) -> None:
    current = conversation.id == chat.conversation_id
    left, right = st.columns([5, 2], vertical_alignment="center")
    if left.button(
        conversation.title or "Untitled",
        key=f"open-{conversation.id}",
        type="primary" if current else "tertiary",
        width="stretch",
    ):
        _switch(chat, conversation.id)
        st.rerun()
    # A word, not only an icon: Streamlit hides icons from screen readers, so an icon-only button
    # would be announced with no name at all.
    with right.popover("Menu", type="tertiary", key=f"menu-{conversation.id}"):
        title = st.text_input("Title", value=conversation.title, key=f"title-{conversation.id}")
        if st.button("Rename", key=f"rename-{conversation.id}"):
            try:
                chat.store.rename(conversation.id, title.strip() or "Untitled")
                chat.reload()
            except StoreError as error:
                st.error(str(error))
            else:
                st.rerun()
        if st.button("Delete…", key=f"delete-{conversation.id}", icon=":material/delete:"):
            DELETING.set(conversation.id)
            st.rerun()


def _snippet(match: str) -> str:
    # Message text is shown as words, never as Markdown; only the matching words are made bold.
    plain = re.sub(r"([\\`*_{}\[\]()#+\-.!|<>~$:])", r"\\\1", " ".join(match.split()))
    return plain.replace(MATCH_START, "**").replace(MATCH_END, "**")


def _export(chat: ChatSession, export: Callable[[Transcript], str]) -> str:
    return export(chat.transcript())


def _files(chat: ChatSession) -> None:
    with st.expander("Export and import", icon=":material/import_export:"):
        if chat.messages:
            # Built only when clicked (a deferred download), the transcript too: reading every
            # alternative back from the store on each rerun cost more than drawing the page.
            title = chat.conversation.title if chat.conversation is not None else "New chat"
            stem = (title or "conversation").replace("/", "-")[:40]
            exports = (
                ("Export JSON", export_json, "json", "application/json"),
                ("Export Markdown", export_markdown, "md", "text/markdown"),
            )
            for label, export, suffix, mime in exports:
                st.download_button(
                    label,
                    partial(_export, chat, export),
                    f"{stem}.{suffix}",
                    mime,
                    key=f"export-{suffix}",
                    on_click="ignore",
                    icon=":material/download:",
                )
        upload: Any = st.file_uploader("Import a JSON export", type=["json"], key="import-file")
        if upload is not None and st.button("Import", key="import"):
            try:
                conversation = chat.import_transcript(import_json(upload.getvalue()))
            except TranscriptError as error:
                st.error(f"This file cannot be imported: {error}")
            except StoreError as error:
                st.error(f"The import could not be saved: {error}")
            else:
                st.query_params["c"] = conversation.id
                st.rerun()


def draw(chat: ChatSession) -> None:
    """Draw the whole sidebar for the Chat page."""
    with st.sidebar:
        if st.button("New chat", icon=":material/add:", key="new-chat", width="stretch"):
            _switch(chat, None)
            st.rerun()
        TEMPORARY_CHAT.set(chat.temporary)  # opening a conversation ends a temporary chat
        st.toggle(
            "Temporary chat",
            key=TEMPORARY_CHAT.name,
            on_change=_toggle_temporary,
            args=(chat,),
            help="A chat that is not saved: it is gone when you leave it or reload the page. "
            "What it costs still counts on the Costs page.",
        )
        if TITLE_THREAD.get() is not None:
            _await_title()
        search = st.text_input(
            "Search titles and messages",
            key="search",
            placeholder="Search titles and messages",
            label_visibility="collapsed",
        )
        try:
            found = chat.store.list_conversations(search)
        except StoreError as error:
            st.error(f"Conversations could not be listed: {error}")
            found = []
        if not found:
            st.caption("No conversations match." if search else "No conversations yet.")
        with st.container(height=320 if len(found) > 8 else "content", border=False):
            for conversation in found:
                _conversation_row(chat, conversation)
                if conversation.match:
                    st.caption(_snippet(conversation.match))
        _files(chat)
        chat_settings.draw()
        chat_library.draw()
    chat_library.draw_form()
    if chat.temporary:
        st.caption(
            ":material/visibility_off: Temporary chat: nothing of it is saved, and it is gone once you "
            "leave or reload. Its costs still count on the Costs page."
        )
    pending = DELETING.get()
    if pending:
        try:
            _confirm_delete(chat, chat.store.get(pending))
        except StoreError:
            _forget_delete()
