"""The real app in Chromium: a conversation deleted in another tab, then a send from this one."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fixtures.browser import StreamlitApp, open_app, screenshot
from yiem.store import ConversationStore, create_store_engine
from yiem.types import TextContent, UserMessage

pytestmark = [pytest.mark.browser]

CHAT_INPUT = '[data-testid="stChatInputTextArea"]'


def _wait_idle(page: Any) -> None:
    # Streamlit's status widget ("Running…") is shown while the script runs.
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="detached")


def test_a_send_to_a_conversation_deleted_in_another_tab_keeps_the_prompt(
    streamlit_app: StreamlitApp, page: Any, chromium: Any
) -> None:
    store = ConversationStore(create_store_engine(streamlit_app.database_url))
    conversation = store.create(title="Soon deleted")
    store.append_message(conversation.id, UserMessage(content=[TextContent(text="an earlier question")]))
    open_app(page, f"{streamlit_app.url}/?c={conversation.id}")
    page.get_by_text("an earlier question").wait_for()
    _wait_idle(page)

    # The other tab: the same conversation deleted from its sidebar.
    other = chromium.new_context(viewport={"width": 1280, "height": 900})
    try:
        tab = other.new_page()
        open_app(tab, f"{streamlit_app.url}/?c={conversation.id}")
        tab.get_by_text("an earlier question").wait_for()
        _wait_idle(tab)
        delete = tab.locator(f".st-key-delete-{conversation.id} button")
        for _attempt in range(5):  # a click during a rerun can be lost: open the menu until it shows
            if delete.is_visible():
                break
            tab.locator(f'[data-testid="stSidebar"] .st-key-menu-{conversation.id} button').click()
            _wait_idle(tab)
        delete.click()
        tab.locator(".st-key-confirm-delete button").click()
        tab.locator(f".st-key-open-{conversation.id}").wait_for(state="detached")
    finally:
        other.close()
    assert not store.exists(conversation.id)

    box = page.locator(CHAT_INPUT)
    box.fill("my unsent follow-up")
    box.press("Enter")
    page.get_by_text("This conversation no longer exists").wait_for()
    page.wait_for_function(
        "sel => document.querySelector(sel)?.value === 'my unsent follow-up'", arg=CHAT_INPUT
    )
    screenshot(page, "store-error-deleted-conversation")
    assert "This app has encountered an error" not in page.content()
    assert page.locator(CHAT_INPUT).input_value() == "my unsent follow-up"
