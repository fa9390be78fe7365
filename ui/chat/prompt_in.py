"""The Chat page's one way in for a prompt: the input (text and images), a saved prompt sent from
the library, or a resend that Edit or Regenerate queued; each becomes the one message of this run."""

from __future__ import annotations

from typing import Any

import streamlit as st

from ui import messages
from ui.chat import documents as chat_documents
from ui.chat import unsent as chat_unsent
from ui.state import FILLED_PROMPT, PENDING
from yiem.chat import user_message
from yiem.types import UserMessage


def draw_input(takes_images: bool) -> UserMessage | None:
    """Draw the chat input; the message to send this run, or None when nothing came in."""
    input_key = "prompt-images" if takes_images else "prompt"
    chat_unsent.restore_input(input_key)  # a prompt the store refused goes back into the input
    submitted: Any = st.chat_input(
        "Message (attach images with +)" if takes_images else "Message",
        key=input_key,
        submit_mode="stop",
        accept_file="multiple" if takes_images else False,
        file_type=messages.IMAGE_TYPES if takes_images else None,
    )
    # A filled saved prompt is sent as if it had been typed, documents and all.
    text, images = messages.submitted_prompt(FILLED_PROMPT.pop() or submitted)
    queued = PENDING.pop()  # a resend keeps its own documents and images
    if text.strip() or images:
        return chat_documents.attach(user_message(text, images))
    return queued
