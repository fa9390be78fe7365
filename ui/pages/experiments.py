"""The Experiments page: the same tasks across models, prompts and tools, scored and compared.

It reads top to bottom: the URL and state (which experiment, the live run), the data (its runs and
results from yiem.experiments), then the drawing (parts in ui/experiments/).
"""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import urlencode

import streamlit as st

from ui import bootstrap
from ui.experiments.charts import draw_comparison, draw_history, draw_quality_cost, draw_scorer_bars
from ui.experiments.dataset import draw_dataset
from ui.experiments.example import draw_cost_line, draw_first_run, draw_tab_help
from ui.experiments.replay import draw_replays
from ui.experiments.results import draw_exports, draw_matrix, draw_summary
from ui.experiments.review import draw_assignment, draw_judgment, draw_queue
from ui.experiments.run import draw_progress, draw_run_settings, resume_run, start_run
from ui.experiments.setup import draw_scorers, draw_variants
from ui.experiments.sharing import draw_message, draw_sharing, picker_label
from ui.experiments.spec_export import draw_spec_export
from ui.experiments.state import NAME_FIELD, draft, experiment_store, live_run, open_experiment, save
from ui.state import (
    EXPERIMENT_ID,
    EXPERIMENT_TAB,
    RESULTS_TAB,
    RUN_ERROR,
    TOOL_REGISTRY,
    experiment_picker,
)
from yiem.experiments import ExperimentResult, RunRecord
from yiem.store import StoreError

HISTORY_RUNS = 10

bootstrap.ensure_session()
st.title("Experiments")

# The URL and state: the experiment named in the URL (?e=ID), its draft, the run in flight.
store = experiment_store()
saved = store.list_experiments()
by_id_saved = {e.id: e for e in saved}
wanted = st.query_params.get("e")
# A pick in the picker is acted on here, not in an on_change handler: with another rerun already
# queued, Streamlit stops a handler at its first session-state access and the pick was lost (ci36).
# The picker's key names the experiment it was drawn for, so its value differs only by a pick.
picked = experiment_picker(EXPERIMENT_ID.get()).get()
if picked is not None and picked != (EXPERIMENT_ID.get() or "") and (not picked or picked in by_id_saved):
    wanted = picked or None
    if wanted is None:
        st.query_params.pop("e", None)
    else:
        st.query_params["e"] = wanted
if wanted is not None and wanted not in by_id_saved:
    # Deleted, or someone else's and not shared: said as Chat says it of a conversation's link.
    st.warning("That experiment no longer exists or is not shared with you; here is a new one instead.")
    del st.query_params["e"]
    wanted = None
if wanted != EXPERIMENT_ID.get():
    open_experiment(wanted)
elif wanted is None and EXPERIMENT_ID.get() not in (None, *by_id_saved):
    open_experiment(None)  # the open one was deleted or made private by its owner since
current = draft()
experiment_id: str | None = EXPERIMENT_ID.get()
opened = by_id_saved.get(experiment_id or "")
run = live_run()
may_edit = opened is None or store.may_edit(opened)
# Someone else's shared experiment is not the person's own data: the example is still offered.
own = [e for e in saved if e.owner == store.owner]
if not own and experiment_id is None and run is None:
    draw_first_run()  # nothing of their own yet: what the page is for, and the example

NEW = ""  # the picker's key for a new experiment (None would read as "nothing picked")
choices: dict[str, str] = {NEW: "New experiment", **{e.id: picker_label(e, store) for e in saved}}

# A new key for each open experiment: the picker starts on it (saved anew, a link, a pick), and a
# value the browser still holds for the last one is not taken for a pick.
st.selectbox(
    "Experiment",
    list(choices),
    index=list(choices).index(experiment_id if experiment_id in choices else NEW),
    format_func=lambda key: choices[key] or "(unnamed)",
    key=experiment_picker(experiment_id).name,
    disabled=run is not None,
)
draw_message()
if opened is not None and run is None:
    next_id = draw_sharing(opened, store)
    if next_id is not None:
        if next_id:
            st.query_params["e"] = next_id
        else:
            st.query_params.pop("e", None)
        open_experiment(next_id or None)
        st.rerun()

# The data: this experiment's runs, newest first, and the results of the ones drawn.
records: list[RunRecord] = store.list_runs(experiment_id) if experiment_id else []
results: list[tuple[RunRecord, ExperimentResult]] = []
try:
    results = [(record, store.load_result(record.id)) for record in records[:HISTORY_RUNS]]
