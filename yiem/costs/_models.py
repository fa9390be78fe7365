"""The figures the Costs page draws, as pydantic models."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal, Self

from pydantic import BaseModel, Field

from yiem.costs._periods import Granularity


class Counts(BaseModel):
    """The sums every group of a breakdown carries; dollars count only rows whose price is known."""

    requests: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    cost_total: float = 0.0
    unpriced_requests: int = 0

    def __add__(self, other: Self) -> Self:
        # A page adds up thousands of groups: pydantic-core's validation of plain ints and floats is
        # about twice as fast as model_construct, which is written in Python.
        values = {name: getattr(self, name) + getattr(other, name) for name in type(self).model_fields}
        return type(self)(**values)

    @property
    def uncached_input_tokens(self) -> int:
        """Input not served from the cache: fresh input and cache writes."""
        return self.input_tokens + self.cache_write_tokens

    @property
    def prompt_tokens(self) -> int:
        """Every input token: fresh input, cache reads and cache writes."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.output_tokens

    @property
    def cache_share(self) -> float | None:
        """The share of input tokens served from the cache (None with no input)."""
        return self.cache_read_tokens / self.prompt_tokens if self.prompt_tokens else None

    @property
    def error_rate(self) -> float | None:
        return self.errors / self.requests if self.requests else None


class Totals(Counts):
    """Counts plus the four cost parts and the tokens of unpriced requests (`totals`, the CSV).

    Grouped queries leave these out: each summed column makes SQLite's GROUP BY sort carry more.
    """

    cost_input: float = 0.0
    cost_output: float = 0.0
    cost_cache_read: float = 0.0
    cost_cache_write: float = 0.0
    unpriced_tokens: int = 0


class Headline(BaseModel):
    """The figures at the top of the page for one period."""

    totals: Counts = Field(default_factory=Counts)
    median_latency_ms: float | None = None
    median_ttft_ms: float | None = None


class HeadlineChange(BaseModel):
    """This period's headline and the previous period's, for the deltas."""

    current: Headline
    previous: Headline | None = None

    def change(self, metric: str) -> float | None:
        """Relative change of a headline metric (0.25 = +25 %); None when there is nothing to compare."""
        if self.previous is None:
            return None
        now, before = _metric(self.current, metric), _metric(self.previous, metric)
        if now is None or before is None or before == 0:
            return None
        return (now - before) / before


def _metric(headline: Headline, metric: str) -> float | None:
    if metric in ("median_latency_ms", "median_ttft_ms"):
        value: Any = getattr(headline, metric)
    else:
        value = getattr(headline.totals, metric)
    return None if value is None else float(value)


class CubeRow(BaseModel):
    """Counts of one (bucket, provider, model, stop reason, owner) group."""

    bucket: datetime  # local wall-clock start of the hour or day, naive
    provider: str
    model: str
    stop_reason: str
    totals: Counts
    owner: str = ""


class BreakdownRow(BaseModel):
    """One line of a breakdown table."""

    key: str
    label: str
    totals: Counts
    conversation_id: str | None = None
    last_ms: int | None = None


class Summary(BaseModel):
    """Everything the page draws from the cube for one filter."""

    granularity: Granularity
    tz: str
    rows: list[CubeRow]

    def counts(self) -> Counts:
        return sum((row.totals for row in self.rows), Counts())

    def breakdown(self, by: Literal["provider", "model", "stop_reason", "owner"]) -> list[BreakdownRow]:
        """Totals per provider, per provider/model, per stop reason or per person, most expensive first."""
        groups: dict[str, BreakdownRow] = {}
        for row in self.rows:
            if by == "model":
                key, label = f"{row.provider}/{row.model}", row.model
            else:
                key = label = getattr(row, by)
            found = groups.get(key)
            if found is None:
                groups[key] = BreakdownRow.model_construct(key=key, label=label, totals=row.totals)
            else:
                found.totals = found.totals + row.totals
        return sorted(groups.values(), key=lambda r: (-r.totals.cost_total, -r.totals.requests, r.key))

    def series(self) -> list[CubeRow]:
        """Per bucket and provider/model counts (stop reasons folded), in time order."""
        groups: dict[tuple[datetime, str, str], CubeRow] = {}
        for row in self.rows:
            key = (row.bucket, row.provider, row.model)
            found = groups.get(key)
            if found is None:
                groups[key] = row.model_copy(update={"stop_reason": ""})
            else:
                found.totals = found.totals + row.totals
        return sorted(groups.values(), key=lambda r: (r.bucket, r.provider, r.model))


class Dashboard(BaseModel):
    """Everything the Costs page draws for one filter."""

    summary: Summary
    headline: HeadlineChange
    top_conversations: list[BreakdownRow]
    estimated_requests: int = 0  # requests whose tokens are estimated (replies stopped mid-stream)
