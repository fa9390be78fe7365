"""The Chat page: conversations in the sidebar, streamed replies, tool calls, costs, export."""

from __future__ import annotations

import streamlit as st

from ui import bootstrap
from ui.chat import agent as chat_agent
from ui.chat import budget as chat_budget
from ui.chat import context as chat_context
from ui.chat import documents as chat_documents
from ui.chat import history, live, prompt_in
from ui.chat import settings as chat_settings
from ui.chat import sidebar as chat_sidebar
from ui.chat import suggestions as chat_suggestions
from ui.state import CHAT, ENABLED_TOOLS, LLM_OVERRIDE, NOTICE
from yiem.chat import ChatSession, conversation_setup
from yiem.model_setup import LOCAL
from yiem.store import ConversationNotFoundError, StoreError

bootstrap.ensure_session()
chat: ChatSession = CHAT()


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
            enabled = ENABLED_TOOLS.get(set())
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
    if LLM_OVERRIDE.get() is not None:
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

if notice := NOTICE.pop():
    st.error(notice)
chat_budget.draw_warning()

attached = chat_documents.draw()  # documents for the next message, each with its tokens
chat_context.draw(chat, attached)  # the context gauge and the next send's cost, above the input
takes_images = chat_agent.accepts_images()
pending = prompt_in.draw_input(takes_images)
if pending is not None:
    chat_context.refuse_if_full(chat, pending)  # a send that does not fit goes back into the input
    chat_documents.sent()
    live.run(chat, pending, _show_conversation_in_url)
live.resume(chat)  # a run whose tool waits for the person's answer goes on (ui.chat.questions)
