"""The Experiments page's tab sets keep their open tab in Chromium when a notice comes above them.

Unkeyed, Streamlit draws a tab set anew on its first tab when an element before it comes or goes
(ci39: a reviewer sent from "Review this run" back to "Matrix" mid-queue)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.fixtures.browser import StreamlitApp, open_app, open_tab, script_run
from yiem import ScriptedLlm
from yiem.experiments import Dataset, ExperimentStore, Variant, run_experiment, scorers
from yiem.store import create_store_engine

pytestmark = [pytest.mark.browser]


def test_both_tab_sets_keep_their_tab_when_a_notice_comes_above_them(
    streamlit_app: StreamlitApp, page: Any
) -> None:
    store = ExperimentStore(create_store_engine(streamlit_app.database_url))
    data = Dataset.from_records([{"id": "q0", "input": "say 0", "expected": "0"}])
    run_experiment(
        data, [Variant(name="only", llm=ScriptedLlm(["0"]))], [scorers.contains()], name="tabs", store=store
    )
    experiment_id = store.list_experiments()[0].id
    open_app(page, f"{streamlit_app.url}/experiments?e={experiment_id}")
    open_tab(page, "Scorers")
    open_tab(page, "People's judgment")
    notice = page.get_by_text("'tabs' is now shared with the team to read.")
    expect(notice).to_have_count(0)

    page.get_by_role("button", name="Share or delete").click()
    page.get_by_role("radio", name="Shared with the team to read").check(force=True)
    with script_run(page):
        page.get_by_role("button", name="Save sharing").click()
    expect(notice).to_be_visible()
    for name in ("Scorers", "People's judgment"):
        expect(page.get_by_role("tab", name=name, exact=True)).to_have_attribute("aria-selected", "true")
