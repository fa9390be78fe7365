"""The Chat page's stored conversation: messages, tool calls and their results, Edit and Regenerate."""

from __future__ import annotations

import streamlit as st

from ui import avatars, bootstrap
from ui.chat import settings as chat_settings
from ui.chat.up_to_here import draw_up_to_here
from ui.chat.views import draw_chat_view
from ui.clipboard import copy_button, listen_for_copies
from ui.messages import draw_blocks, draw_tool_call, draw_tool_result, tool_results_by_call
from ui.review_form import draw_reply_review, reply_reviews
from ui.state import EDITING, HISTORY_SHOWN, NOTICE, PENDING, REGEN_MODEL
from ui.timeline import draw_timeline
from yiem.chat import (
    ChatSession,
    ChatSessionError,
    Document,
    document_in,
    history_start,
    reply_caption,
    typed_text,
    user_message,
    with_documents,
)
from yiem.reply_timeline import reply_ranges
from yiem.safe_markdown import safe_markdown
from yiem.store import StoreError
from yiem.types import (
    AssistantMessage,
    AssistantMessageToolCall,
    ImageContent,
    TextContent,
    UserMessage,
)

# Messages drawn before "Show earlier messages"; each click shows this many more.
HISTORY_PAGE = 40


def draw_failure(message: AssistantMessage | AssistantMessageToolCall) -> None:
    if message.stop_reason == "aborted":
        st.warning("Stopped. The reply so far is kept.", icon=":material/stop_circle:")
    elif message.error_message:
        st.error(safe_markdown(message.error_message))


def _history_limit(chat: ChatSession) -> int:
    shown: tuple[str | None, int] | None = HISTORY_SHOWN.get()
    return shown[1] if shown and shown[0] == chat.conversation_id else HISTORY_PAGE


def _show_earlier(chat: ChatSession, start: int) -> None:
    HISTORY_SHOWN.set((chat.conversation_id, len(chat.messages) - start + HISTORY_PAGE))


def draw_history(chat: ChatSession) -> None:
    """The conversation's latest turns, each prompt with its Edit control, and Regenerate."""
    # Only the latest turns are drawn until earlier ones are asked for, so a rerun of a long
    # conversation costs what its last page costs.
    listen_for_copies()  # for the Copy buttons below and the live reply's
    _fork_origin(chat)
    start = history_start(chat.messages, _history_limit(chat))
    if start:
        st.button(
            f"Show earlier messages ({start} hidden)",
            icon=":material/expand_less:",
            key="show-earlier",
            type="tertiary",
            on_click=_show_earlier,
            args=(chat, start),
        )
    shown = chat.messages[start:]
    results = tool_results_by_call(shown)
    replies = reply_ranges(shown, start)  # each reply's Timeline goes under its last assistant message
    asked = {call.id for m in shown if isinstance(m, AssistantMessageToolCall) for call in m.tool_calls}
    last_prompt = max((i for i, m in enumerate(chat.messages) if isinstance(m, UserMessage)), default=-1)
    reviews = {} if chat.temporary else reply_reviews("chat", chat.conversation_id)
    for index, message in enumerate(shown, start):
        if isinstance(message, UserMessage):
            with st.chat_message("user", avatar=avatars.USER):
                draw_blocks(message.content)
                _alternatives(chat, index)
                _edit_control(chat, index, message)
        elif isinstance(message, AssistantMessage | AssistantMessageToolCall):
            with st.chat_message("assistant", avatar=avatars.ASSISTANT):
                _alternatives(chat, index)
                draw_blocks(message.content)
                if isinstance(message, AssistantMessageToolCall):
                    for call in message.tool_calls:
                        draw_tool_call(call, results.get(call.id), copyable=True)
                        draw_chat_view(call, results.get(call.id), key=f"chat-view-{call.id}")
                draw_failure(message)
                st.caption(reply_caption(message))
                if message.text:
                    copy_button(message.text, "Copy reply")
                if index in replies:
                    first, end = replies[index]
                    draw_timeline(chat.messages[first:end], key=f"timeline-{chat.conversation_id}-{index}")
                if index in replies and not chat.temporary:  # a temporary chat has nothing stored to copy
                    st.button(
                        "New chat from here",
                        icon=":material/fork_right:",
                        key=f"fork-{chat.conversation_id}-{index}",
                        type="tertiary",
                        help="Copies the conversation up to this reply into a new chat; this one stays.",
                        on_click=_fork,
                        args=(chat, index),
                    )
                    draw_up_to_here(chat, index)
                if index in replies and not chat.temporary:
                    draw_reply_review("chat", chat.conversation_id, str(chat.message_ids[index]), reviews)
        elif message.tool_call_id not in asked:
            with st.chat_message("assistant", avatar=avatars.TOOL):
                draw_tool_result(message, copyable=True)
    if last_prompt >= 0 and not PENDING.get():
        with st.container(horizontal=True):
            if st.button(
                "Regenerate the last reply",
                icon=":material/refresh:",
                key="regenerate",
                help="Adds another answer beside this one (both are kept), from the model and settings "
                "now chosen in the sidebar's Settings.",
            ):
                _queue_resend(chat, last_prompt, None)
                st.rerun()
            _regenerate_with(chat, last_prompt)


