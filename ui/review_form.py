"""The one review form (👍/👎, 1-5 stars, a comment, what it should have said) for an Experiments cell,
a Compare column's reply and a Chat reply; and the Chat and Compare replies' own reviews."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

from ui.bootstrap import owner, store_engine
from ui.state import REVIEW_ERRORS, REVIEWING, review_field
from yiem.store import ReplyKind, ReplyReview, ReplyReviewStore, ReviewError, StoreError, database_url


@dataclass(frozen=True)
class Verdict:
    """What the form held when Good or Bad was pressed (or a kept review, to show again)."""

    passed: bool
    rating: int | None = None
    comment: str = ""
    expected: str = ""
    keep: bool = False


def describe(verdict: Verdict) -> str:
    """A kept review in words: `👍 good, 4 stars: the comment`."""
    stars = f", {verdict.rating} stars" if verdict.rating else ""
    words = f": {verdict.comment}" if verdict.comment else ""
    return ("👍 good" if verdict.passed else "👎 bad") + stars + words


def draw_form(
    where: str,
    keep: Callable[[Verdict], None],
    *,
    saved: Verdict | None = None,
    keep_label: str | None = None,
    shortcuts: bool = False,
    buttons: str | None = None,
) -> None:
    """The form, its boxes keyed by `where` (one result); `keep` stores what Good or Bad was pressed with.

    A `saved` review fills the boxes the first time they are drawn, so reopening shows it again;
    `keep_label` adds the "keep it as the expected answer" box; `buttons` keys Good and Bad (`_good`,
    `_bad` after it; by default after `where`)."""
    if saved is not None and not review_field("comment", where).present():
        review_field("rating", where).set(None if saved.rating is None else saved.rating - 1)
        review_field("comment", where).set(saved.comment)
        review_field("expected", where).set(saved.expected)
        review_field("keep", where).set(saved.keep)
    st.feedback("stars", key=review_field("rating", where).name)
    st.text_area("Comment (optional)", key=review_field("comment", where).name)
    st.text_area("What it should have said (optional)", key=review_field("expected", where).name)
    if keep_label is not None:
        st.checkbox(keep_label, key=review_field("keep", where).name)
    if error := REVIEW_ERRORS.get({}).pop(where, None):
        st.error(error)
    good, bad = st.columns(2)
    # Kept in the click's callback, so the same script run draws the next state.
    for column, label, shortcut, passed in ((good, "👍 Good", "G", True), (bad, "👎 Bad", "B", False)):
        column.button(
            label,
            key=f"{buttons or f'review_{where}'}_{'good' if passed else 'bad'}",
            shortcut=shortcut if shortcuts else None,
            width="stretch",
            on_click=_pressed,
            args=(where, passed, keep),
        )


def _pressed(where: str, passed: bool, keep: Callable[[Verdict], None]) -> None:
    rating = review_field("rating", where).get()
    verdict = Verdict(
        passed=passed,
        rating=None if rating is None else rating + 1,  # st.feedback's stars are 0-4
        comment=review_field("comment", where).get() or "",
        expected=review_field("expected", where).get() or "",
        keep=bool(review_field("keep", where).get()),
    )
    try:
        keep(verdict)
    except (ReviewError, StoreError) as error:
        REVIEW_ERRORS.setdefault(dict)[where] = f"Your review was not kept: {error}"


def _reply_store() -> ReplyReviewStore:
    return ReplyReviewStore(store_engine(database_url()), owner().id)


def reply_reviews(kind: ReplyKind, conversation_id: str | None) -> dict[str, ReplyReview]:
    """This person's reviews of the conversation's replies (one query for the whole page), by reply."""
    if conversation_id is None:
        return {}
    try:
        return _reply_store().in_conversation(kind, conversation_id)
    except StoreError as error:
        st.caption(f"Your reviews of these replies could not be read: {error}")
        return {}


def draw_reply_review(
    kind: ReplyKind,
    conversation_id: str | None,
    reply: str,
    reviews: dict[str, ReplyReview] | None = None,
) -> None:
    """A Chat or Compare reply's review, this person's own: what they said, and the form once they ask.

    One form at a time (REVIEWING), so a long conversation's rerun draws no text box per reply;
    `reviews` is `reply_reviews` of the conversation, read once for all its replies (else read here)."""
    if conversation_id is None:
        return
    found = (reply_reviews(kind, conversation_id) if reviews is None else reviews).get(reply)
    where = f"{kind}_{conversation_id}_{reply}"
    saved = None if found is None else Verdict(found.passed, found.rating, found.comment, found.expected)
    if REVIEWING.get() != where:
        if saved is not None:
            st.caption(f"Your review: {describe(saved)}")
        st.button(
            "Review this reply" if saved is None else "Change your review",
            icon=":material/rate_review:",
            key=f"review-open-{where}",
            type="tertiary",
            help="👍 or 👎, stars, a comment and what it should have said; only you see your reviews.",
            on_click=REVIEWING.set,
            args=(where,),
        )
        return

    def keep(verdict: Verdict) -> None:
        _reply_store().save(
            kind,
            conversation_id,
            reply,
            passed=verdict.passed,
            rating=verdict.rating,
            comment=verdict.comment,
            expected=verdict.expected,
        )
        _close_form()  # kept: the reply shows the review in words again

    with st.container(border=True, key=f"review-reply-{where}"):
        st.caption("Your review of this reply (only you see it)")
        draw_form(where, keep, saved=saved)
        st.button("Cancel", key=f"review-cancel-{where}", type="tertiary", on_click=_close_form)


def _close_form() -> None:
    REVIEWING.pop()
