"""The Costs page's tables: a breakdown per model, provider, conversation or stop reason, and prices."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from yiem import costs
from yiem.amounts import DOLLARS_COLUMN, PRICE_COLUMN
from yiem.types import LlmModel

TABLE_COLUMNS: dict[str, Any] = {
    "Cost": st.column_config.NumberColumn(
        "Cost", format=DOLLARS_COLUMN, help="Empty when the price is unknown"
    ),
    "Share of cost": st.column_config.NumberColumn("Share of cost", format="percent"),
    "Input": st.column_config.NumberColumn("Input", format="localized", help="Fresh input and cache writes"),
    "Cached input": st.column_config.NumberColumn("Cached input", format="localized"),
    "Output": st.column_config.NumberColumn("Output", format="localized"),
    "Requests": st.column_config.NumberColumn("Requests", format="localized"),
}
PRICE_COLUMNS = ("Input / 1M", "Cached input / 1M", "Cache write / 1M", "Output / 1M")


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


def draw_breakdown(
    rows: list[costs.BreakdownRow], name: str, key: str, extra: dict[str, Any] | None = None
) -> None:
    """The table and its CSV download; `extra` adds columns as {name: (values, column config)}."""
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


def draw_tool_calls(rows: list[costs.BreakdownRow]) -> None:
    """Spending per MCP tool (the requests that read its results) and per server's sampling."""
    st.caption(
        "A tool call's cost is the request that carried its result back to the model (a turn that "
        "ran several tools is charged to them together); a server's sampling is what your model "
        "spent answering it. The requests that asked for the tools are not counted here."
    )
    if not rows:
        st.info("No request in these filters followed a tool call or answered a server's sampling request.")
        return
    draw_breakdown(rows, "Tool call", "tool")


def draw_models_table(rows: list[costs.BreakdownRow]) -> None:
    """The breakdown by model, with each model's provider beside its name."""
    providers = [r.key.split("/", 1)[0] for r in rows]
    draw_breakdown(rows, "Model", "model", {"Provider": (providers, st.column_config.TextColumn("Provider"))})


def draw_conversations_table(rows: list[costs.BreakdownRow], shown: int) -> None:
    """The most expensive conversations, each with a link that opens it in Chat."""
    links = [f"chat?c={r.conversation_id}" if r.conversation_id else None for r in rows]
    st.caption(f"The {shown} most expensive conversations in the period.")
    draw_breakdown(
        rows,
        "Conversation",
        "conversation",
        {"Open": (links, st.column_config.LinkColumn("Open", display_text="Open in Chat"))},
    )


def draw_prices(models: list[LlmModel]) -> None:
    """Today's per-1M prices of the listed models and where each came from; unknown prices are empty."""
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
                for m in models
            ]
        ),
        hide_index=True,
        column_config={
            name: st.column_config.NumberColumn(name, format=PRICE_COLUMN) for name in PRICE_COLUMNS
        },
        key="table_prices",
        placeholder="—",
    )
    st.caption(
        "Today's prices in the catalogue (genai-prices) or your models file. Each request's cost was "
        "recorded at the price of its day."
    )
