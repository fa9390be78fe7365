"""The Costs page's cards: each figure of the period against the previous period of the same length."""

from __future__ import annotations

import streamlit as st

from ui.costs.numbers import delta, dollars, percent, seconds, tokens
from yiem import costs


def draw_headline(change: costs.HeadlineChange) -> None:
    """Two rows of cards, then a warning when some requests have no known price."""
    now = change.current.totals
    compared = "vs the previous period of the same length" if change.previous is not None else None
    row1 = st.columns(5)
    all_unpriced = now.unpriced_requests == now.requests
    row1[0].metric(
        "Total cost",
        "unknown" if all_unpriced else dollars(now.cost_total),
        None if all_unpriced else delta(change, "cost_total"),
        "off",
        help=compared,
    )
    row1[1].metric("Requests", tokens(now.requests), delta(change, "requests"), "off", help=compared)
    row1[2].metric(
        "Input tokens", tokens(now.uncached_input_tokens), delta(change, "uncached_input_tokens"), "off"
    )
    row1[3].metric("Output tokens", tokens(now.output_tokens), delta(change, "output_tokens"), "off")
    row1[4].metric(
        "Cached input tokens", tokens(now.cache_read_tokens), delta(change, "cache_read_tokens"), "off"
    )
    row2 = st.columns(5)
    row2[0].metric(
        "Input from cache",
        percent(now.cache_share),
        delta(change, "cache_share"),
        help="Cache reads / all input",
    )
    row2[1].metric(
        "Median latency",
        seconds(change.current.median_latency_ms),
        delta(change, "median_latency_ms"),
        "inverse",
    )
    row2[2].metric(
        "Median time to first token",
        seconds(change.current.median_ttft_ms),
        delta(change, "median_ttft_ms"),
        "inverse",
    )
    row2[3].metric("Error rate", percent(now.error_rate), delta(change, "error_rate"), "inverse")
    row2[4].metric("Reasoning tokens", tokens(now.reasoning_tokens), delta(change, "reasoning_tokens"), "off")
    if now.unpriced_requests:
        st.warning(
            f"**Price unknown** for {now.unpriced_requests:,} of these requests: "
            "local models, or models the catalogue has no price for. They are left out of the cost, "
            "not counted as free; add a price in your models file to count them."
        )
