"""The "Timeline" expander under a reply: where its time went, drawn only while it is open."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
import streamlit as st

from yiem.reply_timeline import MODEL_LANE, TimelineBar, reply_timeline
from yiem.types import AgentMessage

# One colour per kind of span; failures in red whatever their kind.
COLOURS = {"llm": "#4C78A8", "tool": "#59A14F", "hook": "#B07AA1", "wait": "#BAB0AC"}
FAILED = "#E15759"
LANE_HEIGHT = 46


def timeline_figure(bars: Sequence[TimelineBar]) -> go.Figure:
    """A horizontal bar per span on the reply's clock; each lane a row, the first token marked."""
    lanes = [MODEL_LANE, *sorted({bar.lane for bar in bars} - {MODEL_LANE})]
    figure = go.Figure()
    figure.add_bar(
        y=[bar.lane for bar in bars],
        x=[max(bar.end_ms - bar.start_ms, 0.5) for bar in bars],  # a 0 ms hook still shows
        base=[bar.start_ms for bar in bars],
        orientation="h",
        marker_color=[FAILED if bar.failed else COLOURS[bar.kind] for bar in bars],
        text=[bar.label for bar in bars],
        textposition="auto",
        insidetextanchor="start",
        hovertext=[f"{bar.kind}: {bar.label}" for bar in bars],
        hoverinfo="text",
        showlegend=False,
    )
    first_tokens = [bar for bar in bars if bar.first_token_ms is not None]
    if first_tokens:
        figure.add_scatter(
            y=[bar.lane for bar in first_tokens],
            x=[bar.first_token_ms for bar in first_tokens],
            mode="markers+text",
            marker={"symbol": "line-ns", "size": 26, "line": {"width": 3, "color": "#F28E2B"}},
            text=["TTFT"] * len(first_tokens),
            textposition="top center",
            hoverinfo="skip",
            showlegend=False,
        )
    figure.update_layout(
        barmode="overlay",
        height=90 + LANE_HEIGHT * len(lanes),
        margin={"t": 20, "b": 40, "l": 10, "r": 10},
        xaxis={"title": {"text": "ms since the reply began"}, "rangemode": "tozero"},
        yaxis={"categoryorder": "array", "categoryarray": list(reversed(lanes))},
    )
    return figure


def draw_timeline(messages: Sequence[AgentMessage], key: str) -> None:
    """The expander, for a reply that recorded spans; the figure is built only while it is open."""
    if not any(getattr(message, "timeline", None) is not None for message in messages):
        return  # saved before timelines were kept: nothing to show, so no expander either
    with st.expander("Timeline", icon=":material/timeline:", key=key, on_change="rerun") as box:
        if not box.open:
            return
        st.plotly_chart(timeline_figure(reply_timeline(messages)), key=f"{key}-chart")
