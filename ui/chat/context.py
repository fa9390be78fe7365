"""Above the chat input: how full the context window is, what the next send costs, and a send refused
because it does not fit, with one-click ways out. The unsent text stays in the input."""

from __future__ import annotations

import streamlit as st

from ui import bootstrap
from ui.chat import agent as chat_agent
from ui.state import CONTEXT_COUNT, CONTEXT_REFUSED, NOTICE, UNSENT
from yiem.chat import (
    KEEP_FRACTION,
    ChatSession,
    context_gauge,
    conversation_tokens,
    expected_output,
    latest_turns_start,
    send_estimate,
    token_counter,
    typed_text,
)
from yiem.store import StoreError
from yiem.types import ImageContent, LlmModel, UserMessage

COLOURS = {"ok": "gray", "amber": "orange", "full": "red"}


def _tokens(chat: ChatSession, model: LlmModel, pending: str) -> int:
    system_prompt = bootstrap.settings().system_prompt
    last = chat.messages[-1].timestamp if chat.messages else None
    key: tuple[object, ...] = (chat.conversation_id, len(chat.messages), last, model.provider)
    key += (model.base_url, system_prompt, pending)
    cached = CONTEXT_COUNT.get()
    if cached is not None and cached[0] == key:
        return int(cached[1])
    # The embedded model's tokenizer is asked only here, when something to count has changed.
    count = token_counter(model)
    since = chat.conversation.created if chat.conversation else None
    tokens = conversation_tokens(chat.messages, system_prompt, count, since)
    tokens += count(pending) if pending else 0
    CONTEXT_COUNT.set((key, tokens))
    return tokens


def _refused_text(chat: ChatSession) -> str:
    refused = CONTEXT_REFUSED.get()
    return refused[1] if refused and refused[0] == chat.conversation_id else ""


def draw(chat: ChatSession, attached: str = "") -> None:
    """The gauge and the next send's cost (with the `attached` documents' text); when the window is
    full, what to do, as buttons."""
    model = chat_agent.current_model()
    if model is None:
        st.caption("The context gauge shows once the model has started (after the first message).")
        return
    pending = _refused_text(chat)
    tokens = _tokens(chat, model, "\n".join(text for text in (pending, attached) if text))
    gauge = context_gauge(tokens, model.context_window)
    if gauge.fraction is None:
        st.caption(f":material/data_usage: {gauge.words}")
    else:
        st.progress(min(gauge.fraction, 1.0))
        st.caption(f":{COLOURS[gauge.level]}[:material/data_usage: {gauge.words}]")
    settings = bootstrap.settings()
    output = expected_output(chat.messages, settings.max_tokens or model.max_tokens or None)
    estimate = send_estimate(tokens, output, model)
    st.caption(f":material/payments: {estimate.words}" + ("" if pending else "; your message adds its own."))
    if gauge.level == "full":
        _draw_ways_out(chat, model, pending)


def _draw_ways_out(chat: ChatSession, model: LlmModel, pending: str) -> None:
    with st.container(horizontal=True):
        new = st.button("Start a new chat", icon=":material/add_comment:", key="context-new")
        drop = st.button("Drop the oldest turns", icon=":material/content_cut:", key="context-drop")
    if new:
        chat.new()
        st.query_params.pop("c", None)
    elif drop:
        count = token_counter(model)
        budget = int(model.context_window * KEEP_FRACTION) - (count(pending) if pending else 0)
        start = latest_turns_start(chat.messages, count, budget)
        if start >= len(chat.messages):
            chat.new()
            st.query_params.pop("c", None)
            NOTICE.set(
                "Even the latest turn alone fills more than half of the context window, so this is a new "
                "chat instead; the old one is kept in the sidebar."
            )
        else:
            try:
                st.query_params["c"] = chat.continue_with_latest(start).id
            except StoreError as error:
                NOTICE.set(f"{error} Your message is back in the box below.")
    if new or drop:
        CONTEXT_REFUSED.pop()
        CONTEXT_COUNT.pop()
        UNSENT.set(pending)
        st.rerun()


def refuse_if_full(chat: ChatSession, prompt: UserMessage) -> None:
    """Refuse a send that would not fit the context window: its text goes back into the input, the
    page says what to do, and it is drawn again. Does nothing when it fits or the window is unknown."""
    model = chat_agent.current_model()
    if (
        model is None
        or context_gauge(_tokens(chat, model, prompt.text), model.context_window).level != "full"
    ):
        CONTEXT_REFUSED.pop()
        return
    # Only the typed text goes back: attached documents stay in their box, counted from there.
    text = typed_text(prompt)
    CONTEXT_REFUSED.set((chat.conversation_id, text))
    UNSENT.set(text)
    again = " Attach the images again." if any(isinstance(b, ImageContent) for b in prompt.content) else ""
    NOTICE.set(
        "Not sent: the conversation with your message no longer fits the model's context window. "
        "Your message is back in the box below; start a new chat or drop the oldest turns, then send "
        f"it.{again}"
    )
    st.rerun()
