"""Above the chat input: documents to attach to the next message, each with its size in tokens, or why
it cannot be sent. They go with the next message sent, then the box is empty again."""

from __future__ import annotations

from typing import Any

import streamlit as st

from ui.chat import agent as chat_agent
from yiem.budgets import tokens_by_characters
from yiem.chat import (
    DOCUMENT_SUFFIXES,
    Document,
    DocumentError,
    read_document,
    token_counter,
    too_large,
    with_documents,
)
from yiem.types import LlmModel, UserMessage

ROUND_KEY = "yiem_attach_round"  # bumped once a message took the documents: the next box is empty
READ_KEY = "yiem_attach_read"  # file id -> Document or the words why it cannot be read (read once)
READY_KEY = "yiem_attach_ready"  # the documents of this run that can be sent
TAKEN_KEY = "yiem_attach_taken"  # this run's message took them


def _read(file: Any) -> Document | str:
    cache: dict[str, Document | str] = st.session_state.setdefault(READ_KEY, {})
    if file.file_id not in cache:
        try:
            cache[file.file_id] = read_document(file.name, file.getvalue())
        except DocumentError as error:
            cache[file.file_id] = str(error)
    return cache[file.file_id]


def _tokens(document: Document, model: LlmModel | None) -> tuple[int, str]:
    """The document's tokens by the model's own count (the embedded model's tokenizer), and the words."""
    if model is None:  # the embedded model has not started yet: counted by characters meanwhile
        tokens = tokens_by_characters(document.text)
        return tokens, f"about {tokens:,} tokens (estimated until the model has started)"
    key = ("tokens", document.name, len(document.text), model.provider, model.base_url)
    cache: dict[Any, Any] = st.session_state.setdefault(READ_KEY, {})
    if key not in cache:
        cache[key] = token_counter(model)(document.text)
    tokens = int(cache[key])
    return tokens, f"{tokens:,} tokens"


def draw() -> str:
    """The attach box and each file's size or problem; returns the text the ready documents add."""
    st.session_state.pop(TAKEN_KEY, None)  # a send refused last run left it: this run decides anew
    ready: list[Document] = []
    model = chat_agent.current_model()
    uploader = f"attach-{st.session_state.get(ROUND_KEY, 0)}"
    # Open while it holds files: a rerun that redraws the box must not hide a file's problem in it.
    with st.expander(
        "Attach documents", icon=":material/attach_file:", expanded=bool(st.session_state.get(uploader))
    ):
        files: Any = st.file_uploader(
            "PDF, text, Markdown, CSV or JSON: their text goes with your next message",
            type=list(DOCUMENT_SUFFIXES),
            accept_multiple_files=True,
            key=uploader,
        )
        for file in files or []:
            found = _read(file)
            if isinstance(found, str):
                st.error(found, icon=":material/error:")
                continue
            tokens, words = _tokens(found, model)
            refused = too_large(found, tokens, model.context_window) if model is not None else None
            if refused:
                st.error(refused, icon=":material/error:")
                continue
            st.caption(f":material/description: {found.name}: {words}")
            ready.append(found)
    st.session_state[READY_KEY] = ready
    return "\n".join(document.text for document in ready)


def attach(message: UserMessage) -> UserMessage:
    """`message` with the documents drawn in this run, each as a text block naming its file."""
    documents: list[Document] = st.session_state.get(READY_KEY, [])
    if not documents:
        return message
    st.session_state[TAKEN_KEY] = True
    return with_documents(message, documents)


def sent() -> None:
    """Once the message is on its way: if it took the documents, the next run's box starts empty."""
    if st.session_state.pop(TAKEN_KEY, False):
        st.session_state[ROUND_KEY] = st.session_state.get(ROUND_KEY, 0) + 1
        st.session_state[READY_KEY] = []
