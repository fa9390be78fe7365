"""Spending limits at a Chat send: a refusal puts the prompt back in the input, a warning shows above it."""

from __future__ import annotations

import streamlit as st

from ui.state import BUDGET_WARNING, NOTICE, UNSENT
from yiem.chat import ChatSession
from yiem.types import ImageContent, LlmModel


def refused(chat: ChatSession, model: LlmModel, max_tokens: int | None) -> bool:
    """Check the saved prompt's send against the limits; when refused, take it back into the input."""
    checked = chat.check_budget(model, max_tokens)
    if checked.verdict == "warn":
        BUDGET_WARNING.set(checked.message)
    if checked.allowed:
        return False
    prompt = chat.withdraw_prompt()
    if chat.conversation is None:
        st.query_params.pop("c", None)
    again = " Attach the images again." if any(isinstance(b, ImageContent) for b in prompt.content) else ""
    NOTICE.set(f"{checked.message} Your message is back in the box below.{again}")
    UNSENT.set(prompt.text)
    return True


def draw_warning() -> None:
    """The last send's warning (a limit 80 % used, or a price unknown), once."""
    if warning := BUDGET_WARNING.pop():
        st.warning(warning, icon=":material/savings:")
