"""Copy a reply or a tool result, and find a conversation by a word of its reply, in a real Chromium.

Each step waits for the exact state it asserts (the button's "Copied", the snippet's bold word).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.fixtures.browser import StreamlitApp, click_until, open_app, open_conversation_id, screenshot
from tests.ui.test_browser_chat import _greedy_replies, _limit_replies, _send, _wait_idle
from yiem.store import ConversationStore, create_store_engine
from yiem.types import (
    AgentToolCall,
    AssistantMessage,
    AssistantMessageToolCall,
    TextContent,
    ToolResultMessage,
    UserMessage,
)

pytestmark = [pytest.mark.browser]

# The labels a Copy button shows, recorded as they change: "Copied" stays for 2 s, which a busy
# machine's polling can miss (ci34), so the test reads the record instead.
_RECORD_LABELS = """(button) => {
    window.__yiemLabels = [];
    new MutationObserver(() => window.__yiemLabels.push(button.textContent))
        .observe(button, {childList: true, characterData: true, subtree: true});
}"""
_HOLDS = "async (text) => (await navigator.clipboard.readText()) === text"


def _copy(page: Any, button: Any, text: str) -> None:
    """Click a Copy button until the clipboard holds `text`; it must have said "Copied" on the way."""
    page.evaluate("navigator.clipboard.writeText('')")
    button.evaluate(_RECORD_LABELS)
    click_until(page, button, lambda ms: page.wait_for_function(_HOLDS, arg=text, timeout=ms), wait=10_000)
    assert "Copied" in page.evaluate("window.__yiemLabels")


PROMPT = "Name a colour."
OTHER = "Another chat"


@pytest.mark.llama
def test_copy_a_reply_then_find_its_conversation_by_a_word_only_in_it(
    streamlit_app: StreamlitApp, page: Any
) -> None:
    store = ConversationStore(create_store_engine(streamlit_app.database_url))
    store.create(title=OTHER)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=streamlit_app.url)
    open_app(page, streamlit_app.url)
    _limit_replies(page, 12)
    # At temperature 0 the reply is the same each run; at the default, SmolLM2 once answered only
    # "🌍🌞🌍🌍" (CI after the seventh session), which has no word to search for.
    _greedy_replies(page)
    _send(page, PROMPT)
    conversation_id = open_conversation_id(page)
    expect(page.get_by_text(re.compile(r"\d+ in · \d+ out")).first).to_be_visible(timeout=120_000)
    _wait_idle(page)
    reply = store.load_messages(conversation_id)[-1]
    assert isinstance(reply, AssistantMessage) and reply.text

    copy = page.get_by_role("button", name="Copy reply")
    copy.click()
    expect(page.get_by_role("button", name="Copied")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == reply.text  # the Markdown, as stored

    asked = {word.casefold() for word in re.findall(r"\w+", PROMPT)}
    # Three letters, not four: SmolLM2's whole reply was once "1. Red" (ci11).
    # Titles match inside words: "The" finds "Another chat" (ci19), so such a word cannot tell them apart.
    candidates = [
        w
        for w in re.findall(r"[A-Za-z]{3,}", reply.text)
        if w.casefold() not in asked and w.casefold() not in OTHER.casefold()
    ]
    if not candidates:
        pytest.fail(f"the model's reply has no word of three letters to search for: {reply.text!r}")
    word = max(candidates, key=len)
    search = page.get_by_placeholder("Search titles and messages")
    search.fill(word)
    search.press("Enter")
    sidebar = page.locator('[data-testid="stSidebar"]')
    expect(sidebar.locator("strong", has_text=re.compile(f"^{word}$", re.IGNORECASE)).first).to_be_visible()
    expect(sidebar.get_by_role("button", name=PROMPT)).to_be_visible()
    expect(sidebar.get_by_role("button", name=OTHER)).to_have_count(0)
    screenshot(page, "chat-search-snippet")


def test_copy_a_tool_result(streamlit_app: StreamlitApp, page: Any) -> None:
    store = ConversationStore(create_store_engine(streamlit_app.database_url))
    conversation = store.create(title="Weather")
    call = AgentToolCall(id="call_1", name="forecast", arguments={"city": "Wellington"})
    result = "Drizzle, 14 °C\nWind: *strong* northerly"
    store.replace_messages(
        conversation.id,
        [
            UserMessage.from_text("Weather in Wellington?"),
            AssistantMessageToolCall(tool_calls=[call]),
            ToolResultMessage(
                tool_call_id="call_1", tool_name="forecast", content=[TextContent(text=result)]
            ),
            AssistantMessage(content=[TextContent(text="Drizzly and windy.")]),
        ],
    )
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=streamlit_app.url)
    open_app(page, f"{streamlit_app.url}/?c={conversation.id}")
    page.locator("[data-testid=stExpander] summary", has_text="forecast").click()
    _copy(page, page.get_by_role("button", name="Copy result"), result)  # the tool's text, not its JSON


def test_each_copy_button_copies_its_own_reply_exactly(streamlit_app: StreamlitApp, page: Any) -> None:
    # One listener serves every button, and the text rides in an attribute the sanitiser must keep:
    # markup, comment ends and non-ASCII characters come back exactly, from the button clicked.
    store = ConversationStore(create_store_engine(streamlit_app.database_url))
    conversation = store.create(title="Two replies")
    tricky = 'Arrows --> and ]]> stay, "quotes" & <b>tags</b>, </style> too: é ✓ 🙂\n\n- a list'
    store.replace_messages(
        conversation.id,
        [
            UserMessage.from_text("First?"),
            AssistantMessage(content=[TextContent(text="The first reply.")]),
            UserMessage.from_text("Second?"),
            AssistantMessage(content=[TextContent(text=tricky)]),
        ],
    )
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=streamlit_app.url)
    open_app(page, f"{streamlit_app.url}/?c={conversation.id}")
    buttons = page.get_by_role("button", name="Copy reply")
    expect(buttons).to_have_count(2)
    _copy(page, buttons.nth(1), tricky)
    screenshot(page, "chat-copy-buttons")
    expect(page.get_by_role("button", name="Copy reply")).to_have_count(2)  # the label comes back
    _copy(page, buttons.nth(0), "The first reply.")
