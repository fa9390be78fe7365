"""The Costs page: what did this cost, where, and why. Figures come from yiem.costs (SQL)."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pandas as pd
import plotly.express as px
import streamlit as st
from sqlalchemy import Engine

from ui.bootstrap import store_engine
from yiem import costs
from yiem.store import database_url, seed_demo

DEMO_ROWS = 5_000
DEMO_DAYS = 90
TOP_CONVERSATIONS = 15
# Legends under the charts: beside them they take half the width of a two-column row.
LEGEND_BELOW: dict[str, Any] = {
    "legend": {"orientation": "h", "yanchor": "top", "y": -0.15, "title": {"text": ""}},
    "margin": {"t": 10},
}
ZONES = ["UTC", "Europe/London", "Europe/Paris", "America/New_York", "America/Los_Angeles", "Asia/Tokyo"]


@st.cache_data(ttl=30, show_spinner=False)
def provider_models(url: str) -> list[tuple[str, str]]:
    """The filter's choices: every provider/model with usage (cached briefly: they rarely change)."""
    return costs.filter_options(store_engine(url))


def dollars(value: float | None) -> str:
    """Cents from $1 up, hundredths of a cent below; halves round up, as on an invoice."""
    if value is None:
        return "—"
    # Sums of float costs carry noise (0.01125 may be 0.011249999…): cut it before rounding.
    exact = Decimal(f"{value:.10f}")
    step = Decimal("0.01") if abs(exact) >= 1 else Decimal("0.0001")
    return f"${exact.quantize(step, rounding=ROUND_HALF_UP):,}"


def tokens(value: int) -> str:
    """Exact up to a million; above, millions with one decimal, so the figure fits its card."""
    return f"{value / 1e6:,.1f}M" if value >= 1_000_000 else f"{value:,}"


def seconds(ms: float | None) -> str:
    return "—" if ms is None else f"{ms / 1000:.2f} s"


def percent(share: float | None) -> str:
    return "—" if share is None else f"{share:.1%}"


def delta(change: costs.HeadlineChange, metric: str) -> str | None:
    ratio = change.change(metric)
    return None if ratio is None else f"{ratio:+.1%}"


def breakdown_frame(rows: list[costs.BreakdownRow], name: str) -> pd.DataFrame:
    """One breakdown as a table: dollars stay numbers (sortable); unknown prices are empty, not $0."""
    total = sum(r.totals.cost_total for r in rows) or None
    return pd.DataFrame(
        [
            {
                name: r.label,
                "Requests": r.totals.requests,
                "Errors": r.totals.errors,
                "Input": r.totals.uncached_input_tokens,
                "Cached input": r.totals.cache_read_tokens,
                "Output": r.totals.output_tokens,
                "Cost": None if r.totals.unpriced_requests == r.totals.requests else r.totals.cost_total,
                "Share of cost": (r.totals.cost_total / total) if total else None,
                "Price": _price_note(r.totals),
            }
            for r in rows
        ]
    )


def _price_note(totals: costs.Counts) -> str:
    if totals.unpriced_requests == 0:
        return "known"
    if totals.unpriced_requests == totals.requests:
        return "unknown"
    return f"unknown for {totals.unpriced_requests:,} requests"


TABLE_COLUMNS: dict[str, Any] = {
    "Cost": st.column_config.NumberColumn("Cost", format="$%.4f", help="Empty when the price is unknown"),
    "Share of cost": st.column_config.NumberColumn("Share of cost", format="percent"),
    "Input": st.column_config.NumberColumn("Input", format="localized", help="Fresh input and cache writes"),
    "Cached input": st.column_config.NumberColumn("Cached input", format="localized"),
    "Output": st.column_config.NumberColumn("Output", format="localized"),
    "Requests": st.column_config.NumberColumn("Requests", format="localized"),
}


