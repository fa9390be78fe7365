"""Blind votes: who preferred which of two hidden models on a prompt, kept in the store."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, Field
from sqlalchemy import insert, select
from sqlalchemy.engine import Engine

from yiem.compare._columns import CompareError
from yiem.identity import LOCAL_OWNER_ID
from yiem.store import compare_votes

Verdict = Literal["left", "right", "tie", "both_bad"]
VERDICTS: tuple[Verdict, ...] = ("left", "right", "tie", "both_bad")


class Vote(BaseModel):
    """One blind vote: the two models as they were shown (left, right) and which was better."""

    left_model: str
    right_model: str
    verdict: Verdict
    voter: str = ""
    prompt: str = ""
    tag: str = ""
    created: datetime = Field(default_factory=lambda: datetime.now(UTC))


class VoteOwnerError(CompareError, ValueError):
    """A vote added through a VoteStore that reads the whole team's votes (it has no owner)."""


class VoteStore:
    """One person's votes on the store's engine (`owner` None: an admin reading the whole team's)."""

    def __init__(self, engine: Engine, owner: str | None = LOCAL_OWNER_ID) -> None:
        self.engine = engine
        self.owner = owner

    def add(self, vote: Vote) -> str:
        """Store a vote; returns its id."""
        if self.owner is None:
            raise VoteOwnerError("A vote is cast by one person: open the VoteStore with an owner to add one.")
        vote_id = uuid.uuid4().hex
        with self.engine.begin() as conn:
            conn.execute(
                insert(compare_votes).values(
                    id=vote_id,
                    voter=vote.voter,
                    created_ms=int(vote.created.timestamp() * 1000),
                    prompt=vote.prompt,
                    left_model=vote.left_model,
                    right_model=vote.right_model,
                    verdict=vote.verdict,
                    tag=vote.tag,
                    owner=self.owner,
                )
            )
        return vote_id

    def votes(
        self, since: datetime | None = None, until: datetime | None = None, tag: str | None = None
    ) -> list[Vote]:
        """Votes oldest first, optionally within a period and under one tag."""
        query = select(compare_votes).order_by(compare_votes.c.created_ms)
        if self.owner is not None:
            query = query.where(compare_votes.c.owner == self.owner)
        if since is not None:
            query = query.where(compare_votes.c.created_ms >= int(since.timestamp() * 1000))
        if until is not None:
            query = query.where(compare_votes.c.created_ms < int(until.timestamp() * 1000))
        if tag:
            query = query.where(compare_votes.c.tag == tag)
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return [
            Vote(
                left_model=row.left_model,
                right_model=row.right_model,
                verdict=row.verdict,
                voter=row.voter,
                prompt=row.prompt,
                tag=row.tag,
                created=datetime.fromtimestamp(row.created_ms / 1000, UTC),
            )
            for row in rows
        ]