def _regenerate_with(chat: ChatSession, last_prompt: int) -> None:
    choices = chat_settings.model_choices()
    if len(choices) < 2:
        return  # one model only: the other settings are changed in Settings, then Regenerate
    current = bootstrap.settings().model_id
    with st.popover("Regenerate with…", icon=":material/alt_route:"):
        st.selectbox(
            "Model for the new answer (and the next messages)",
            choices,
            index=choices.index(current) if current in choices else 0,
            key=REGEN_MODEL.name,
        )
        st.button(
            "Regenerate",
            key="regen-with",
            on_click=_regenerate_with_model,
            args=(chat, last_prompt),
        )


def _regenerate_with_model(chat: ChatSession, last_prompt: int) -> None:
    chat_settings.use_model(str(REGEN_MODEL()))
    _queue_resend(chat, last_prompt, None)


def _alternatives(chat: ChatSession, index: int) -> None:
    # Only a message with siblings gets controls, so a conversation without branches draws no more.
    siblings = chat.siblings[index] if index < len(chat.siblings) else ()
    if len(siblings) < 2:
        return
    at = siblings.index(chat.message_ids[index])
    where = f"{chat.conversation_id}-{index}"
    with st.container(horizontal=True, vertical_alignment="center", gap="small"):
        st.button(
            "Previous",
            icon=":material/chevron_left:",
            help="The previous alternative of this message",
            key=f"alt-prev-{where}",
            type="tertiary",
            disabled=at == 0,
            on_click=_switch,
            args=(chat, siblings[at - 1]),
        )
        st.caption(f"{at + 1} / {len(siblings)}", width="content")
        st.button(
            "Next",
            icon=":material/chevron_right:",
            icon_position="right",
            help="The next alternative of this message",
            key=f"alt-next-{where}",
            type="tertiary",
            disabled=at == len(siblings) - 1,
            on_click=_switch,
            args=(chat, siblings[min(at + 1, len(siblings) - 1)]),
        )
        message = chat.messages[index]
        if isinstance(message, AssistantMessage | AssistantMessageToolCall) and message.model:
            # Alternatives may come from different models ("Regenerate with…"): say which this is.
            st.caption(f"by {message.model}", width="content")


def _fork_origin(chat: ChatSession) -> None:
    origin = chat.conversation.forked_from if chat.conversation else None
    if origin is None:
        return
    try:
        title = chat.store.get(origin).title
    except StoreError:
        st.caption(":material/fork_right: Started from a conversation that has since been deleted.")
        return
    st.button(
        f"Started from “{title}”: open it",
        icon=":material/fork_right:",
        key="fork-origin",
        type="tertiary",
        on_click=st.query_params.__setitem__,
        args=("c", origin),
    )


def _switch(chat: ChatSession, message_id: int) -> None:
    try:
        chat.switch_to(message_id)
    except StoreError as error:
        NOTICE.set(str(error))


def _fork(chat: ChatSession, index: int) -> None:
    # The page's URL follows the open conversation on the rerun after this callback.
    try:
        fork = chat.fork(index)
    except (ChatSessionError, StoreError) as error:
        NOTICE.set(str(error))
        return
    st.query_params["c"] = fork.id


def _edit_control(chat: ChatSession, index: int, message: UserMessage) -> None:
    # Keys name the conversation too: a keyed widget keeps its text, which must not leak between chats.
    where = f"{chat.conversation_id}-{index}"
    if EDITING.get() != where:
        # One cheap button per prompt; the text area exists only for the prompt being edited, so a
        # rerun does not carry a keyed text area (and its text) for every prompt of the conversation.
        st.button(
            "Edit",
            icon=":material/edit:",
            key=f"edit-{where}",
            type="tertiary",
            on_click=EDITING.set,
            args=(where,),
        )
        return
    text = typed_text(message)  # attached documents go with the new version as they are
    new_text = st.text_area("Your message", value=text, key=f"edit-text-{where}")
    with st.container(horizontal=True):
        send = st.button(
            "Send from here",
            key=f"edit-send-{where}",
            help="Sent as another version of this message; the first one and its replies are kept.",
        )
        st.button("Cancel", key=f"edit-cancel-{where}", on_click=EDITING.clear)
    if send:
        EDITING.pop()
        _queue_resend(chat, index, new_text)
        st.rerun()


def _document(block: object) -> Document | None:
    return document_in(block) if isinstance(block, TextContent) else None


def _queue_resend(chat: ChatSession, index: int, new_text: str | None) -> None:
    try:
        prompt = chat.regenerate(index) if new_text is None else chat.rewind_to(index)
    except (ChatSessionError, StoreError) as error:
        NOTICE.set(str(error))
        return
    images = [block for block in prompt.content if isinstance(block, ImageContent)]
    if new_text is None:
        PENDING.set(prompt)
    else:
        documents = [found for block in prompt.content if (found := _document(block)) is not None]
        PENDING.set(with_documents(user_message(new_text, images), documents))
