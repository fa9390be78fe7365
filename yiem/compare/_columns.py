"""One column of a comparison: its settings, and the figures of its latest answer."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from yiem.chat import LOCAL, ChatSettings, ChatSetup
from yiem.errors import YiemError
from yiem.types import AgentLoopConfig

MIN_COLUMNS = 2
MAX_COLUMNS = 6


class CompareError(YiemError):
    """A comparison cannot start as asked (too few or too many columns, one still running)."""


class ColumnSpec(BaseModel):
    """Provider, model, system prompt, temperature and tools: the same settings as Chat."""

    provider: str = LOCAL
    base_url: str = ""
    model_id: str = ""
    api_key: str = Field(default="", repr=False, exclude=True)
    system_prompt: str = ""
    temperature: float | None = None
    max_tokens: int | None = None
    tools: list[str] = Field(default_factory=list)

    @classmethod
    def from_setup(cls, setup: ChatSetup) -> ColumnSpec:
        """A column doing what a Chat setup (a preset) does (its tool mode has no place in a column)."""
        return cls(
            provider=setup.provider,
            base_url=setup.base_url,
            model_id=setup.model_id,
            system_prompt=setup.system_prompt,
            temperature=setup.temperature,
            max_tokens=setup.max_tokens,
            tools=list(setup.tools),
        )

    @classmethod
    def from_variant(cls, settings: Mapping[str, Any]) -> ColumnSpec:
        """A column with an Experiments variant's settings (`Variant.settings_dict()`); none: local."""
        return cls.model_validate({**settings, "provider": settings.get("provider") or LOCAL})

    @property
    def label(self) -> str:
        """`provider/model`, as the column's heading and on the leaderboard."""
        return f"{self.provider}/{self.model_id}" if self.model_id else self.provider

    def chat_settings(self) -> ChatSettings:
        """The Chat settings that reach this column's model (connect() builds the client from them)."""
        defaults = ChatSettings()
        return ChatSettings(
            provider=self.provider,
            base_url=self.base_url,
            model_id=self.model_id or defaults.model_id,
            api_key=self.api_key,
            system_prompt=self.system_prompt,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
        )

    def loop_config(self) -> AgentLoopConfig:
        """The agent loop's settings for this column."""
        return AgentLoopConfig(temperature=self.temperature, max_tokens=self.max_tokens)


class ColumnFigures(BaseModel):
    """What one column's answer took: time to first token, speed, tokens, cost and total time.

    `cost` is None when a reply's price is unknown: shown as "price unknown", never as $0.
    `first_token_at` and `finished_at` are `time.perf_counter()` readings, to compare columns.
    """

    ttft_ms: float | None = None
    total_ms: float | None = None
    tokens_per_s: float | None = None
    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None
    first_token_at: float | None = None
    finished_at: float | None = None


def check_columns(specs: Sequence[ColumnSpec]) -> None:
    """Raise `CompareError` unless there are 2 to 6 columns."""
    if not MIN_COLUMNS <= len(specs) <= MAX_COLUMNS:
        raise CompareError(
            f"A comparison has {MIN_COLUMNS} to {MAX_COLUMNS} columns; this one has {len(specs)}."
        )


def blind_order(specs: Sequence[ColumnSpec], rng: random.Random | None = None) -> list[ColumnSpec]:
    """The columns in a random order: a blind vote's A and B must not follow the order they were set in."""
    return (rng or random.SystemRandom()).sample(list(specs), len(specs))


def cheapest_and_fastest(figures: Sequence[ColumnFigures | None]) -> tuple[int | None, int | None]:
    """Indexes of the cheapest column (known prices only) and the fastest (shortest total time).

    Columns that failed or have no figures take no part; with fewer than two candidates none is marked.
    """
    priced = [(f.cost, i) for i, f in enumerate(figures) if f is not None and f.cost is not None]
    timed = [(f.total_ms, i) for i, f in enumerate(figures) if f is not None and f.total_ms is not None]
    cheapest = min(priced)[1] if len(priced) >= 2 else None
    fastest = min(timed)[1] if len(timed) >= 2 else None
    return cheapest, fastest
