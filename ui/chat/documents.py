"""Above the chat input: documents to attach to the next message, each with its size in tokens, or why
it cannot be sent. They go with the next message sent, then the box is empty again."""

from __future__ import annotations

from typing import Any

import streamlit as st

from ui.chat import agent as chat_agent
from ui.state import ATTACH_READ, ATTACH_READY, ATTACH_ROUND, ATTACH_TAKEN, attach_box
from yiem.amounts import tokens as token_words
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


def _read(file: Any) -> Document | str:
    cache: dict[str, Document | str] = ATTACH_READ.setdefault(dict)
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
        return tokens, f"about {token_words(tokens)} tokens (estimated until the model has started)"
    key = ("tokens", document.name, len(document.text), model.provider, model.base_url)
    cache: dict[Any, Any] = ATTACH_READ.setdefault(dict)
    if key not in cache:
        cache[key] = token_counter(model)(document.text)
    tokens = int(cache[key])
    return tokens, f"{token_words(tokens)} tokens"


def draw() -> str:
    """The attach box and each file's size or problem; returns the text the ready documents add."""
    ATTACH_TAKEN.pop()  # a send refused last run left it: this run decides anew
    ready: list[Document] = []
    model = chat_agent.current_model()
    uploader = attach_box(ATTACH_ROUND.get(0))
    # Open while it holds files: a rerun that redraws the box must not hide a file's problem in it.
    with st.expander("Attach documents", icon=":material/attach_file:", expanded=bool(uploader.get())):
        files: Any = st.file_uploader(
            "PDF, text, Markdown, CSV or JSON: their text goes with your next message",
            type=list(DOCUMENT_SUFFIXES),
            accept_multiple_files=True,
            key=uploader.name,
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
    ATTACH_READY.set(ready)
    return "\n".join(document.text for document in ready)


def attach(message: UserMessage) -> UserMessage:
    """`message` with the documents drawn in this run, each as a text block naming its file."""
    documents: list[Document] = ATTACH_READY.get([])
    if not documents:
        return message
    ATTACH_TAKEN.set(True)
    return with_documents(message, documents)


def sent() -> None:
    """Once the message is on its way: if it took the documents, the next run's box starts empty."""
    if ATTACH_TAKEN.pop(False):
        ATTACH_ROUND.set(ATTACH_ROUND.get(0) + 1)
        ATTACH_READY.set([])
