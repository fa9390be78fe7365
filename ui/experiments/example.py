"""What a new person sees on Experiments: what the page is for, "Start from an example", the example's
tab sentences; and, for any experiment, Delete and the run's cost line."""

from __future__ import annotations

import streamlit as st

from ui.experiments.state import save, show_draft
from ui.state import EXAMPLE_ERROR, EXPERIMENT_ID
from yiem.amounts import dollars
from yiem.amounts import tokens as token_words
from yiem.experiments import (
    NO_JUDGE,
    TAB_HELP,
    ExperimentDraft,
    ExperimentResult,
    example_experiment,
    is_example,
)
from yiem.providers.local_llm import is_installed
from yiem.store import StoreError

FIRST_RUN = (
    "Experiments send the same tasks to several models or prompts and score every reply, so you can "
    "see which one does better. To begin, start from the example (ten short questions, two system "
    "prompts, two scorers; it runs on the embedded model in about a minute), or add items on the "
    "Dataset tab."
)


def start_example() -> None:
    """The button's handler: open the example and save it as the person's own."""
    # Nothing is open where the button is drawn, yet one click once ran this twice (ci32: two examples
    # saved 54 ms apart): a second call finds the first one's example open and leaves it at that.
    if EXPERIMENT_ID.get() is not None:
        return
    example = example_experiment()
    show_draft(example)
    try:
        st.query_params["e"] = save(example)
    except StoreError as error:
        EXAMPLE_ERROR.set(f"The example could not be saved: {error}")


def draw_first_run() -> None:
    """The empty page (none of the person's own experiments yet): what it is for, and the example."""
    st.info(FIRST_RUN, icon=":material/science:")
    st.button(
        "Start from an example",
        key="exp_start_example",
        icon=":material/auto_awesome:",
        type="primary",
        on_click=start_example,
    )
    if problem := EXAMPLE_ERROR.pop():
        st.error(problem)


def draw_tab_help(draft: ExperimentDraft, tab: str) -> None:
    """Above each tab of the example, a sentence saying what the tab is for."""
    if not is_example(draft):
        return
    st.caption(TAB_HELP[tab])
    if tab == "scorers" and all(scorer.kind != "rubric" for scorer in draft.scorers) and not is_installed():
        st.caption(NO_JUDGE)


def draw_cost_line(result: ExperimentResult) -> None:
    """One line: what the whole run cost, judges included; a price unknown is said, never shown as $0."""
    cost = result.cost()
    tokens = (
        f"{token_words(cost.input_tokens)} tokens in, {token_words(cost.output_tokens)} out, judges included"
    )
    if cost.unpriced == 0:
        st.markdown(f":material/payments: **Cost of this run:** {dollars(cost.known_usd)} ({tokens}).")
    elif cost.unpriced == cost.outcomes:
        st.markdown(
            f":material/payments: **Cost of this run:** price unknown: its {cost.outcomes} replies came from "
            f"a model without a price list, such as the embedded one on this machine ({tokens})."
        )
    else:
        st.markdown(
            f":material/payments: **Cost of this run:** {dollars(cost.known_usd)} for the priced replies, "
            f"and {cost.unpriced} of {cost.outcomes} replies of unknown price ({tokens})."
        )
