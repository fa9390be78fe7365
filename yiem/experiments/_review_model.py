"""One person's review of one result cell, as the page, the agreement figures and the exports read it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, field_validator

from yiem.experiments._outcome import OutcomeKey
from yiem.store import check_rating


class Review(BaseModel):
    """One person's review of one cell; `comment` and `expected` are blank when hidden from the reader."""

    item_id: str
    variant: str
    repeat: int = 0
    reviewer: str
    reviewer_name: str = ""
    passed: bool
    rating: int | None = Field(default=None)
    comment: str = ""
    expected: str = ""
    use_expected: bool = False
    hidden: bool = False

    @field_validator("rating")
    @classmethod
    def _rating_in_range(cls, value: int | None) -> int | None:
        check_rating(value)
        return value

    @property
    def key(self) -> OutcomeKey:
        return (self.item_id, self.variant, self.repeat)

    def exported(self) -> dict[str, Any]:
        """The review as a run's export gives it: who, thumbs, score, comment and correction."""
        return {
            "reviewer": self.reviewer_name or self.reviewer,
            "reviewer_id": self.reviewer,
            "thumbs": "up" if self.passed else "down",
            "score": self.rating,
            "comment": self.comment,
            "correction": self.expected,
            "correction_kept_as_expected": self.use_expected,
            "hidden": self.hidden,
        }
