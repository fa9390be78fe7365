"""What every scorer shares: its name and threshold, the score it gives, and the errors it raises."""

from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from yiem.errors import YiemError
from yiem.experiments._dataset import DatasetItem
from yiem.experiments._outcome import ItemOutcome, Score
from yiem.experiments._variant import Variant


class ScorerError(YiemError):
    """A scorer is set up wrongly (a bad pattern or schema, no expected value); says what to fix."""


class ScorerSpecError(ScorerError, ValueError):
    """A scorer's pattern or schema that does not compile; a ValueError so pydantic reports it in place."""


class BrokenScorerError(YiemError):
    """A scorer that ran and gave no score (a code scorer that hung, raised, ran out of memory or
    returned junk). The run makes it the cell's error, in these words, and not a failed score: the
    output was never judged, so it must not count in that scorer's pass rate."""


class _Scorer(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = ""
    threshold: float = Field(default=1.0, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _default_name(self) -> _Scorer:
        if not self.name:
            self.name = str(getattr(self, "kind", type(self).__name__.lower()))
        return self

    def score(self, item: DatasetItem, outcome: ItemOutcome) -> Score:
        """Grade one outcome; a scorer that cannot grade fails with the reason why (one that broke
        while grading raises `BrokenScorerError`)."""
        try:
            value, reason = self.grade(item, outcome)
        except ScorerError as error:
            return Score(scorer=self.name, score=0.0, passed=False, reason=str(error))
        value = min(1.0, max(0.0, value))
        return Score(scorer=self.name, score=value, passed=value >= self.threshold, reason=reason)

    def grade(self, item: DatasetItem, outcome: ItemOutcome) -> tuple[float, str]:
        raise NotImplementedError

    def for_variant(self, variant: Variant) -> Self:
        """This scorer as it grades `variant`'s outputs; most grade every variant alike."""
        return self

    def _expected(self, own: str | None, item: DatasetItem) -> str:
        value = own if own is not None else item.expected
        if value is None:
            raise ScorerError(f"{self.name}: the item has no expected value and the scorer names none")
        return value


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _matches(expected: Any, actual: Any) -> bool:
    """`expected` is a subset of `actual`: dict keys checked recursively, everything else equal."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            key in actual and _matches(value, actual[key]) for key, value in expected.items()
        )
    return bool(expected == actual)
