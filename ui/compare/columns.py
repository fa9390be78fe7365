"""The live columns: each column's answer as it streams, its figures underneath, Stop for all."""

from __future__ import annotations

import streamlit as st

from ui.messages import continue_in_chat, draw_blocks, draw_tool_call, tool_results_by_call
from ui.review_form import draw_reply_review
from ui.state import COMPARE_BLIND, COMPARE_RUN
from ui.timeline import draw_timeline
from yiem.amounts import reply_words, stream_words
from yiem.compare import ColumnFigures, ColumnState, Comparison
from yiem.reply_timeline import reply_ranges
from yiem.safe_markdown import safe_markdown
from yiem.types import AssistantMessage, AssistantMessageToolCall


def figures_caption(figures: ColumnFigures) -> str:
    """Chat's reply caption, then how it streamed: `120 in · 45 out · 0 cached · $0.000123 · 1.40 s ·
    TTFT 400 ms · 52.0 tok/s`."""
    reply = reply_words(
        figures.input_tokens, figures.output_tokens, figures.cached_tokens, figures.cost, figures.total_ms
    )
    return f"{reply} · {stream_words(figures.ttft_ms, figures.tokens_per_s)}"


def _heading(index: int, column: ColumnState, blind: bool) -> str:
    return f"Model {'AB'[index]}" if blind and index < 2 else column.spec.label


def _draw_latest_timeline(index: int, column: ColumnState) -> None:
    # The latest reply's: earlier ones were answers to earlier prompts, no longer on screen.
    messages = column.agent.state.messages if column.agent is not None else []
    replies = reply_ranges(messages)
    if replies:
        first, end = replies[max(replies)]
        draw_timeline(messages[first:end], key=f"cmp-timeline-{index}-{len(messages)}")


def _draw_turn(column: ColumnState) -> None:
    # The finished replies as Chat draws them (text, then each tool call with its result), then
    # the reply streaming now.
    results = tool_results_by_call(column.turn)
    for message in list(column.turn):
        if isinstance(message, AssistantMessage | AssistantMessageToolCall):
            draw_blocks(message.content)
            if isinstance(message, AssistantMessageToolCall):
                for call in message.tool_calls:
                    draw_tool_call(call, results.get(call.id))
    if column.partial:
        st.markdown(safe_markdown(column.partial))


def _draw_column(
    index: int, column: ColumnState, blind: bool, cheapest: bool, fastest: bool, finished: bool
) -> None:
    st.subheader(_heading(index, column, blind))
    badges = (["cheapest"] if cheapest else []) + (["fastest"] if fastest else [])
    if badges:
        st.badge(" · ".join(badges), icon=":material/star:", color="green")
    _draw_turn(column)
    if column.status == "running":
        st.caption("Answering…")
    elif column.status == "error":
        st.error(column.error or "This column failed.")
    elif column.status == "stopped":
        st.caption("Stopped.")
    if column.status != "idle":
        st.caption(figures_caption(column.figures))
    if finished and not blind:  # its bars name the model, which a blind vote must not show yet
        _draw_latest_timeline(index, column)
    if column.conversation_id and column.status != "running" and not blind:
        continue_in_chat(column.conversation_id)
        if finished and column.turns:
            draw_reply_review("compare", column.conversation_id, str(column.turns))


def draw_columns(comparison: Comparison, blind: bool) -> None:
    """The columns side by side, the cheapest and fastest marked once they finish."""
    cheapest, fastest = (None, None) if comparison.running else comparison.marks()
    for index, (box, column) in enumerate(
        zip(st.columns(len(comparison.columns)), comparison.columns, strict=True)
    ):
        with box:
            _draw_column(index, column, blind, cheapest == index, fastest == index, not comparison.running)


@st.fragment(run_every=0.4)
def draw_live() -> None:
    """While the columns answer: redraw them and offer Stop; once all end, redraw the page once."""
    comparison: Comparison | None = COMPARE_RUN.get()
    if comparison is None:
        return
    if not comparison.running:
        st.rerun(scope="app")  # the page then draws the finished columns without this timer
    if st.button("Stop", key="cmp_stop", icon=":material/stop_circle:", type="primary"):
        comparison.stop()
    draw_columns(comparison, bool(COMPARE_BLIND.get()))
