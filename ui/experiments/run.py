"""The run controls: settings, Run, the progress bar (count, ETA, cost so far), Stop and Resume."""

from __future__ import annotations

from typing import Any

import streamlit as st

from ui.experiments.agent_settings import draw_user_model
from ui.experiments.state import (
    BUDGET_FIELD,
    CONCURRENCY_FIELD,
    REPEATS_FIELD,
    experiment_store,
    live_run,
    save,
    with_session_keys,
)
from ui.state import EXPERIMENT_RUN, RUN_ERROR, TOOL_REGISTRY
from yiem.amounts import dollars, elapsed
from yiem.experiments import (
    BackgroundRun,
    ExperimentDraft,
    ExperimentError,
    Progress,
    RunRecord,
    RunSpec,
    check_spec,
)
from yiem.store import StoreError

POLL_SECONDS = 0.5


def _tools() -> dict[str, Any]:
    registry = TOOL_REGISTRY.get()
    return dict(registry.tools) if registry is not None else {}


def draw_run_settings(draft: ExperimentDraft) -> None:
    a, b, c = st.columns(3)
    draft.repeats = int(
        a.number_input("Repeats per item", 1, 20, value=draft.repeats, key=REPEATS_FIELD.name)
    )
    draft.concurrency = int(
        b.number_input(
            "Items at once per provider", 1, 64, value=draft.concurrency, key=CONCURRENCY_FIELD.name
        )
    )
    budget = c.number_input(
        "Budget (stop at $)",
        0.0,
        value=draft.budget_usd or 0.0,
        step=0.5,
        key=BUDGET_FIELD.name,
        help="0: no budget. Items of a model without a price count nothing.",
    )
    draft.budget_usd = budget or None
    draw_user_model(draft)


def _keyed(spec: RunSpec) -> RunSpec:
    """The spec with the keys typed this session (the variants' and the user model's)."""
    player = with_session_keys([spec.user_model])[0] if spec.user_model is not None else None
    return spec.model_copy(update={"variants": with_session_keys(spec.variants), "user_model": player})


def start_run(draft: ExperimentDraft) -> None:
    """Save the draft and start a new run of it in the background."""
    spec = draft.spec()
    try:
        check_spec(spec)
    except ExperimentError as error:
        st.error(str(error))
        return
    try:
        experiment_id = save(draft)
        # The run goes with the keys typed this session; the store keeps it without them.
        keyed = _keyed(spec)
        EXPERIMENT_RUN.set(BackgroundRun.start(experiment_store(), keyed, experiment_id, _tools()))
    except StoreError as error:  # no longer shared for editing since the page was drawn
        st.error(f"The run was not started: {error}")


def resume_run(record: RunRecord) -> bool:
    """Run what a stopped or interrupted run has left; False (said in the page) when it was refused."""
    store = experiment_store()
    try:
        spec = store.load_spec(record.id)
        EXPERIMENT_RUN.set(BackgroundRun.resume(store, _keyed(spec), _tools()))
    except StoreError as error:  # no longer shared for editing (or at all) since the page was drawn
        st.error(f"The run was not resumed: {error}")
        return False
    return True


def _eta(seconds: float | None) -> str:
    if seconds is None:
        return "estimating…"
    return f"about {elapsed(seconds)} left"


def progress_text(progress: Progress) -> str:
    """The bar's line: count, time left, cost so far (never $0 for prices unknown), errors."""
    parts = [f"{progress.done} / {progress.total} items", _eta(progress.eta_s)]
    if progress.done:
        known = progress.cost_known
        if known is None:
            parts.append("cost so far: price unknown")
        else:
            unknown = f" (+{progress.unpriced} items of unknown price)" if progress.unpriced else ""
            parts.append(f"{dollars(known)} so far{unknown}")
    if progress.errors:
        parts.append(f"{progress.errors} errors")
    return " · ".join(parts)


@st.fragment(run_every=POLL_SECONDS)
def draw_progress() -> None:
    """While a run is live: its bar and Stop; once it ends, the whole page redraws with its results."""
    run = live_run()
    if run is None:
        return
    if not run.running:
        EXPERIMENT_RUN.pop()
        if run.error:
            RUN_ERROR.set(run.error)
        st.rerun(scope="app")
    progress = run.progress
    if progress is None:
        st.progress(0.0, text="Starting…")
    else:
        share = progress.done / progress.total if progress.total else 1.0
        st.progress(share, text=progress_text(progress))
    if run.signal.aborted:
        st.caption("Stopping: the items in flight are dropped and run again on resume.")
    elif st.button("Stop", key="exp_stop", icon=":material/stop_circle:", type="primary"):
        run.stop()
        st.rerun(scope="fragment")
