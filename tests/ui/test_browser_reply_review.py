"""Review a stored Chat reply in a real Chromium: the form opens on asking, the review is kept, and the
reopened page shows it again with its form holding it."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.fixtures.browser import StreamlitApp, open_app, screenshot, script_run, settled
from yiem.identity import LOCAL_OWNER_ID
from yiem.store import ConversationStore, ReplyReviewStore, create_store_engine
from yiem.types import AssistantMessage, TextContent, UserMessage

pytestmark = [pytest.mark.browser]


def test_a_chat_reply_is_reviewed_and_shown_again_after_a_reload(
    streamlit_app: StreamlitApp, page: Any
) -> None:
    engine = create_store_engine(streamlit_app.database_url)
    store = ConversationStore(engine)
    conversation = store.create(title="Capitals")
    store.replace_messages(
        conversation.id,
        [
            UserMessage(content=[TextContent(text="Capital of France?")]),
            AssistantMessage(content=[TextContent(text="Lyon.")]),
        ],
    )
    reply = str(store.load_path(conversation.id).ids[-1])
    open_app(page, f"{streamlit_app.url}/?c={conversation.id}")
    main = page.locator("#stMain")  # the page, not the sidebar (which lists the chat's title)
    expect(main.get_by_text("Lyon.")).to_be_visible(timeout=60_000)
    with script_run(page):
        main.get_by_role("button", name="Review this reply").click()
    settled(page)
    form = page.locator(f".st-key-review-reply-chat_{conversation.id}_{reply}")
    form.get_by_label("Comment (optional)").fill("Wrong city.")
    form.get_by_label("What it should have said (optional)").fill("Paris.")
    with script_run(page):
        form.get_by_role("button", name="👎 Bad").click()
    settled(page)
    expect(main.get_by_text("Your review: 👎 bad: Wrong city.")).to_be_visible()
    kept = ReplyReviewStore(engine, LOCAL_OWNER_ID).get("chat", conversation.id, reply)
    assert kept is not None and (kept.passed, kept.comment, kept.expected) == (False, "Wrong city.", "Paris.")

    open_app(page, f"{streamlit_app.url}/?c={conversation.id}")  # a reload: a fresh session
    expect(main.get_by_text("Your review: 👎 bad: Wrong city.")).to_be_visible(timeout=60_000)
    with script_run(page):
        main.get_by_role("button", name="Change your review").click()
    settled(page)
    expect(form.get_by_label("Comment (optional)")).to_have_value("Wrong city.")
    expect(form.get_by_label("What it should have said (optional)")).to_have_value("Paris.")
    screenshot(page, "reply-review-reopened")
