"""An experiment transcript's Timeline in a real Chromium: opening it inside the Transcript dialog
draws the chart there and keeps the dialog open (a scripted model, so no llama-server)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.fixtures.browser import StreamlitApp, open_app, screenshot
from yiem.experiments import Dataset, ExperimentStore, Variant, run_experiment, scorers
from yiem.scripted_llm import ScriptedLlm
from yiem.store import create_store_engine

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]
LONG = 120_000


def test_the_timeline_opens_inside_the_transcript_dialog(streamlit_app: StreamlitApp, page: Any) -> None:
    store = ExperimentStore(create_store_engine(streamlit_app.database_url))
    data = Dataset.from_records([{"id": "q0", "input": "say 0", "expected": "0"}])
    run_experiment(data, [Variant(name="only", llm=ScriptedLlm(["0"]))], [scorers.contains()], store=store)
    experiment_id = store.list_experiments()[0].id

    open_app(page, f"{streamlit_app.url}/experiments?e={experiment_id}")
    page.get_by_role("button", name="Transcript").click(timeout=LONG)
    dialog = page.get_by_role("dialog")
    timeline = dialog.get_by_text("Timeline", exact=True)
    timeline.wait_for(timeout=LONG)
    expect(dialog.locator('[data-testid="stPlotlyChart"]')).to_have_count(0)
    timeline.click()
    try:
        expect(dialog.locator('[data-testid="stPlotlyChart"]')).to_be_visible(timeout=LONG)
    except AssertionError:
        screenshot(page, "experiments-timeline-dialog-failed")
        raise
    expect(dialog.get_by_text("say 0")).to_be_visible()  # still the transcript's dialog
    screenshot(page, "experiments-timeline-dialog")
