"""The Run tab's "Export the spec as a file": what `python -m yiem experiments run SPEC` runs in CI."""

from __future__ import annotations

import streamlit as st

from ui.state import experiment_widget
from yiem.experiments import ExperimentDraft, spec_file_json


def draw_spec_export(draft: ExperimentDraft, experiment_id: str | None) -> None:
    """A download of the draft as a run spec file (no keys are in it)."""
    st.download_button(
        "Export the spec as a file",
        spec_file_json(draft.spec(), experiment_id),
        file_name=f"{draft.name or 'experiment'}.spec.json",
        mime="application/json",
        icon=":material/download:",
        disabled=not draft.variants or not draft.dataset.items,
        help="Run it from the command line or CI: python -m yiem experiments run FILE",
        key=experiment_widget("export_spec").name,
    )