def show_breakdown(
    rows: list[costs.BreakdownRow], name: str, key: str, extra: dict[str, Any] | None = None
) -> None:
    frame = breakdown_frame(rows, name)
    config = dict(TABLE_COLUMNS)
    if extra:
        for column, (values, column_config) in extra.items():
            frame[column] = values
            config[column] = column_config
    # Added columns (provider, the Chat link) go right after the name, where they stay in view.
    order = [name, *(extra or {}), *(c for c in frame.columns if c != name and c not in (extra or {}))]
    st.dataframe(
        frame, hide_index=True, column_config=config, column_order=order, key=f"table_{key}", placeholder="—"
    )
    st.download_button(
        f"Download by {name.lower()} (CSV)",
        costs.breakdown_csv(rows, key),
        file_name=f"costs_by_{key}.csv",
        mime="text/csv",
        key=f"csv_{key}",
        icon=":material/download:",
    )


def empty_state(engine: Engine) -> None:
    st.info(
        "No usage recorded yet. Every reply in **Chat** records its tokens, cost and timing here.\n\n"
        f"To look around first, load demo data: {DEMO_ROWS:,} requests over the last {DEMO_DAYS} days "
        "across several providers and models, with demo conversations (they appear in Chat, without "
        "messages). For a bigger set run `python -m yiem.store seed-demo 1000000`."
    )
    if st.button("Load demo data", type="primary", icon=":material/dataset:"):
        with st.spinner("Writing demo usage…"):
            seed_demo(engine, DEMO_ROWS, days=DEMO_DAYS)
        st.cache_data.clear()
        st.rerun()


def remember_conversation() -> None:
    """Keep the picked conversation in the URL (`?conversation=ID`) before the page reruns."""
    picked = st.session_state["conversation_pick"]
    if picked is None:
        st.query_params.pop("conversation", None)
    else:
        st.query_params["conversation"] = picked


def choose_conversation(engine: Engine, top: list[costs.BreakdownRow], current: str | None) -> None:
    """The conversation filter, bound to the URL by hand: its choices change with the period."""
    options: list[str | None] = [None, *(r.conversation_id for r in top if r.conversation_id)]
    if current not in options:
        options.insert(1, current)
    titles = {r.conversation_id: r.label for r in top if r.conversation_id}
    if current and current not in titles:  # a shared link to a conversation outside the top 50
        titles.update(costs.conversation_titles(engine, [current]))
    st.selectbox(
        "Conversation",
        options,
        index=options.index(current),
        format_func=lambda cid: "All conversations" if cid is None else titles.get(cid, cid),
        help="The 50 most expensive conversations in the period",
        key="conversation_pick",
        on_change=remember_conversation,
    )


st.title("Costs")
url = database_url()
engine = store_engine(url)

stored = costs.data_range(engine)
if stored is None:
    empty_state(engine)
    st.stop()

now_ms = int(time.time() * 1000)
zone_default = st.context.timezone or "UTC"
zones = ZONES if zone_default in ZONES else [zone_default, *ZONES]
pairs = provider_models(url)

top_row = st.columns([2, 2, 2])
# The URL keeps the label (?period=Last+7+days): bound widgets store their displayed option.
period_label = top_row[0].selectbox(
    "Period", list(costs.PERIODS.values()), index=2, key="period", bind="query-params"
)
period = next(key for key, label in costs.PERIODS.items() if label == period_label)
tz = top_row[1].selectbox("Time zone", zones, index=zones.index(zone_default), key="tz", bind="query-params")
today = datetime.fromtimestamp(now_ms / 1000, tz=ZoneInfo(tz)).date()
dates: tuple[date, date] | None = None
if period == "custom":
    picked = top_row[2].date_input(
        "Dates", (today - timedelta(days=29), today), key="dates", bind="query-params", format="YYYY-MM-DD"
    )
    if isinstance(picked, tuple) and len(picked) == 2:
        dates = (picked[0], picked[1])
    else:
        st.info("Pick the last day of the range too.")
        st.stop()

filters = st.columns([2, 2, 3])
providers = filters[0].multiselect(
    "Provider",
    sorted({p for p, _ in pairs}),
    key="provider",
    bind="query-params",
    placeholder="All providers",
)
models = filters[1].multiselect(
    "Model",
    sorted({m for p, m in pairs if not providers or p in providers}),
    key="model",
    bind="query-params",
    placeholder="All models",
)

