"""A run's timeline: the spans the loop records (LLM requests, tool calls, hooks, waits) with each message.

Times are `time.perf_counter()` seconds of the process that ran the agent: monotonic, so a clock
change never bends a bar, and comparable only within one run (`Timeline.run`), which is all a
timeline draws. An assistant reply carries its LLM request; a tool result its call, hooks and wait.
"""

import uuid
from typing import Literal

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

SpanKind = Literal["llm", "tool", "hook", "wait"]

# As the messages that carry them: camelCase on the wire, both spellings read; built on first use
# (issue 10's start-up target).
_CONFIG = ConfigDict(
    defer_build=True,
    alias_generator=to_camel,
    populate_by_name=True,
    validate_by_alias=True,
    validate_by_name=True,
)


class Span(BaseModel):
    """One stretch of a run: `start` to `end`, in seconds of the run's monotonic clock."""

    model_config = _CONFIG

    kind: SpanKind
    name: str
    start: float
    end: float
    first_token: float | None = None
    """LLM requests: when the first streamed fragment arrived."""
    call_id: str | None = None
    """Tool calls, their hooks and waits: the call they belong to (one lane per call)."""
    server: str | None = None
    """Tool calls: the MCP server that ran the tool, when it came from one."""

    @property
    def duration(self) -> float:
        return self.end - self.start


class Timeline(BaseModel):
    """The spans one message carries, and the run that recorded them."""

    model_config = _CONFIG

    run: str
    spans: list[Span]


def new_run_id() -> str:
    """A short id naming one agent run: spans of different runs never share a clock."""
    return uuid.uuid4().hex[:12]


def span(
    kind: SpanKind,
    name: str,
    start: float,
    end: float,
    *,
    first_token: float | None = None,
    call_id: str | None = None,
    server: str | None = None,
) -> Span:
    """A span without validation: the loop records one per step, so it must cost next to nothing."""
    return Span.model_construct(
        kind=kind, name=name, start=start, end=end, first_token=first_token, call_id=call_id, server=server
    )


def timeline(run: str, spans: list[Span]) -> Timeline:
    """A message's timeline, built as cheaply as `span`."""
    return Timeline.model_construct(run=run, spans=spans)


def with_span(found: Timeline | None, run: str, added: Span) -> Timeline:
    """`found`'s spans (a provider's retry waits) and `added`, under `run`."""
    return timeline(run, [*(found.spans if found is not None else ()), added])
