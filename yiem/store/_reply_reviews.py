"""Each person's own reviews of Chat and Compare replies: thumbs, an optional 1-5 rating, a comment and
what it should have said, on a conversation of theirs; nobody else reads them."""

from __future__ import annotations

import time
from typing import Any, Literal

from pydantic import BaseModel, field_validator
from sqlalchemy import insert, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.sql import ColumnElement

from yiem.errors import YiemError
from yiem.store._errors import ConversationNotFoundError
from yiem.store._review_tables import reply_reviews
from yiem.store._schema import conversations
from yiem.types import replace_lone_surrogates

ReplyKind = Literal["chat", "compare"]


class ReviewError(YiemError, ValueError):
    """A review that cannot be kept (a rating outside 1-5, a result or reply that is not there)."""


def check_rating(value: int | None) -> None:
    """The one rule of a review's rating: none, or 1 to 5 stars."""
    if value is not None and not 1 <= value <= 5:
        raise ReviewError(f"A rating is 1 to 5 stars; {value} is not one.")


class ReplyReview(BaseModel):
    """One person's review of one reply in a conversation of theirs."""

    kind: ReplyKind
    conversation_id: str
    reply: str
    passed: bool
    rating: int | None = None
    comment: str = ""
    expected: str = ""

    @field_validator("rating")
    @classmethod
    def _rating_in_range(cls, value: int | None) -> int | None:
        check_rating(value)
        return value


class ReplyReviewStore:
    """`owner`'s reviews of replies in their own conversations (Chat's and Compare columns' transcripts)."""

    def __init__(self, engine: Engine, owner: str) -> None:
        self.engine = engine
        self.owner = owner

    def save(
        self,
        kind: ReplyKind,
        conversation_id: str,
        reply: str,
        *,
        passed: bool,
        rating: int | None = None,
        comment: str = "",
        expected: str = "",
    ) -> ReplyReview:
        """Keep this person's review of the reply, replacing their earlier one."""
        check_rating(rating)  # a ReviewError in words, not pydantic's report
        review = ReplyReview(
            kind=kind,
            conversation_id=conversation_id,
            reply=reply,
            passed=passed,
            rating=rating,
            comment=replace_lone_surrogates(comment.strip()),
            expected=replace_lone_surrogates(expected.strip()),
        )
        values = review.model_dump(include={"passed", "rating", "comment", "expected"})
        now = int(time.time() * 1000)
        with self.engine.begin() as conn:
            own = select(conversations.c.id).where(
                conversations.c.id == conversation_id, conversations.c.owner == self.owner
            )
            if conn.execute(own).first() is None:
                raise ConversationNotFoundError(
                    "This conversation no longer exists or is not yours, so the review was not kept."
                )
            where = self._where(kind, conversation_id, reply)
            if conn.execute(update(reply_reviews).where(where).values(updated_ms=now, **values)).rowcount:
                return review
            conn.execute(
                insert(reply_reviews).values(
                    owner=self.owner,
                    kind=kind,
                    conversation_id=conversation_id,
                    reply=reply,
                    created_ms=now,
                    updated_ms=now,
                    **values,
                )
            )
        return review

    def get(self, kind: ReplyKind, conversation_id: str, reply: str) -> ReplyReview | None:
        """This person's review of the reply, if they made one."""
        with self.engine.connect() as conn:
            row = conn.execute(select(reply_reviews).where(self._where(kind, conversation_id, reply))).first()
        return None if row is None else _review(row)

    def in_conversation(self, kind: ReplyKind, conversation_id: str) -> dict[str, ReplyReview]:
        """This person's reviews of the conversation's replies, by reply."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(reply_reviews).where(
                    reply_reviews.c.owner == self.owner,
                    reply_reviews.c.kind == kind,
                    reply_reviews.c.conversation_id == conversation_id,
                )
            ).all()
        return {row.reply: _review(row) for row in rows}

    def _where(self, kind: str, conversation_id: str, reply: str) -> ColumnElement[bool]:
        return (
            (reply_reviews.c.owner == self.owner)
            & (reply_reviews.c.kind == kind)
            & (reply_reviews.c.conversation_id == conversation_id)
            & (reply_reviews.c.reply == reply)
        )


def _review(row: Any) -> ReplyReview:
    return ReplyReview.model_validate({name: getattr(row, name) for name in ReplyReview.model_fields})
