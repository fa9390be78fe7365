"""The Chat page: conversations in the sidebar, streamed replies, tool calls, costs, export."""

from __future__ import annotations

import base64
from typing import Any

import streamlit as st

from ui import bootstrap
from ui.chat import agent as chat_agent
from ui.chat import budget as chat_budget
from ui.chat import context as chat_context
from ui.chat import documents as chat_documents
from ui.chat import history, live
from ui.chat import library as chat_library
from ui.chat import settings as chat_settings
from ui.chat import sidebar as chat_sidebar
from ui.chat import suggestions as chat_suggestions
from ui.chat import unsent as chat_unsent
from yiem.chat import LOCAL, ChatSession, conversation_setup, user_message
from yiem.store import ConversationNotFoundError, StoreError
from yiem.types import ImageContent, UserMessage

bootstrap.ensure_session()
chat: ChatSession = st.session_state["chat"]


def _open_from_url() -> None:
    # The URL names the conversation, so a reload or a shared link reopens it.
    wanted = st.query_params.get("c")
    if wanted and wanted != chat.conversation_id:
        try:
            chat.open(wanted)
        except ConversationNotFoundError:
            st.warning(
                "That conversation no longer exists or is not yours to open; here is a new chat instead."
            )
            del st.query_params["c"]
            chat.new()
        except StoreError as error:
            st.error(f"That conversation could not be loaded: {error}")
            chat.new()
        if chat.conversation is not None:
            # Each conversation goes on with its own setup, so its next send does not overwrite it.
            enabled = st.session_state.get("enabled_tools", set())
            chat_settings.restore(conversation_setup(chat.conversation, bootstrap.settings(), enabled))
    elif not wanted and chat.conversation_id:
        chat.new()


_open_from_url()
chat_sidebar.draw(chat)


def _show_conversation_in_url() -> None:
    if chat.conversation_id and st.query_params.get("c") != chat.conversation_id:
        st.query_params["c"] = chat.conversation_id


def _model_line() -> None:
    settings = bootstrap.settings()
    if note := chat_agent.tools_note():
        st.caption(f":material/build: {note}")
    if st.session_state.get(chat_agent.OVERRIDE_KEY) is not None:
        return
    if settings.provider == LOCAL:
        st.caption(
            "Chatting with SmolLM2 135M, a toy model running on this machine: no key, no internet, "
            "and often wrong. Pick another provider in the sidebar's Settings."
        )
    else:
        st.caption(f"Chatting with {settings.model_id or 'no model yet'} ({settings.provider}).")


_model_line()
history.draw_history(chat)
chat_suggestions.draw(chat)  # a first run's empty chat: what it is for, and prompts to send

if notice := st.session_state.pop("yiem_notice", None):
    st.error(notice)
chat_budget.draw_warning()

attached = chat_documents.draw()  # documents for the next message, each with its tokens
chat_context.draw(chat, attached)  # the context gauge and the next send's cost, above the input
takes_images = chat_agent.accepts_images()
input_key = "prompt-images" if takes_images else "prompt"
chat_unsent.restore_input(input_key)  # a prompt the store refused goes back into the input
submitted: Any = st.chat_input(
    "Message (attach images with +)" if takes_images else "Message",
    key=input_key,
    submit_mode="stop",
    accept_file="multiple" if takes_images else False,
    file_type=["png", "jpg", "jpeg", "gif", "webp"] if takes_images else None,
)
submitted = chat_library.sent_prompt(submitted)  # a saved prompt sent from its form, as if typed
pending: UserMessage | None = st.session_state.pop("yiem_pending", None)
if isinstance(submitted, str) and submitted.strip():
    pending = chat_documents.attach(user_message(submitted))
elif submitted is not None:
    images = [
        ImageContent(data=base64.b64encode(file.getvalue()).decode(), mime_type=file.type or "image/png")
        for file in submitted.files
    ]
    if submitted.text.strip() or images:
        pending = chat_documents.attach(user_message(submitted.text, images))
if pending is not None:
    chat_context.refuse_if_full(chat, pending)  # a send that does not fit goes back into the input
    chat_documents.sent()
    live.run(chat, pending, _show_conversation_in_url)
live.resume(chat)  # a run whose tool waits for the person's answer goes on (ui.chat.questions)
