"""A server's questions: an elicitation form or link, and sampling approval, on the Tools page and
inline in Chat while a tool waits.

The server's request waits (on the client's thread) until the person answers here.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from ui import bootstrap
from ui.state import (
    AGREED_URLS,
    MCP_QUESTIONS,
    QUESTIONS_DRAWN,
    SAMPLING_CONVERSATIONS,
    SAMPLING_REPLIES,
    STORE,
    FormKeys,
)
from ui.tool_form import draw_form, form_arguments
from yiem.explorer import (
    ServerQuestion,
    ServerQuestions,
    ToolForm,
    UnusableSchemaError,
    count_sampling,
    model_hints,
    sample_reply,
    sampling_messages,
    sampling_result,
)
from yiem.mcp import ElicitationResult, SamplingRequest
from yiem.model_setup import ModelSettingsError, connect
from yiem.providers.presets import PRESETS
from yiem.safe_markdown import safe_markdown
from yiem.types import AnyAssistantMessage, LlmModel


def new_questions(server: str) -> bool:
    """Whether `server` asked something the page has not drawn yet (a running call polls this)."""
    drawn: set[str] = QUESTIONS_DRAWN.get(set())
    return any(question.id not in drawn for question in server_questions().pending(server))


def server_questions() -> ServerQuestions:
    """This session's open questions from every server (created with the session)."""
    found = MCP_QUESTIONS.setdefault(ServerQuestions)
    return found


def draw_questions(server: str) -> None:
    """Each open question of `server`, with the buttons that answer it."""
    pending = server_questions().pending(server)
    QUESTIONS_DRAWN.set({question.id for question in pending})
    for question in pending:
        with st.container(border=True, key=f"tools-question-{question.id}"):
            draw_question(question)
    draw_agreed_links()


def draw_question(question: ServerQuestion) -> None:
    """One question with the buttons that answer it (the Tools page's, and Chat's while a tool waits)."""
    if question.kind == "elicitation":
        _draw_elicitation(question)
    else:
        _draw_sampling(question)


def _draw_elicitation(question: ServerQuestion) -> None:
    request = question.elicitation
    st.markdown(f":material/help: **{question.server} asks:** {safe_markdown(request.message)}")
    decline, cancel = "Decline", "Cancel"
    if request.mode == "url":
        st.caption("The server asks you to open this link (check where it goes before you agree):")
        st.code(request.url or "", language=None)
        cols = st.columns(3)
        if cols[0].button("Agree and open", type="primary", key=f"q-accept-{question.id}"):
            AGREED_URLS.setdefault(list).append(request.url or "")
            _answer(question, ElicitationResult(action="accept"))
    else:
        try:
            form = ToolForm(request.requested_schema)
        except UnusableSchemaError as error:
            st.warning(f"The server's form cannot be drawn ({error}); answer in JSON.")
            form = ToolForm(None)
        keys = FormKeys(f"elicit:{question.id}")
        draw_form(form, keys, what="question")
        cols = st.columns(3)
        if cols[0].button("Accept", type="primary", key=f"q-accept-{question.id}"):
            content = form_arguments(form, keys)
            if content is not None:
                _answer(question, ElicitationResult(action="accept", content=content))
            else:
                st.rerun()
    if cols[1].button(decline, key=f"q-decline-{question.id}"):
        _answer(question, ElicitationResult(action="decline"))
    if cols[2].button(cancel, key=f"q-cancel-{question.id}"):
        _answer(question, ElicitationResult(action="cancel"))


def _answer(question: ServerQuestion, result: ElicitationResult) -> None:
    question.answer(result)
    st.rerun()


def draw_agreed_links() -> None:
    """The links the person agreed to open, each until they say they are done."""
    urls: list[str] = AGREED_URLS.get([])
    for index, url in enumerate(list(urls)):
        cols = st.columns([4, 1], vertical_alignment="center")
        cols[0].link_button(f"Open {url}", url, icon=":material/open_in_new:")
        if cols[1].button("Done", key=f"q-link-done-{index}"):
            urls.remove(url)
            st.rerun()


def _draw_sampling(question: ServerQuestion) -> None:
    request = question.sampling
    prefix = f"sample:{question.id}"
    chat_settings = bootstrap.settings()
    settings = chat_settings.for_sampling()
    whose = "the chat's model" if chat_settings.sampling is None else "chosen for sampling"
    label = PRESETS[settings.provider].label if settings.provider in PRESETS else settings.provider
    st.markdown(f"**{question.server} asks to use your model**")
    st.caption(
        f"{model_hints(request)} · up to {request.max_tokens} tokens · answered by {label} "
        f"`{settings.model_id or settings.provider}` ({whose}, set in the Chat page's Settings)"
    )
    system = st.text_area("System prompt", request.system_prompt or "", key=f"{prefix}:system")
    texts = []
    for index, message in enumerate(sampling_messages(request)):
        role = "user" if message.role == "user" else "assistant"
        original = _user_text(message)
        texts.append(st.text_area(f"Message {index + 1} ({role})", original, key=f"{prefix}:message:{index}"))
    max_tokens = st.number_input(
        "Max tokens", min_value=1, max_value=32_000, value=request.max_tokens, key=f"{prefix}:max"
    )
    replies: dict[str, tuple[AnyAssistantMessage, LlmModel]] = SAMPLING_REPLIES.setdefault(dict)
    cols = st.columns(3)
    if cols[0].button("Generate reply", type="primary", key=f"{prefix}:generate"):
        edited = _edited(request, system, texts, int(max_tokens))
        try:
            client, model = connect(settings, bootstrap.secret)
        except ModelSettingsError as error:
            st.error(str(error))
            return
        with st.spinner(f"{model.id} is writing the reply…"):
            reply = sample_reply(edited, client, model)
        replies[question.id] = (reply, model)
        _count_usage(question.server, edited, reply, model)
    if cols[1].button("Decline", key=f"{prefix}:decline"):
        replies.pop(question.id, None)
        question.refuse("The person declined to let the server use the model.")
        st.rerun()
    found = replies.get(question.id)
    if found is None:
        return
    reply, model = found
    if reply.stop_reason == "error":
        st.error(f"The model failed: {reply.error_message}")
        return
    text = st.text_area("Reply (you may edit it before it goes back)", reply.text, key=f"{prefix}:reply")
    if st.button("Send reply", type="primary", key=f"{prefix}:send"):
        replies.pop(question.id, None)
        question.answer(sampling_result(text, reply, model))
        st.rerun()


def _user_text(message: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in message.content if hasattr(block, "text"))


def _edited(request: SamplingRequest, system: str, texts: list[str], max_tokens: int) -> SamplingRequest:
    messages = [
        {**raw, "content": {"type": "text", "text": text}}
        for raw, text in zip(request.messages, texts, strict=True)
    ]
    return request.model_copy(
        update={"system_prompt": system or None, "messages": messages, "max_tokens": max_tokens}
    )


def _count_usage(server: str, request: SamplingRequest, reply: AnyAssistantMessage, model: LlmModel) -> None:
    """The reply's usage goes to the Costs page under the server (a conversation named for it)."""
    conversations: dict[str, str] = SAMPLING_CONVERSATIONS.setdefault(dict)
    store = STORE()
    conversations[server] = count_sampling(store, server, request, reply, model, conversations.get(server))
