"""A run's timeline: the spans the loop records (LLM requests, tool calls, hooks, waits) with each message.

Times are `time.perf_counter()` seconds of the process that ran the agent: monotonic, so a clock
change never bends a bar, and comparable only within one run (`Timeline.run`), which is all a
timeline draws. An assistant reply carries its LLM request; a tool result its call, hooks and wait.
"""

import random
from dataclasses import dataclass
from typing import Literal

from pydantic import ConfigDict
from pydantic.alias_generators import to_camel

SpanKind = Literal["llm", "tool", "hook", "wait"]

# Plain dataclasses, not pydantic models: the loop makes several per turn and a model costs ten
# times more to build (issue 15: spans add under 5 % to the loop's cost). Pydantic still reads and
# writes them inside messages, camelCase on the wire like the messages that carry them.
_CONFIG = ConfigDict(
    alias_generator=to_camel, populate_by_name=True, validate_by_alias=True, validate_by_name=True
)


@dataclass(slots=True)
class Span:
    """One stretch of a run: `start` to `end`, in seconds of the run's monotonic clock."""

    __pydantic_config__ = _CONFIG

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


@dataclass(slots=True)
class Timeline:
    """The spans one message carries, and the run that recorded them."""

    __pydantic_config__ = _CONFIG

    run: str
    spans: list[Span]


def new_run_id() -> str:
    """A short id naming one agent run: spans of different runs never share a clock."""
    # 48 random bits as uuid4's first 12 hex digits had, without its os.urandom call: that syscall
    # lets go of the GIL, and an experiment's worker threads then queue for it on every run.
    return f"{random.getrandbits(48):012x}"


def with_span(found: Timeline | None, run: str, added: Span) -> Timeline:
    """`found`'s spans (a provider's retry waits) and `added`, under `run`."""
    return Timeline(run, [*found.spans, added] if found is not None else [added])
