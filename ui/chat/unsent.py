"""A prompt the store could not save: the page says why and puts its text back in the chat input."""

from __future__ import annotations

import streamlit as st

from ui.state import NOTICE, UNSENT, widget
from yiem.chat import ChatSession, typed_text
from yiem.store import ConversationNotFoundError, StoreError
from yiem.types import ImageContent, UserMessage


def keep_unsent(chat: ChatSession, prompt: UserMessage, error: StoreError) -> None:
    """Say why `prompt` was not saved and keep its text for the input; a deleted conversation gives way
    to a new chat, where sending it again starts one."""
    images = any(isinstance(block, ImageContent) for block in prompt.content)
    again = " Attach the images again." if images else ""
    if typed_text(prompt) != prompt.text:  # its attached documents' text is not put in the box
        again += " Attach the documents again."
    if isinstance(error, ConversationNotFoundError):
        chat.new()
        st.query_params.pop("c", None)
        after = "It is back in the box below: send it to start a new chat with it."
    else:
        after = "It is back in the box below: send it again once the problem is solved."
    NOTICE.set(f"{error} Your message was not sent. {after}{again}")
    UNSENT.set(typed_text(prompt))


def restore_input(input_key: str) -> None:
    """Put a kept prompt's text into the chat input `input_key` (call before drawing the input)."""
    unsent = UNSENT.pop()
    if unsent is not None:
        widget(input_key).set(unsent)


def reply_not_saved(chat: ChatSession, prompt: UserMessage, error: StoreError) -> None:
    """A message of the run could not be saved: the prompt is kept in the input if its conversation
    is gone, else it stays saved and can be answered again."""
    if isinstance(error, ConversationNotFoundError):
        keep_unsent(chat, prompt, error)
    else:
        NOTICE.set(f"{error} Your message is saved: press Regenerate to ask again.")