except StoreError as error:
    st.error(f"A run could not be read: {error}")

# The drawing.
renames = opened is None or store.may_manage(opened)
current.name = st.text_input(
    "Name", value=current.name, key=NAME_FIELD.name, disabled=run is not None or not renames
)
# Every tab is drawn on every run (only the open one is shown): a widget not drawn would lose its value.
dataset_tab, variants_tab, scorers_tab, run_tab = st.tabs(
    ["Dataset", "Variants", "Scorers", "Run"], key=EXPERIMENT_TAB.name, on_change="rerun"
)
with dataset_tab:
    draw_tab_help(current, "dataset")
    draw_dataset(current, store.conversations, shared=opened is not None and opened.sharing != "private")
with variants_tab:
    draw_tab_help(current, "variants")
    registry = TOOL_REGISTRY.get()
    draw_variants(current, sorted(registry.tools) if registry is not None else [])
with scorers_tab:
    draw_tab_help(current, "scorers")
    draw_scorers(current)
with run_tab:
    draw_tab_help(current, "run")
    draw_run_settings(current)
    left, right = st.columns(2)
    if left.button("Save", key="exp_save", icon=":material/save:", disabled=run is not None or not may_edit):
        try:
            st.query_params["e"] = save(current)
        except StoreError as error:  # unshared or made read-only by its owner since the page was drawn
            st.error(f"The experiment was not saved: {error}")
        else:
            st.rerun()
    if right.button(
        "Run",
        key="exp_run",
        icon=":material/play_arrow:",
        type="primary",
        disabled=run is not None or not may_edit,
    ):
        start_run(current)
        if live_run() is not None:
            st.query_params["e"] = EXPERIMENT_ID() or ""
            st.rerun()
    draw_spec_export(current, experiment_id)

run_error = RUN_ERROR.pop()
if run_error:
    st.error(f"The run failed: {run_error}")
draw_progress()

if not results:
    st.info("No runs yet: add items, at least one variant and a scorer, then press Run.")
    st.stop()


def _label(record: RunRecord) -> str:
    return datetime.fromtimestamp(record.created_ms / 1000, UTC).strftime("Run of %Y-%m-%d %H:%M:%S UTC")


def _status(record: RunRecord) -> str:
    live = run is not None and run.run_id == record.id
    return "interrupted" if record.status == "running" and not live else record.status


st.subheader("Results")
by_id = {record.id: res for record, res in results}
record_by_id = {record.id: record for record, _ in results}
shown_id = st.selectbox(
    "Run", list(by_id), format_func=lambda rid: _label(record_by_id[rid]), key="exp_run_pick"
)
record, result = record_by_id[shown_id], by_id[shown_id]
st.caption(
    f"{_status(record)} · {record.done} / {record.total} items · dataset version {record.dataset_version[:8]}"
)
resumable = record.done < record.total and record.status in ("stopped", "running", "failed", "budget")
if resumable and run is None and may_edit:
    st.warning(
        f"This run stopped at {record.done} of {record.total} items ({record.stop_reason or record.status})."
    )
    if st.button("Resume", key="exp_resume", icon=":material/resume:") and resume_run(record):
        st.rerun()
draw_summary(result)
draw_cost_line(result)
chart, bars = st.columns(2)
with chart:
    draw_quality_cost(result)
with bars:
    draw_scorer_bars(result)
matrix_tab, review_tab, judgment_tab, compare_tab, history_tab = st.tabs(
    ["Matrix", "Review this run", "People's judgment", "Against a baseline", "Runs over time"],
    key=RESULTS_TAB.name,
    on_change="rerun",
)
with matrix_tab:
    draw_matrix(result)
with review_tab:
    draw_queue(result)
    draw_assignment(result)
with judgment_tab:
    draw_judgment(result)
with compare_tab:
    draw_comparison(result, results)
with history_tab:
    draw_history(results)
draw_replays(result, current.originals)
draw_exports(result)
if experiment_id:
    # A plain link (as the Costs page's own links to Chat): the page's URL names the experiment.
    st.markdown(
        f":material/payments: [This experiment's usage on the Costs page]"
        f"(costs?{urlencode({'experiment': experiment_id, 'period': 'All time'})})"
    )