try:
    if period == "all":
        start_ms, end_ms = stored
    else:
        start_ms, end_ms = costs.period_range(period, tz, now_ms, dates)
    base = costs.UsageFilter(
        start_ms=start_ms, end_ms=end_ms, providers=tuple(providers), models=tuple(models)
    )
except costs.UsageFilterError as error:
    st.error(str(error))
    st.stop()

conversation = st.query_params.get("conversation") or None
flt = replace(base, conversation_id=conversation)
data = costs.dashboard(engine, flt, tz, top_filter=base)
summary, change, top_in_period = data.summary, data.headline, data.top_conversations
with filters[2]:
    choose_conversation(engine, top_in_period, conversation)
now = change.current.totals

if now.requests == 0:
    st.info("No requests match these filters in this period. Widen the period or clear a filter.")
    st.stop()

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
    "Input from cache", percent(now.cache_share), delta(change, "cache_share"), help="Cache reads / all input"
)
row2[1].metric(
    "Median latency", seconds(change.current.median_latency_ms), delta(change, "median_latency_ms"), "inverse"
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
        "local models, or models the catalogue has no price for. "
        "They are left out of the cost, not counted as free; add a price in your models file to count them."
    )

series = summary.series()
grain = "hour" if summary.granularity == "hour" else "day"
tick_format = "%b %d %H:%M" if grain == "hour" else "%b %d"
by_time = pd.DataFrame(
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
        for r in series
    ]
)
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

by_model, by_provider, by_conversation, by_stop, prices = st.tabs(
    ["By model", "By provider", "By conversation", "By stop reason", "Prices"]
)
model_rows = summary.breakdown("model")
with by_model:
    show_breakdown(
        model_rows,
        "Model",
        "model",
        {"Provider": ([r.key.split("/", 1)[0] for r in model_rows], st.column_config.TextColumn("Provider"))},
    )
with by_provider:
    show_breakdown(summary.breakdown("provider"), "Provider", "provider")
with by_conversation:
    top = [r for r in top_in_period if conversation is None or r.conversation_id == conversation]
    top = top[:TOP_CONVERSATIONS] if top else costs.top_conversations(engine, flt, 1)
    links = [f"chat?c={r.conversation_id}" if r.conversation_id else None for r in top]
    st.caption(f"The {TOP_CONVERSATIONS} most expensive conversations in the period.")
    show_breakdown(
        top,
        "Conversation",
        "conversation",
        {"Open": (links, st.column_config.LinkColumn("Open", display_text="Open in Chat"))},
    )
with by_stop:
    show_breakdown(summary.breakdown("stop_reason"), "Stop reason", "stop_reason")
with prices:
    from yiem.providers.catalog import ModelsFileError, get_model

    try:
        listed = [get_model(r.key.split("/", 1)[0], r.label) for r in model_rows]
    except ModelsFileError as error:
        st.error(f"The models file could not be read, so prices cannot be shown: {error}")
        listed = []
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "Provider": m.provider,
                    "Model": m.id,
                    "Input / 1M": m.cost.input if m.price_known else None,
                    "Cached input / 1M": m.cost.cache_read if m.price_known else None,
                    "Cache write / 1M": m.cost.cache_write if m.price_known else None,
                    "Output / 1M": m.cost.output if m.price_known else None,
                    "Price from": m.price_source or ("catalogue" if m.price_known else "price unknown"),
                }
                for m in listed
            ]
        ),
        hide_index=True,
        column_config={
            name: st.column_config.NumberColumn(name, format="$%.3f")
            for name in ("Input / 1M", "Cached input / 1M", "Cache write / 1M", "Output / 1M")
        },
        key="table_prices",
        placeholder="—",
    )
    st.caption(
        "Today's prices in the catalogue (genai-prices) or your models file. Each request's cost was "
        "recorded at the price of its day."
    )

st.download_button(
    f"Download the {now.requests:,} filtered requests (CSV)",
    lambda: "".join(costs.iter_csv(engine, flt)),
    file_name="usage.csv",
    mime="text/csv",
    key="csv_rows",
    icon=":material/download:",
)
