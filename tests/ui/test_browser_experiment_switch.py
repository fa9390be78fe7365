"""Switching experiments in the picker shows the second one's name, run settings and variants, never
the first one's (a real Chromium: the browser, not the server, kept the old values)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.fixtures.browser import StreamlitApp, choose_option, open_app, open_tab, script_run
from yiem.experiments import ExperimentDraft, ExperimentStore, Variant
from yiem.store import create_store_engine

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

LONG = 120_000
SAVED = {  # name: (repeats, items at once, budget)
    "first": (2, 3, 1.5),
    "second": (5, 7, 4.0),
}


def _save_both(database_url: str) -> dict[str, str]:
    store = ExperimentStore(create_store_engine(database_url))
    ids = {}
    for name, (repeats, concurrency, budget) in SAVED.items():
        draft = ExperimentDraft(
            name=name,
            variants=[Variant(name=f"{name} variant", system_prompt=f"Be {name}.")],
            repeats=repeats,
            concurrency=concurrency,
            budget_usd=budget,
        )
        ids[name] = store.save_experiment(name, draft.model_dump(mode="json", exclude={"name"}))
    return ids


def _pick(page: Any, name: str) -> None:
    choose_option(page, page.get_by_role("combobox", name="Experiment"), name)


def _expect_shown(page: Any, name: str) -> None:
    repeats, concurrency, budget = SAVED[name]
    expect(page.get_by_label("Name", exact=True).first).to_have_value(name, timeout=LONG)
    open_tab(page, "Run")
    expect(page.get_by_role("spinbutton", name="Repeats per item")).to_have_value(str(repeats))
    expect(page.get_by_role("spinbutton", name="Items at once per provider")).to_have_value(str(concurrency))
    expect(page.get_by_role("spinbutton", name="Budget (stop at $)")).to_have_value(f"{budget:.2f}")
    open_tab(page, "Variants")
    expect(page.get_by_label("Name", exact=True).nth(1)).to_have_value(f"{name} variant")


def test_the_picked_experiment_shows_its_own_values(streamlit_app: StreamlitApp, page: Any) -> None:
    ids = _save_both(streamlit_app.database_url)
    open_app(page, f"{streamlit_app.url}/experiments?e={ids['first']}")
    _expect_shown(page, "first")
    # What was typed into the first one (not saved) must not follow the person to the second.
    open_tab(page, "Run")
    repeats = page.get_by_role("spinbutton", name="Repeats per item")
    repeats.fill("9")
    with script_run(page):
        repeats.press("Enter")
    _pick(page, "second")
    _expect_shown(page, "second")
    _pick(page, "first")
    _expect_shown(page, "first")
