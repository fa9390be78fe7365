"""Compare's first run: what the page is for, three prompts to send with one click, and the columns
preset apart (the second answers like a pirate) so the first answers differ."""

from __future__ import annotations

import streamlit as st

from ui import bootstrap
from ui.state import COMPARE_COUNT, COMPARE_PICKED, COMPARE_SPECS
from yiem.compare import FIRST_RUN, SUGGESTED_PROMPTS, ComparisonStore, example_columns
from yiem.store import StoreError


def first_run(store: ComparisonStore) -> bool:
    """Nothing of the person's own yet: no comparison saved (a store that cannot be read: not first)."""
    try:
        return not store.list_comparisons(limit=1)
    except StoreError:
        return False


def preset_example(first: bool) -> None:
    """On a first run, the columns start as the example's (once a session: what is typed then stays)."""
    if first and not COMPARE_SPECS.present() and not COMPARE_COUNT.present():
        COMPARE_SPECS.set(example_columns(bootstrap.settings().model_only()))


def suggested_prompt() -> str:
    """The suggestion clicked just now, if any ("" when none)."""
    picked: str = COMPARE_PICKED.pop("")
    return picked


def _pick(text: str) -> None:
    COMPARE_PICKED.set(text)


def draw_suggestions() -> None:
    """The sentence on what the page is for, and the three suggested prompts as buttons."""
    st.info(FIRST_RUN, icon=":material/compare:")
    st.caption("Try one of these:")
    for index, (column, text) in enumerate(
        zip(st.columns(len(SUGGESTED_PROMPTS)), SUGGESTED_PROMPTS, strict=True)
    ):
        column.button(
            text, key=f"cmp_suggestion_{index}", icon=":material/lightbulb:", on_click=_pick, args=(text,)
        )
