"""Saved checks on the Tools page: save a call with assertions, run a collection, compare its runs."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pandas as pd
import streamlit as st

from ui import bootstrap
from ui.state import CHECKS_ACCEPTED, CHECKS_IMPORTED, CHECKS_LAST_RUN
from ui.tools import connect as connection
from yiem.checks import (
    Assertion,
    AssertionKind,
    CheckRun,
    SavedCall,
    StoredCollection,
    collection_json,
    parse_collection,
    run_collection,
)
from yiem.errors import YiemError
from yiem.explorer import CallRecord

_JSONPATH_KINDS = {
    "equals": AssertionKind.JSONPATH_EQUALS,
    "contains": AssertionKind.JSONPATH_CONTAINS,
    "exists": AssertionKind.JSONPATH_EXISTS,
}


def _value(text: str) -> Any:
    # A JSONPath's value is JSON when it parses (3, true, "x"), else the text as typed.
    try:
        return json.loads(text)
    except ValueError:
        return text


def draw_save_form(record: CallRecord) -> None:
    """ "Save to a collection" for one call of the history: the collection, a name, assertions from a form."""
    if record.response is None:
        return
    # A dialog, not a popover: a popover opened low on the page runs off the window and cannot scroll.
    if st.button("Save to a collection", icon=":material/playlist_add:", key=f"checks-open-{record.id}"):
        _save_dialog(record, record.response)


@st.dialog("Save to a collection", width="large")
def _save_dialog(record: CallRecord, response: dict[str, Any]) -> None:
    with st.form(f"checks-save-{record.id}"):
        # In two columns, so the whole form and its button fit a laptop's window.
        left, right = st.columns(2)
        collection = left.text_input("Collection", key=f"checks-collection-{record.id}")
        name = right.text_input("Name of the call (optional)", key=f"checks-name-{record.id}")
        outcome = left.radio(
            "The result",
            ["is not an error", "is an error", "either"],
            horizontal=True,
            key=f"checks-err-{record.id}",
        )
        timeout = right.number_input(
            "Timeout in seconds (optional)", min_value=0.0, value=0.0, key=f"checks-to-{record.id}"
        )
        contains = left.text_input("Text contains", key=f"checks-contains-{record.id}")
        matches = right.text_input("Text matches (regular expression)", key=f"checks-matches-{record.id}")
        path = left.text_input("JSONPath", placeholder="$.content[0].text", key=f"checks-path-{record.id}")
        path_value = right.text_input("JSONPath value (JSON or text)", key=f"checks-pathvalue-{record.id}")
        path_kind = left.selectbox(
            "JSONPath check", list(_JSONPATH_KINDS), key=f"checks-pathkind-{record.id}"
        )
        size = right.number_input(
            "Result under N bytes (0: no limit)", min_value=0, value=0, key=f"checks-size-{record.id}"
        )
        took = left.number_input(
            "Time under N ms (0: no limit)", min_value=0, value=0, key=f"checks-ms-{record.id}"
        )
        schema = right.checkbox(
            "Structured result matches the tool's output schema", key=f"checks-schema-{record.id}"
        )
        snapshot = right.checkbox("Snapshot: equal to this result", key=f"checks-snap-{record.id}")
        if not st.form_submit_button("Save the call"):
            return
    try:
        assertions = []
        if outcome != "either":
            kind = AssertionKind.NOT_ERROR if outcome == "is not an error" else AssertionKind.IS_ERROR
            assertions.append(Assertion(kind=kind))
        if contains:
            assertions.append(Assertion(kind=AssertionKind.TEXT_CONTAINS, value=contains))
        if matches:
            assertions.append(Assertion(kind=AssertionKind.TEXT_MATCHES, value=matches))
        if schema:
            assertions.append(Assertion(kind=AssertionKind.MATCHES_OUTPUT_SCHEMA))
        if path:
            value = None if path_kind == "exists" else _value(path_value)
            assertions.append(Assertion(kind=_JSONPATH_KINDS[path_kind], path=path, value=value))
        if size:
            assertions.append(Assertion(kind=AssertionKind.SIZE_UNDER, value=int(size)))
        if took:
            assertions.append(Assertion(kind=AssertionKind.TIME_UNDER, value=int(took)))
        call = SavedCall(
            name=name.strip(),
            server=record.server,
            tool=record.tool,
            arguments=record.arguments,
            timeout_s=timeout or None,
            assertions=assertions,
        )
        saved = bootstrap.saved_checks()
        stored = saved.add_call(collection, call)
        if snapshot:
            stored = saved.accept_snapshot(stored.name, call.id, response)
    except (YiemError, ValueError) as error:
        st.error(f"The call was not saved: {error}")
        return
    count = len(stored.collection.calls)
    st.success(f"Saved to “{stored.name}” ({count} {'call' if count == 1 else 'calls'}).")


def draw_checks() -> None:
    """The Checks tab: pick a collection, share, export or import it, run it and see its runs."""
    saved = bootstrap.saved_checks()
    _draw_import(saved)
    collections = saved.collections()
    if not collections:
        st.caption("No collections yet. Save a call from the History tab to start one.")
        return
    names = [c.name if c.owner == saved.owner else f"{c.name} (shared by {c.owner})" for c in collections]
    index = st.selectbox("Collection", range(len(names)), format_func=names.__getitem__, key="checks-pick")
    stored = collections[index or 0]
    mine = stored.owner == saved.owner
    st.caption(f"{len(stored.collection.calls)} saved calls on {', '.join(_servers(stored)) or 'no server'}.")
    if mine:
        shared = st.toggle("Shared with the team", value=stored.shared, key=f"checks-share-{stored.id}")
        if shared != stored.shared:
            stored = saved.save(stored.collection, shared=shared)
    st.download_button(
        "Export",
        collection_json(stored.collection),
        file_name=f"{stored.name}.json",
        mime="application/json",
        icon=":material/download:",
        key="checks-export",
    )
    _draw_run(saved, stored, mine)


def _servers(stored: StoredCollection) -> list[str]:
    return sorted({call.server for call in stored.collection.calls})


def _draw_import(saved: Any) -> None:
    upload = st.file_uploader("Import a collection", type=["json"], key="checks-import")
    # The file stays in the uploader on every later run of the page: imported again each time, it
    # would write over what changed since (a snapshot accepted, a call saved from the History tab).
    if upload is None or CHECKS_IMPORTED.get() == upload.file_id:
        return
    CHECKS_IMPORTED.set(upload.file_id)
    try:
        collection = parse_collection(json.loads(upload.getvalue()), upload.name)
        saved.save(collection)
    except (YiemError, ValueError) as error:
        st.error(f"The collection was not imported: {error}")
        return
    st.success(f"Imported “{collection.name}”.")


def _draw_run(saved: Any, stored: StoredCollection, mine: bool) -> None:
    connected = connection.clients()
    overrides = {}
    for server in _servers(stored):
        choices = sorted(connected) or [server]
        default = choices.index(server) if server in choices else 0
        overrides[server] = st.selectbox(
            f"Run {server} against", choices, index=default, key=f"checks-against-{stored.id}-{server}"
        )
    if st.button("Run the collection", icon=":material/play_arrow:", key="checks-run"):
        bar = st.progress(0.0, text="Starting…")

        def progress(done: int, total: int, call: SavedCall) -> None:
            bar.progress(done / total, text=f"{done} of {total}: {call.label}")

        try:
            run = run_collection(
                stored.collection,
                overrides=overrides,
                connected=connected,
                on_progress=progress,
            )
        except YiemError as error:
            bar.empty()
            st.error(f"The collection could not run: {error}")
        else:
            bar.empty()
            saved.keep_run(stored, run)
            CHECKS_LAST_RUN.set((stored.id, run))
    if accepted := CHECKS_ACCEPTED.pop():
        st.success(accepted)
    last = CHECKS_LAST_RUN.get()
    if last is not None and last[0] == stored.id:
        _draw_outcomes(saved, stored, last[1], mine)
    _draw_chart(saved, stored)


def _draw_outcomes(saved: Any, stored: StoredCollection, run: CheckRun, mine: bool) -> None:
    st.markdown(f"**{run.passed} passed, {run.failed} failed** of {len(run.outcomes)} calls.")
    rows = [
        {
            "Call": o.name,
            "Result": "pass" if o.passed else "fail",
            "Why": " ".join(o.failures) or "",
            "ms": round(o.duration_ms),
        }
        for o in run.outcomes
    ]
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="checks-outcomes")
    for outcome in run.outcomes:
        if outcome.failures:
            # In full under the table too: a cell cuts a long reason (a JSONPath's text) short.
            st.markdown(f"**{outcome.name}** failed:")
            st.text("\n".join(outcome.failures))
        if not outcome.snapshot_diff:
            continue
        st.markdown(f"**{outcome.name}**: the result differs from the accepted snapshot.")
        st.code(outcome.snapshot_diff, language="diff")
        if mine and outcome.result is not None:
            st.button(
                "Accept new result",
                key=f"checks-accept-{outcome.call_id}",
                on_click=_accept,
                args=(saved, stored.name, outcome.call_id, outcome.name, outcome.result),
            )


def _accept(saved: Any, collection: str, call_id: str, label: str, result: dict[str, Any]) -> None:
    saved.accept_snapshot(collection, call_id, result)
    CHECKS_LAST_RUN.pop()  # its diff is against the snapshot just replaced
    CHECKS_ACCEPTED.set(f"Accepted the new result of {label}; the next run compares with it.")


def _draw_chart(saved: Any, stored: StoredCollection) -> None:
    runs = saved.runs(stored)
    if len(runs) < 2:
        return
    when = [datetime.fromtimestamp(r.started_ms / 1000, UTC) for r in runs]
    st.caption("Pass rate per run")
    st.line_chart(pd.DataFrame({"Pass rate": [r.pass_rate for r in runs]}, index=when), height=160)
