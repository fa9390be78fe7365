"""Reviewing a Chat reply and a Compare column's reply (AppTest, the real SQLite store): the same form
as an Experiments cell, kept per person, shown again when the page is reopened, one form at a time."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from tests.fixtures.compare import compare_page, streamed_reply
from tests.scripted_http import ScriptedServer
from yiem.compare import Comparison
from yiem.identity import LOCAL_OWNER_ID
from yiem.model_setup import ModelSetup
from yiem.store import (
    ConversationNotFoundError,
    ConversationStore,
    ReplyReviewStore,
    ReviewError,
    create_store_engine,
)
from yiem.types import AssistantMessage, TextContent, UserMessage

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    scripted = ScriptedServer()
    yield scripted
    scripted.close()


def _buttons(at: AppTest, label: str) -> list[Any]:
    return [button for button in at.button if button.label == label]


def _captions(at: AppTest) -> list[str]:
    return [str(caption.value) for caption in at.caption]


def _boxes(at: AppTest) -> list[Any]:
    return [box for box in at.main.text_area if box.key.startswith("review_")]


def _review(at: AppTest, *, stars: int, comment: str, expected: str, good: bool) -> None:
    """Fill the one open form and press Good or Bad (stars 1-5; st.feedback counts them from 0)."""
    assert len(at.feedback) == 1 and len(_boxes(at)) == 2  # one form on the page, no other
    at.feedback[0].set_value(stars - 1)
    comment_box, expected_box = _boxes(at)
    comment_box.input(comment)
    expected_box.input(expected)
    _buttons(at, "👍 Good" if good else "👎 Bad")[0].click().run()
    assert not at.exception, at.exception


def _chat(db_url: str) -> tuple[str, list[int]]:
    store = ConversationStore(create_store_engine(db_url))
    conversation = store.create(title="Capitals")
    store.replace_messages(
        conversation.id,
        [
            UserMessage(content=[TextContent(text="Capital of France?")]),
            AssistantMessage(content=[TextContent(text="Lyon.")]),
            UserMessage(content=[TextContent(text="And of Italy?")]),
            AssistantMessage(content=[TextContent(text="Rome.")]),
        ],
    )
    return conversation.id, store.load_path(conversation.id).ids


def _open_chat(conversation_id: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params["c"] = conversation_id
    at.run()
    assert not at.exception, at.exception
    return at


def test_a_chat_reply_is_reviewed_kept_and_shown_again_when_reopened(db_url: str) -> None:
    conversation_id, ids = _chat(db_url)
    at = _open_chat(conversation_id)
    assert len(_buttons(at, "Review this reply")) == 2  # one per reply, and no form until asked
    assert len(at.main.text_area) == 0 and len(at.feedback) == 0
    at.button(key=f"review-open-chat_{conversation_id}_{ids[1]}").click().run()  # "Lyon."
    _review(at, stars=2, comment="Wrong city.", expected="Paris.", good=False)
    # Kept: the form closes and the reply says what its person said.
    assert len(at.main.text_area) == 0
    assert "Your review: 👎 bad, 2 stars: Wrong city." in _captions(at)
    engine = create_store_engine(db_url)
    kept = ReplyReviewStore(engine, LOCAL_OWNER_ID).get("chat", conversation_id, str(ids[1]))
    assert kept is not None
    assert (kept.passed, kept.rating, kept.comment, kept.expected) == (False, 2, "Wrong city.", "Paris.")
    # The reviews are that person's own: another person reads none and cannot review this chat.
    assert ReplyReviewStore(engine, "bob@example.com").in_conversation("chat", conversation_id) == {}

    # Reopened in a fresh session: the review is shown again, and its form holds it to change.
    again = _open_chat(conversation_id)
    assert "Your review: 👎 bad, 2 stars: Wrong city." in _captions(again)
    assert [b.key for b in _buttons(again, "Change your review")] == [
        f"review-open-chat_{conversation_id}_{ids[1]}"
    ]
    _buttons(again, "Change your review")[0].click().run()
    assert [box.value for box in _boxes(again)] == ["Wrong city.", "Paris."]
    assert again.feedback[0].value == 1  # two stars
    _review(again, stars=3, comment="Wrong city, nice tone.", expected="Paris.", good=False)
    assert "Your review: 👎 bad, 3 stars: Wrong city, nice tone." in _captions(again)
    reviews = ReplyReviewStore(engine, LOCAL_OWNER_ID).in_conversation("chat", conversation_id)
    assert list(reviews) == [str(ids[1])] and reviews[str(ids[1])].rating == 3  # replaced, not added


def test_a_bad_rating_or_someone_elses_chat_is_refused_in_words(db_url: str) -> None:
    conversation_id, ids = _chat(db_url)
    engine = create_store_engine(db_url)
    with pytest.raises(ReviewError, match="1 to 5 stars; 7 is not one"):
        ReplyReviewStore(engine, LOCAL_OWNER_ID).save(
            "chat", conversation_id, str(ids[1]), passed=True, rating=7
        )
    with pytest.raises(ConversationNotFoundError, match="not yours, so the review was not kept"):
        ReplyReviewStore(engine, "bob@example.com").save("chat", conversation_id, str(ids[1]), passed=True)
    assert ReplyReviewStore(engine, LOCAL_OWNER_ID).in_conversation("chat", conversation_id) == {}


def test_a_compare_columns_reply_is_reviewed_and_shown_again_when_reopened(
    db_url: str, server: ScriptedServer
) -> None:
    server.script(streamed_reply("Ahoy"), streamed_reply("Good day"))
    at = compare_page()
    at.session_state["compare_specs"] = [
        ModelSetup(provider="llamacpp", base_url=f"{server.url}/v1", model_id=name, system_prompt=name)
        for name in ("pirate", "formal")
    ]
    at.run()
    at.chat_input(key="cmp_prompt").set_value("Say hello.").run()
    comparison: Comparison = at.session_state["compare_run"]
    assert comparison.wait(timeout=30)
    at.run()
    assert not at.exception, at.exception
    assert len(_buttons(at, "Review this reply")) == 2  # one per column
    formal = comparison.columns[1].conversation_id
    at.button(key=f"review-open-compare_{formal}_1").click().run()
    _review(at, stars=5, comment="Polite.", expected="", good=True)
    assert "Your review: 👍 good, 5 stars: Polite." in _captions(at)
    kept = ReplyReviewStore(create_store_engine(db_url), LOCAL_OWNER_ID).get("compare", str(formal), "1")
    assert kept is not None and (kept.passed, kept.rating, kept.comment) == (True, 5, "Polite.")

    # The saved comparison reopened by its URL in a fresh session shows the review again.
    fresh = compare_page()
    fresh.query_params["cmp"] = str(comparison.record_id)
    fresh.run()
    assert not fresh.exception, fresh.exception
    assert "Your review: 👍 good, 5 stars: Polite." in _captions(fresh)
    assert len(_buttons(fresh, "Review this reply")) == 1  # the pirate column is not reviewed yet
