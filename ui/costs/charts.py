"""The Costs page's charts: cost per day (or hour) stacked by model, and tokens split by kind."""

from __future__ import annotations

from typing import Any

import pandas as pd
import plotly.express as px
import streamlit as st

from yiem import costs

# Legends under the charts: beside them they take half the width of a two-column row.
LEGEND_BELOW: dict[str, Any] = {
    "legend": {"orientation": "h", "yanchor": "top", "y": -0.15, "title": {"text": ""}},
    "margin": {"t": 10},
}


def series_frame(summary: costs.Summary) -> pd.DataFrame:
    """One row per time bucket and model; "Priced" is False where no request had a known price."""
    return pd.DataFrame(
        [
            {
                "When": r.bucket,
                "Model": r.model,
                "Cost": r.totals.cost_total,
                "Input": r.totals.uncached_input_tokens,
                "Cached input": r.totals.cache_read_tokens,
                "Output": r.totals.output_tokens,
                "Priced": r.totals.unpriced_requests < r.totals.requests,
            }
            for r in summary.series()
        ]
    )


def draw_charts(summary: costs.Summary, tz: str) -> None:
    """The two charts side by side, in the view's time zone."""
    by_time = series_frame(summary)
    grain = "hour" if summary.granularity == "hour" else "day"
    tick_format = "%b %d %H:%M" if grain == "hour" else "%b %d"
    charts = st.columns(2)
    with charts[0]:
        st.subheader(f"Cost per {grain}")
        priced = by_time[by_time["Priced"]]
        if priced.empty:
            st.info("No request in this period has a known price, so there is no cost to chart.")
        else:
            cost_chart = px.bar(
                priced, x="When", y="Cost", color="Model", labels={"When": "", "Cost": "Cost ($)"}
            )
            cost_chart.update_layout(barmode="stack", yaxis_tickprefix="$", **LEGEND_BELOW)
            cost_chart.update_xaxes(tickformat=tick_format)
            st.plotly_chart(cost_chart, key="cost_chart")
    with charts[1]:
        st.subheader(f"Tokens per {grain}")
        token_sums = by_time.groupby("When", as_index=False)[["Input", "Cached input", "Output"]].sum()
        token_chart = px.bar(
            token_sums.melt(id_vars="When", var_name="Kind", value_name="Tokens"),
            x="When",
            y="Tokens",
            color="Kind",
            labels={"When": ""},
        )
        token_chart.update_layout(barmode="stack", **LEGEND_BELOW)
        token_chart.update_xaxes(tickformat=tick_format)
        st.plotly_chart(token_chart, key="token_chart")
    st.caption(f"Times in {tz}, by local {grain}.")
