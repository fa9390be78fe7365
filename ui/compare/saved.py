"""Saved comparisons: the page's own list (in the sidebar), reopening one from `?cmp=ID`."""

from __future__ import annotations

import streamlit as st

from ui.compare.setup import preset_columns
from ui.state import COMPARE_BLIND, COMPARE_RUN, COMPARE_VOTED, TOOL_REGISTRY
from yiem.compare import Comparison, ComparisonNotFoundError, ComparisonStore
from yiem.store import StoreError

URL_KEY = "cmp"
"""The query parameter naming the comparison shown (`?cmp=ID`), shareable like Chat's `?c=`."""


def _new() -> None:
    COMPARE_RUN.pop()
    COMPARE_BLIND.pop()
    st.query_params.pop(URL_KEY, None)


def follow_url(store: ComparisonStore) -> Comparison | None:
    """The comparison to show: the one `?cmp=` names (reopened from the store), else the session's."""
    comparison: Comparison | None = COMPARE_RUN.get()
    wanted = st.query_params.get(URL_KEY)
    if not wanted or (comparison is not None and (comparison.record_id == wanted or comparison.running)):
        if comparison is not None and comparison.record_id and not wanted:
            st.query_params[URL_KEY] = comparison.record_id
        return comparison
    try:
        record = store.get(wanted)
        comparison = Comparison.reopen(record, store, tools=TOOL_REGISTRY().tools)
    except (ComparisonNotFoundError, StoreError) as error:
        st.error(str(error))
        st.query_params.pop(URL_KEY, None)
        return comparison
    COMPARE_RUN.set(comparison)
    COMPARE_BLIND.pop()
    COMPARE_VOTED.pop()
    preset_columns([column.spec for column in comparison.columns])
    return comparison


def show_in_url(comparison: Comparison) -> None:
    """Once a comparison is saved, its URL names it."""
    if comparison.record_id and st.query_params.get(URL_KEY) != comparison.record_id:
        st.query_params[URL_KEY] = comparison.record_id


def draw_saved(store: ComparisonStore, current: str | None) -> None:
    """The sidebar: New comparison, then the saved ones, most recent first, each a shareable link."""
    with st.sidebar:
        st.button("New comparison", icon=":material/add:", key="cmp_new", on_click=_new)
        st.subheader("Saved comparisons")
        try:
            records = store.list_comparisons()
        except StoreError as error:
            st.error(str(error))
            return
        if not records:
            st.caption("None yet: each comparison is saved once its first prompt is sent.")
        for record in records:
            # A blind pair's models stay unnamed here too, or the list would give the vote away.
            models = "blind vote" if record.blind else ", ".join(c.spec.label for c in record.columns)
            st.page_link(
                "ui/pages/compare.py",
                label=("▸ " if record.id == current else "") + (record.title or "Untitled"),
                help=f"{models} · {len(record.prompts)} prompt(s) · {record.updated:%Y-%m-%d %H:%M} UTC",
                query_params={URL_KEY: record.id},
            )
