"""Export a conversation with alternatives from the Chat page's sidebar, in a real Chromium.

The transcript is built on the server when the button is clicked (a deferred download, in a
worker thread), so this is the real path: the file holds every alternative and the chosen one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.fixtures.browser import StreamlitApp, open_app
from yiem.store import ConversationStore, create_store_engine
from yiem.types import AssistantMessage, TextContent, UserMessage

pytestmark = [pytest.mark.browser]


def test_export_json_carries_every_alternative(streamlit_app: StreamlitApp, page: Any) -> None:
    store = ConversationStore(create_store_engine(streamlit_app.database_url))
    conversation = store.create(title="Two answers")
    tree = [
        UserMessage.from_text("Which colour?"),
        AssistantMessage(content=[TextContent(text="Blue.")]),
        AssistantMessage(content=[TextContent(text="Green.")]),
    ]
    store.replace_messages(conversation.id, tree, [None, 0, 0], current=1)
    open_app(page, f"{streamlit_app.url}/?c={conversation.id}")
    expect(page.get_by_text("1 / 2", exact=True)).to_be_visible()
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.locator("[data-testid=stExpander] summary", has_text="Export and import").click()
    with page.expect_download() as download:
        sidebar.get_by_role("button", name="Export JSON").click()
    assert download.value.suggested_filename == "Two answers.json"
    body = json.loads(Path(download.value.path()).read_text())
    texts = [message["content"][0]["text"] for message in body["messages"]]
    assert texts == ["Which colour?", "Blue.", "Green."]
    assert (body["parents"], body["current"]) == ([None, 0, 0], 1)
