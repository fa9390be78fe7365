"""The Experiments page in a real Chromium against the embedded model (llama-server + SmolLM2):
a 4-item dataset uploaded as CSV, two variants (two system prompts), the `contains` scorer and a
rubric judged by the same local model, a run
stopped midway and resumed, and the matrix, summary and comparison drawn. Screenshots go to
tests/artifacts/."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.fixtures.browser import StreamlitApp, click_until, open_app, open_tab, screenshot, still
from yiem.experiments import ExperimentStore
from yiem.store import create_store_engine

# Eight replies of the embedded model, twice interrupted by reruns: minutes on a loaded 2-core machine.
pytestmark = [pytest.mark.browser, pytest.mark.llama, pytest.mark.timeout(1500)]

CSV = """input,expected
Say the word blue.,blue
Say the word red.,red
Say the word green.,green
Say the word yellow.,yellow
"""
LONG = 180_000


def _idle(page: Any) -> None:
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="detached", timeout=LONG)


def _fill(locator: Any, value: str) -> None:
    locator.fill(value)
    locator.press("Enter" if locator.evaluate("e => e.tagName") == "INPUT" else "Control+Enter")


def _upload(page: Any, path: Path) -> None:
    """Give the uploader the file; once Streamlit has it, the column mapping appears."""
    for _attempt in range(3):
        page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(path))
        try:
            page.get_by_role("button", name="Import", exact=True).wait_for(timeout=20_000)
            return
        except Exception:  # a rerun in flight can drop the upload's own rerun: give it again
            continue
    screenshot(page, "experiments-upload-failed")
    raise AssertionError("the uploaded CSV never showed its column mapping")


def _import(page: Any, items: int) -> None:
    """Press Import until the dataset says it holds `items` items. Pressed as the upload's run
    still drew, the click was once lost (ci64); a minute is far longer than an import of a few."""
    done = page.get_by_text(f"{items} items ·")
    button = page.get_by_role("button", name="Import", exact=True)
    click_until(page, button, lambda ms: done.wait_for(timeout=ms), wait=60_000)


def _add_variant(page: Any, number: int) -> Any:
    """Add a variant and return its expander once drawn. Scoped fields: the hidden Run tab has the
    simulated user's "Longest reply in tokens", which a page-wide `.first` finds before the variant
    exists (seen failing in CI: the click's rerun had not started when `_idle` looked)."""
    page.get_by_role("button", name="Add a variant", exact=True).click()
    variant = page.get_by_test_id("stExpander").filter(has_text=f"Variant {number}: variant {number}")
    variant.get_by_label(re.compile("Longest reply in tokens")).wait_for(timeout=LONG)
    _idle(page)
    return variant


def _wait_for_outcomes(store: ExperimentStore, count: int, timeout_s: float) -> None:
    """Until the only run has at least `count` stored outcomes."""
    deadline = time.monotonic() + timeout_s
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        try:
            runs = store.list_runs()
            if runs and len(store.outcomes(runs[0].id)) >= count:
                return
        except Exception as error:  # the app writing at the same moment: read again, keep the reason
            last_error = error
        time.sleep(0.2)
    raise AssertionError(
        f"fewer than {count} outcomes stored after {timeout_s:.0f} s (last error: {last_error!r})"
    )


def _choose(page: Any, combobox: Any, option: str) -> None:
    """Open the select box and pick `option` once its list is shown (a rerun can close the list)."""
    choice = page.get_by_role("option", name=option, exact=True)
    for _attempt in range(3):
        still(page)  # any scroll closes an open list (an expander easing open, as on Compare)
        combobox.click()
        try:
            choice.wait_for(timeout=20_000)
            choice.click()
            return
        except Exception:
            page.keyboard.press("Escape")
    screenshot(page, "experiments-select-failed")
    raise AssertionError(f"the option {option!r} never showed in its select box")


def test_run_stop_resume_and_matrix(streamlit_app: StreamlitApp, page: Any, tmp_path: Path) -> None:
    open_app(page, f"{streamlit_app.url}/experiments")
    page.get_by_text("No runs yet").wait_for(timeout=LONG)

    # The dataset: a CSV uploaded, input and expected columns picked by name.
    data = tmp_path / "colours.csv"
    data.write_text(CSV)
    _upload(page, data)
    _import(page, 4)
    _idle(page)

    # Two variants on the local model, short replies, two system prompts.
    open_tab(page, "Variants")
    first = _add_variant(page, 1)
    _fill(first.get_by_label(re.compile("Longest reply in tokens")), "24")
    _idle(page)
    _fill(first.get_by_label(re.compile("System prompt")), "Repeat the colour the user names.")
    _idle(page)
    second = _add_variant(page, 2)
    _fill(second.get_by_label(re.compile("System prompt")), "Answer in one short sentence.")
    _idle(page)
    _fill(second.get_by_label(re.compile("Longest reply in tokens")), "24")  # the judge is the first's model
    _idle(page)

    open_tab(page, "Scorers")
    page.get_by_role("button", name="Add a scorer", exact=True).click()
    # The scorer itself, not the end of a rerun: a click during a rerun in flight can be dropped,
    # and a run with no scorer draws no badges.
    page.get_by_text(re.compile(r"^Scorer 1: ")).wait_for(timeout=LONG)
    _idle(page)
    # A rubric graded by the same local model (the judge defaults to the first variant's model).
    page.get_by_role("button", name="Add a scorer", exact=True).click()
    page.get_by_text(re.compile(r"^Scorer 2: ")).wait_for(timeout=LONG)
    _idle(page)
    _choose(page, page.get_by_role("combobox", name="Kind").nth(1), "Graded by a model (rubric)")
    rubric = page.get_by_label("Rubric", exact=True)
    rubric.wait_for(timeout=LONG)
    _idle(page)
    _fill(rubric, "Score 1 if the answer names the colour the user asked for, else 0.")
    _idle(page)
    # Its name was set when it was added as "contains 2"; a name of its own shows on its badges.
    scorer_2 = page.get_by_test_id("stExpander").filter(has_text="Scorer 2:")
    _fill(scorer_2.get_by_label("Name", exact=True), "rubric")
    # The expander is titled from the draft as the last run left it: this title means it holds the rubric.
    page.get_by_text("Scorer 2: Graded by a model (rubric)", exact=True).wait_for(timeout=LONG)
    _idle(page)
    expect(rubric).to_have_value("Score 1 if the answer names the colour the user asked for, else 0.")

    open_tab(page, "Run")
    _fill(page.get_by_label("Items at once per provider"), "1")
    _idle(page)
    page.get_by_role("button", name="Run", exact=True).click()

    # Stop once the first item is stored, while the others are still to come. The store is read,
    # not the bar: on a slow machine the bar can miss a count between two of its redraws.
    store = ExperimentStore(create_store_engine(streamlit_app.database_url))
    try:
        page.get_by_text(re.compile(r"\d / 8 items")).first.wait_for(timeout=LONG)  # the run has started
        _wait_for_outcomes(store, 1, timeout_s=2 * LONG / 1000)
    except Exception as error:
        screenshot(page, "experiments-debug")
        raise AssertionError(f"{error!r}\n{streamlit_app.log()}") from error
    page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Stop", exact=True).click()
    try:
        page.get_by_text(re.compile(r"This run stopped at [1-7] of 8 items")).first.wait_for(timeout=60_000)
    except Exception as error:
        screenshot(page, "experiments-debug")
        raise AssertionError(f"{error!r}\n{streamlit_app.log()}") from error
    _idle(page)
    screenshot(page, "experiments-stopped")
    [stopped] = store.list_runs()
    assert stopped.status == "stopped" and 1 <= stopped.done < 8, streamlit_app.log()
    first_outcomes = {(o.item_id, o.variant) for o in store.outcomes(stopped.id)}

    page.get_by_role("button", name="Resume", exact=True).click()
    try:
        page.get_by_text(re.compile(r"finished · 8 / 8 items")).first.wait_for(timeout=3 * LONG)
    except Exception as error:
        screenshot(page, "experiments-debug")
        raise AssertionError(f"{error!r}\n{streamlit_app.log()}") from error
    _idle(page)
    [done] = store.list_runs()
    assert (done.id, done.status, done.done) == (stopped.id, "finished", 8)
    outcomes = store.outcomes(done.id)
    assert len({(o.item_id, o.variant) for o in outcomes}) == 8
    assert first_outcomes <= {(o.item_id, o.variant) for o in outcomes}  # kept, not re-run
    # Every item was graded by the local judge too, its usage kept apart from the item's own.
    judged = [[s for s in o.scores if s.scorer == "rubric"] for o in outcomes]
    assert all(len(scores) == 1 and scores[0].judge_model for scores in judged), [o.scores for o in outcomes]

    # The matrix: 4 rows, each with a cell per variant carrying the contains badge.
    # Waited for, not counted at once: the rows of the run's last render linger until the new one
    # is drawn, so the rows can be there before their badges.
    expect(page.locator('[class*="st-key-exp_row_"]')).to_have_count(4, timeout=LONG)
    expect(page.get_by_text(re.compile(r"^contains [01]\.00$"))).to_have_count(8, timeout=LONG)
    expect(page.get_by_text(re.compile(r"^rubric [01]\.\d\d$"))).to_have_count(8, timeout=LONG)
    expect(page.get_by_text("Improved", exact=True)).to_have_count(1, timeout=LONG)  # the comparison
    screenshot(page, "experiments-matrix")

    # A cell's transcript opens in a dialog with the way to continue it in Chat.
    page.get_by_role("button", name="Transcript", exact=True).first.click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_text("Continue in Chat").wait_for(timeout=LONG)
    assert "Say the word blue." in dialog.inner_text()
