"""A reply's timeline as bars: one lane for the model, tool calls in lanes of their own when they overlap."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from yiem.amounts import dollars, duration, tokens
from yiem.timeline import Span, SpanKind
from yiem.types import (
    AgentMessage,
    AssistantMessage,
    AssistantMessageToolCall,
    ToolResultMessage,
    UserMessage,
)

MODEL_LANE = "model"


@dataclass(frozen=True)
class TimelineBar:
    """One span placed on the reply's clock: milliseconds from the reply's first span."""

    lane: str
    kind: SpanKind
    label: str
    start_ms: float
    end_ms: float
    first_token_ms: float | None = None
    failed: bool = False


def _seconds(value: float) -> str:
    return duration(value * 1000)


def _llm_label(span: Span, reply: AssistantMessage | AssistantMessageToolCall) -> str:
    parts = [span.name, _seconds(span.duration)]
    if span.first_token is not None:
        parts.append(f"first token {_seconds(span.first_token - span.start)}")
    parts.append(f"{tokens(reply.usage.input_tokens)} in / {tokens(reply.usage.output_tokens)} out")
    parts.append(dollars(None if reply.cost is None else reply.cost.total))
    return " · ".join(parts)


def _label(span: Span, message: AgentMessage) -> str:
    if span.kind == "llm" and isinstance(message, AssistantMessage | AssistantMessageToolCall):
        return _llm_label(span, message)
    name = f"{span.name} ({span.server})" if span.server else span.name
    return f"{name} · {_seconds(span.duration)}"


def reply_timeline(messages: Sequence[AgentMessage]) -> list[TimelineBar]:
    """The bars of one reply's messages (those after its prompt); empty when none recorded spans.

    Only the last run's spans are kept: spans of different runs have no common clock.
    """
    carried = [(m, m.timeline) for m in messages if not isinstance(m, UserMessage) and m.timeline is not None]
    if not carried:
        return []
    run = carried[-1][1].run
    spans = [(message, span) for message, found in carried if found.run == run for span in found.spans]
    origin = min(span.start for _, span in spans)
    lanes = _tool_lanes([span for _, span in spans])
    bars = []
    for message, span in spans:
        failed = isinstance(message, ToolResultMessage) and message.is_error and span.kind == "tool"
        if span.kind == "llm" and isinstance(message, AssistantMessage | AssistantMessageToolCall):
            failed = message.stop_reason in ("error", "aborted")
        bars.append(
            TimelineBar(
                lane=lanes.get(span.call_id, MODEL_LANE) if span.call_id else MODEL_LANE,
                kind=span.kind,
                label=_label(span, message),
                start_ms=(span.start - origin) * 1000,
                end_ms=(span.end - origin) * 1000,
                first_token_ms=None if span.first_token is None else (span.first_token - origin) * 1000,
                failed=failed,
            )
        )
    return bars


def _tool_lanes(spans: Sequence[Span]) -> dict[str, str]:
    """Each tool call's lane: the first one free when it begins, so calls that overlap never share one."""
    reach: dict[str, tuple[float, float]] = {}
    for span in spans:
        if span.call_id is not None:
            start, end = reach.get(span.call_id, (span.start, span.end))
            reach[span.call_id] = (min(start, span.start), max(end, span.end))
    lane_ends: list[float] = []
    lanes: dict[str, str] = {}
    # By start, ties in the order the model asked for them (sorted is stable).
    for call_id, (start, end) in sorted(reach.items(), key=lambda item: item[1][0]):
        free = next((n for n, last in enumerate(lane_ends) if last <= start), len(lane_ends))
        if free == len(lane_ends):
            lane_ends.append(end)
        else:
            lane_ends[free] = end
        lanes[call_id] = f"tools {free + 1}"
    return lanes


def reply_ranges(messages: Sequence[AgentMessage], start: int = 0) -> dict[int, tuple[int, int]]:
    """Where each reply's timeline goes: its last assistant message's index → the reply's (first, end).

    A reply is the messages after a prompt up to the next prompt; `start` offsets the indexes.
    """
    ranges: dict[int, tuple[int, int]] = {}
    first: int | None = None
    last_assistant: int | None = None
    for index, message in enumerate(messages, start):
        if isinstance(message, UserMessage):
            if first is not None and last_assistant is not None:
                ranges[last_assistant] = (first, index)
            first, last_assistant = index + 1, None
        elif isinstance(message, AssistantMessage | AssistantMessageToolCall):
            last_assistant = index
            first = index if first is None else first
    if first is not None and last_assistant is not None:
        ranges[last_assistant] = (first, start + len(messages))
    return ranges
