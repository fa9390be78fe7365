"""Alternatives and forks in a real Chromium with the embedded model (llama-server + SmolLM2).

Each step waits for the exact state it asserts (the counter's text, the reply's words, the URL).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.fixtures.browser import StreamlitApp, open_app, open_conversation_id, screenshot
from tests.ui.test_browser_chat import MESSAGES, _limit_replies, _send, _wait_for_words, _wait_idle, _words
from yiem.store import ConversationStore, create_store_engine
from yiem.types import AssistantMessage, UserMessage

pytestmark = [pytest.mark.browser, pytest.mark.llama]


def _click(page: Any, key: str) -> None:
    _wait_idle(page)  # a click during a rerun can be lost
    page.locator(f".st-key-{key} button:visible").click()  # a button with help is drawn twice, once hidden


def _counter(page: Any, text: str) -> None:
    expect(page.get_by_text(text, exact=True)).to_be_visible(timeout=120_000)
    _wait_idle(page)


def test_regenerate_twice_move_back_edit_and_fork(streamlit_app: StreamlitApp, page: Any) -> None:
    open_app(page, streamlit_app.url)
    _limit_replies(page, 12)
    _send(page, "Name a colour.")
    conversation_id = open_conversation_id(page)
    expect(page.get_by_text(re.compile(r"\d+ in · \d+ out")).first).to_be_visible(timeout=120_000)
    _click(page, "regenerate")
    _counter(page, "2 / 2")
    _click(page, "regenerate")
    _counter(page, "3 / 3")
    store = ConversationStore(create_store_engine(streamlit_app.database_url))
    tree = store.load_tree(conversation_id)
    assert [m.role for m in tree.messages] == ["user", "assistant", "assistant", "assistant"]
    assert tree.parents == [None, 0, 0, 0]
    first = tree.messages[1]
    assert isinstance(first, AssistantMessage)

    _click(page, f"alt-prev-{conversation_id}-1")
    _counter(page, "2 / 3")
    _click(page, f"alt-prev-{conversation_id}-1")
    _counter(page, "1 / 3")
    assert _words(first.text) <= _words(_wait_for_words(page, 1, _words(first.text)))
    screenshot(page, "chat-alternative-1-of-3")

    _click(page, f"edit-{conversation_id}-0")
    box = page.locator(f".st-key-edit-text-{conversation_id}-0 textarea")
    box.fill("Name a fruit.")
    page.locator(f".st-key-edit-send-{conversation_id}-0 button:visible").click()
    _counter(page, "2 / 2")  # the prompt now has two versions; its new reply has none yet
    expect(page.locator(MESSAGES).nth(0)).to_contain_text("Name a fruit.")
    _click(page, f"alt-prev-{conversation_id}-0")
    _counter(page, "1 / 2")
    expect(page.locator(MESSAGES).nth(0)).to_contain_text("Name a colour.")
    _counter(page, "3 / 3")  # back on the old branch, down its latest reply
    latest = tree.messages[3]
    assert isinstance(latest, AssistantMessage)
    assert _words(latest.text) <= _words(_wait_for_words(page, 1, _words(latest.text)))

    _click(page, f"fork-{conversation_id}-1")
    page.wait_for_url(lambda url: "?c=" in url and conversation_id not in url)
    fork_id = page.url.split("?c=")[1].split("&")[0]
    expect(page.get_by_text(re.compile("Started from"))).to_be_visible()
    assert _words(latest.text) <= _words(_wait_for_words(page, 1, _words(latest.text)))
    copied = store.load_messages(fork_id)
    assert [type(m) for m in copied] == [UserMessage, AssistantMessage]
    assert store.get(fork_id).forked_from == conversation_id
    screenshot(page, "chat-fork")
