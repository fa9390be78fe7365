"""Two people review the same run for real: the app in Chromium, each signed in through the real OpenID
Connect provider. Their reviews, the people pass rate and Krippendorff's alpha on the page equal what
the test computes from what they clicked, and neither sees the other's comments until both are done.
"""

from __future__ import annotations

import re
from typing import Any

import krippendorff
import pytest
from playwright.sync_api import expect

from tests.fixtures.browser import StreamlitApp, open_app, open_tab, screenshot, script_run, settled
from tests.fixtures.oidc import OidcProvider
from tests.ui.test_browser_sign_in import _sign_in, _sign_out, signed_app
from yiem import ScriptedLlm
from yiem.experiments import Dataset, ExperimentStore, ReviewStore, Variant, run_experiment, scorers
from yiem.identity import Owner
from yiem.store import create_store_engine

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]
__all__ = ["signed_app"]  # the sign-in tests' fixture: the app with sign-in on against the provider

ANN, BOB = "ann@example.com", "bob@example.com"


def _seed_run(app: StreamlitApp) -> tuple[str, str]:
    """Ann's run: two items under two variants whose names must never show in the queue."""
    store = ExperimentStore(create_store_engine(app.database_url), owner=ANN)
    data = Dataset.from_records([{"id": f"q{n}", "input": f"say {n}", "expected": str(n)} for n in range(2)])
    first = Variant(name="model-north", llm=ScriptedLlm(["0", "1"]))
    second = Variant(name="model-south", llm=ScriptedLlm(["0", "x"]))
    result = run_experiment(
        data, [first, second], [scorers.contains()], name="quiz", store=store, concurrency=1
    )
    experiment_id = store.list_experiments()[0].id
    store.share(experiment_id, "read")  # Bob reviews it too: experiments are private by default
    return experiment_id, result.run_id


def _walk_queue(page: Any, says: dict[str, bool], who: str) -> list[tuple[str, str, bool]]:
    """Review every cell by its task and answer; (task, answer, verdict) in the order shown."""
    clicked = []
    for left in range(4, 0, -1):
        heading = page.get_by_text(re.compile(rf"^{left} of 4 left · this answer is from Variant [AB]$"))
        expect(heading).to_be_visible(timeout=60_000)
        # The heading is drawn early in the run: the last cell's boxes may still be on the page, faded,
        # until the run ends (the click's run can be the second after the comment box's own).
        settled(page)
        # Each cell's parts are keyed by how many are left and by the cell: never another cell's.
        cell = page.locator(f'[class*="st-key-review_cell_{left}_"]')
        form = page.locator(f'[class*="st-key-review_form_{left}_"]')
        expect(cell).to_have_count(1)
        comment = form.get_by_label("Comment (optional)")
        expect(comment).to_be_visible()
        expect(comment).to_have_value("")  # the last cell's comment never carries over to this one
        words = cell.inner_text()
        assert "model-north" not in words and "model-south" not in words
        task, answer = (t.inner_text() for t in cell.locator('[data-testid="stText"]').all())
        verdict = says[f"{task}->{answer}"]
        comment.fill(f"{who} on {task} {answer}")
        with script_run(page):  # the page drawn anew, the last cell's boxes gone
            if left == 4:
                # The keyboard shortcut, away from the text boxes (a letter typed in one stays there).
                cell.click()
                page.keyboard.press("G" if verdict else "B")
            else:
                form.get_by_role("button", name="👍 Good" if verdict else "👎 Bad").click()
        clicked.append((task, answer, verdict))
    expect(page.get_by_text("You have reviewed every result of this run.")).to_be_visible(timeout=60_000)
    return clicked


def test_two_people_review_a_run_and_the_page_shows_their_agreement(
    signed_app: StreamlitApp, oidc_provider: OidcProvider, page: Any
) -> None:
    app = signed_app
    experiment_id, run_id = _seed_run(app)
    # Ann marks the right answer to "say 1" bad; Bob agrees with the scorer everywhere.
    ann_says = {"say 0->0": True, "say 1->1": False, "say 1->x": False}
    bob_says = {"say 0->0": True, "say 1->1": True, "say 1->x": False}

    _sign_in(page, app, oidc_provider, "ann", "Ann Example")
    open_app(page, f"{app.url}/experiments?e={experiment_id}")
    open_tab(page, "Review this run")
    ann_clicked = _walk_queue(page, ann_says, "ann")
    screenshot(page, "review-ann-done")
    _sign_out(page, app)

    _sign_in(page, app, oidc_provider, "bob", "Bob Example")
    open_app(page, f"{app.url}/experiments?e={experiment_id}")
    open_tab(page, "People's judgment")
    expect(page.get_by_text("(hidden until all are done)").first).to_be_visible(timeout=60_000)
    expect(page.get_by_text("ann on say")).to_have_count(0)
    open_tab(page, "Review this run")
    bob_clicked = _walk_queue(page, bob_says, "bob")

    # What the page shows against what the test computes from the clicks, cell by cell.
    assert len(ann_clicked) == len(bob_clicked) == 4
    ann_row, bob_row = _by_cell_rows(ann_clicked, bob_clicked)
    expected_alpha = krippendorff.alpha(reliability_data=[ann_row, bob_row], level_of_measurement="nominal")
    stored = ReviewStore(create_store_engine(app.database_url), Owner(id=BOB, label="Bob"))
    outcomes = ExperimentStore(create_store_engine(app.database_url)).outcomes(run_id)
    assert len(stored.reviews(run_id, outcomes)) == 8
    open_tab(page, "People's judgment")
    expect(
        page.get_by_text(f"Agreement between reviewers: α = {expected_alpha:.3f} over 4 cells (2 raters)")
    ).to_be_visible(timeout=60_000)
    # Both are done: Bob now reads Ann's comments.
    expect(page.get_by_text("ann on say 1 1")).to_be_visible()
    expect(page.get_by_text("(hidden until all are done)")).to_have_count(0)
    # People pass: a cell passes when both said good (of two, one good is a tie, and a tie fails).
    people_passed = sum(
        1 for ann_good, bob_good in zip(ann_row, bob_row, strict=True) if ann_good and bob_good
    )
    scores = page.locator('[data-testid="stTable"]').first
    people_rows = scores.locator("tr", has_text="people")
    expect(people_rows).to_have_count(2)
    shown = sum(int(re.search(r"(\d+) / 2", row.inner_text()).group(1)) for row in people_rows.all())
    assert shown == people_passed
    screenshot(page, "review-bob-judgment")


def _by_cell_rows(ann: list[tuple[str, str, bool]], bob: list[tuple[str, str, bool]]) -> list[list[float]]:
    # Two cells share a task and an answer ("say 0" -> "0" under both variants): pair them in order.
    bob_left = list(bob)
    rows: list[list[float]] = [[], []]
    for task, answer, verdict in ann:
        match = next(i for i, (t, a, _) in enumerate(bob_left) if (t, a) == (task, answer))
        rows[0].append(float(verdict))
        rows[1].append(float(bob_left.pop(match)[2]))
    return rows
