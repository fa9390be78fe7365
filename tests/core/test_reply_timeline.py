"""A reply's timeline as bars: lanes for overlapping tool calls, labels, the first token, one run only."""

from __future__ import annotations

from yiem.reply_timeline import MODEL_LANE, reply_ranges, reply_timeline
from yiem.timeline import Span, Timeline
from yiem.types import (
    AgentToolCall,
    AssistantMessage,
    AssistantMessageToolCall,
    LlmUsage,
    TextContent,
    ToolResultMessage,
    UsageCost,
    UserMessage,
)

RUN = "run-a"


def _asked(*call_ids: str, start: float = 10.0, end: float = 11.0) -> AssistantMessageToolCall:
    return AssistantMessageToolCall(
        tool_calls=[AgentToolCall(id=call_id, name="fetch", arguments={}) for call_id in call_ids],
        usage=LlmUsage(input_tokens=1200, output_tokens=30),
        cost=UsageCost(input=0.0036, output=0.00045, total=0.00405),
        timeline=Timeline(RUN, [Span("llm", "gpt-4o", start, end, first_token=start + 0.25)]),
    )


def _result(
    call_id: str, start: float, end: float, *, failed: bool = False, run: str = RUN
) -> ToolResultMessage:
    spans = [Span("tool", "fetch", start, end, call_id=call_id, server="web")]
    return ToolResultMessage(
        tool_call_id=call_id, tool_name="fetch", is_error=failed, timeline=Timeline(run, spans)
    )


def test_overlapping_calls_get_their_own_lanes_and_later_ones_reuse_them() -> None:
    messages = [
        _asked("a", "b", "c"),
        _result("a", 11.0, 12.0),
        _result("b", 11.0, 11.5, failed=True),
        _result("c", 11.6, 11.9),  # starts after b ended: b's lane again
        AssistantMessage(
            content=[TextContent(text="done")],
            timeline=Timeline(RUN, [Span("llm", "gpt-4o", 12.1, 12.6, first_token=12.2)]),
        ),
    ]
    bars = reply_timeline(messages)
    assert [bar.lane for bar in bars] == [MODEL_LANE, "tools 1", "tools 2", "tools 2", MODEL_LANE]
    first = bars[0]
    assert (first.start_ms, first.end_ms, first.first_token_ms) == (0.0, 1000.0, 250.0)
    # LLM bars: model, duration, time to first token, tokens and cost; an unpriced reply says so.
    assert first.label == "gpt-4o · 1.00 s · first token 250 ms · 1,200 in / 30 out · $0.004050"
    assert bars[-1].label.endswith("0 in / 0 out · price unknown")
    assert bars[1].label == "fetch (web) · 1.00 s" and not bars[1].failed
    assert bars[2].failed and bars[2].start_ms == 1000.0


def test_only_the_last_runs_spans_are_drawn_and_old_replies_have_none() -> None:
    stale = _result("a", 500.0, 900.0, run="an-earlier-run")
    assert [bar.lane for bar in reply_timeline([stale, _asked("a")])] == [MODEL_LANE]
    assert reply_timeline([AssistantMessage(content=[TextContent(text="saved before timelines")])]) == []


def test_each_reply_is_placed_under_its_last_assistant_message() -> None:
    prompt = UserMessage(content=[TextContent(text="q")])
    messages = [prompt, _asked("a"), _result("a", 11.0, 12.0), AssistantMessage(), prompt, AssistantMessage()]
    assert reply_ranges(messages) == {3: (1, 4), 5: (5, 6)}
    # Drawn from a later start (earlier messages hidden), the indexes stay those of the whole chat.
    assert reply_ranges(messages[4:], start=4) == {5: (5, 6)}
    # A reply whose run ended on a tool result still goes under its assistant message.
    assert reply_ranges([prompt, _asked("a"), _result("a", 11.0, 12.0)]) == {1: (1, 3)}
