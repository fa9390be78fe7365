"""The Experiments page's human judgment under AppTest: two people walk the review queue with blind
names, and the page's people pass rate, Krippendorff's alpha and disagreements equal what they clicked;
the page's CSV and JSON exports carry each cell's reviews."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import krippendorff
from streamlit.testing.v1 import AppTest

from tests.ui.test_experiments_page import db_url
from tests.ui.test_sign_in import AUTH
from yiem import ScriptedLlm
from yiem.experiments import (
    Dataset,
    ExperimentDraft,
    ExperimentStore,
    ReviewStore,
    Variant,
    run_experiment,
    scorers,
)
from yiem.identity import Owner
from yiem.store import create_store_engine

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "ui" / "pages" / "experiments.py")
APP = str(ROOT / "app.py")
TIMEOUT = 60
__all__ = ["db_url"]  # the page tests' fixture: a fresh store file named by YIEM_DATABASE_URL
ANN = Owner(id="ann@example.org", label="Ann", signed_in=True)
BOB = Owner(id="bob@example.org", label="Bob", signed_in=True)


def _run(url: str) -> str:
    store = ExperimentStore(create_store_engine(url), owner=ANN.id)
    data = Dataset.from_records([{"id": f"q{n}", "input": f"say {n}", "expected": str(n)} for n in range(2)])
    good = Variant(name="good", llm=ScriptedLlm(["0", "1"]))
    bad = Variant(name="bad", llm=ScriptedLlm(["0", "x"]))
    run_experiment(data, [good, bad], [scorers.contains()], name="quiz", store=store, concurrency=1)
    experiment_id = store.list_experiments()[0].id
    store.share(experiment_id, "read")  # Bob reviews it too: experiments are private by default
    return experiment_id


def _page(experiment_id: str, person: Owner, *, whole_app: bool = False) -> AppTest:
    # The whole app when a transcript opens: it links to the Chat page, which only the app knows.
    at = AppTest.from_file(APP if whole_app else PAGE, default_timeout=TIMEOUT)
    # Signed in as that person (the claims Streamlit's st.user gives after the OIDC round trip).
    at.secrets["auth"] = AUTH
    at.user = {
        "is_logged_in": True,
        "sub": person.id,
        "email": person.id,
        "email_verified": True,
        "name": person.label,
    }
    at.query_params["e"] = experiment_id
    if whole_app:
        at.switch_page("ui/pages/experiments.py")
    at.run()
    assert not at.exception, at.exception
    return at


def _walk(at: AppTest, verdicts: dict[str, bool], comment: str) -> list[str]:
    """Review every cell the queue shows, the verdict by the task and answer; the headings seen."""
    seen = []
    while not any("reviewed every result" in str(s.value) for s in at.success):
        heading = next(str(m.value) for m in at.markdown if " left** · this answer is from" in str(m.value))
        seen.append(heading)
        texts = [str(t.value) for t in at.text]
        task, output = texts[-2], texts[-1]
        at.text_area(key=next(t.key for t in at.text_area if t.key.startswith("review_comment_"))).input(
            f"{comment} on {task}"
        )
        at.button(key="review_good" if verdicts[f"{task}->{output}"] else "review_bad").click().run()
        assert not at.exception, at.exception
    return seen


def test_two_people_review_and_the_page_shows_their_agreement(db_url: str) -> None:
    experiment_id = _run(db_url)
    # Ann says the good answers are good except q1 under "good"; Bob agrees with the scorer everywhere.
    ann_says = {"say 0->0": True, "say 1->1": False, "say 1->x": False}
    bob_says = {"say 0->0": True, "say 1->1": True, "say 1->x": False}
    ann = _page(experiment_id, ANN)
    seen = _walk(ann, ann_says, "ann")
    assert seen[0].startswith("**4 of 4 left**") and seen[-1].startswith("**1 of 4 left**")
    assert all("good" not in s.split("from")[1] and "bad" not in s.split("from")[1] for s in seen)

    bob = _page(experiment_id, BOB)
    # Before Bob is done he cannot read Ann's comments.
    listed = next(d.value for d in bob.table if "comment" in d.value.columns)
    assert set(listed["comment"]) == {"(hidden until all are done)"}
    _walk(bob, bob_says, "bob")

    ann = _page(experiment_id, ANN)
    listed = next(d.value for d in ann.table if "comment" in d.value.columns)
    assert sorted(listed["comment"]) == sorted(
        [f"ann on say {n}" for n in (0, 0, 1, 1)] + [f"bob on say {n}" for n in (0, 0, 1, 1)]
    )
    scores = next(d.value for d in ann.table if "scorer" in d.value.columns)
    people = scores[scores["scorer"] == "people"]["passed"].to_dict()
    # The majority (a tie fails): good q0 2/2, good q1 1/2 -> fail, bad q0 2/2, bad q1 0/2.
    assert people == {"good": "1 / 2", "bad": "1 / 2"}
    # Cells in the run's order: good q0, good q1, bad q0, bad q1 (the answers 0, 1, 0, x).
    ann_row = [1, 0, 1, 0]
    bob_row = [1, 1, 1, 0]
    alpha = krippendorff.alpha(reliability_data=[ann_row, bob_row], level_of_measurement="nominal")
    words = "\n".join(str(m.value) for m in ann.markdown)
    assert f"**Agreement between reviewers:** α = {alpha:.3f} over 4 cells (2 raters)" in words
    # People on "bad" against "good": q0 both pass, q1 both fail, so nothing changed.
    assert "**People on bad against good:** 0 better, 0 worse of 2 paired cells, McNemar p = 1.000" in words
    disagree = next(d.value for d in ann.table if "people" in d.value.columns and "why" in d.value.columns)
    assert list(zip(disagree.index, disagree["variant"], disagree["people"], strict=True)) == [
        ("q1", "good", "1 of 2 good")
    ]


def test_kept_corrections_become_the_experiments_expected_answers(db_url: str) -> None:
    experiment_id = _run(db_url)
    store = ExperimentStore(create_store_engine(db_url), owner=ANN.id)
    dataset = store.load_spec(store.list_runs(experiment_id)[0].id).dataset
    # The experiment as the page saves it (a run from Python leaves its draft empty).
    store.save_experiment(
        "quiz", ExperimentDraft(dataset=dataset).model_dump(mode="json", exclude={"name"}), experiment_id
    )
    ann = _page(experiment_id, ANN)
    ann.text_area(key=next(t.key for t in ann.text_area if t.key.startswith("review_expected_"))).input(
        "nought"
    )
    ann.checkbox(key=next(c.key for c in ann.checkbox if c.key.startswith("review_keep_"))).check()
    ann.button(key="review_bad").click().run()
    assert not ann.exception, ann.exception
    ann.button(key="review_corrections").click().run()
    assert any("1 expected answers changed" in str(s.value) for s in ann.success)
    saved = store.get_experiment(experiment_id).data
    assert [item["expected"] for item in saved["dataset"]["items"]] == ["nought", "1"]


def test_a_code_scorer_from_a_script_is_shown_in_the_page_but_never_edited(db_url: str) -> None:
    store = ExperimentStore(create_store_engine(db_url), owner=ANN.id)
    code = scorers.code("/srv/graders.py", "polite", timeout_s=5, memory_mb=256)
    draft = ExperimentDraft(name="coded", scorers=[scorers.contains(), code])
    experiment_id = store.save_experiment("coded", draft.model_dump(mode="json", exclude={"name"}))
    at = _page(experiment_id, ANN)
    shown = [str(c.value) for c in at.caption]
    assert any("Python code in /srv/graders.py (polite), at most 5 s and 256 MB" in words for words in shown)
    assert at.session_state["exp_draft"].scorers[1] == code


def test_a_matrix_cell_is_reviewed_from_its_transcript(db_url: str) -> None:
    experiment_id = _run(db_url)
    store = ExperimentStore(create_store_engine(db_url), owner=ANN.id)
    run_id = store.list_runs(experiment_id)[0].id
    at = _page(experiment_id, ANN, whole_app=True)
    at.button(key=f"exp_open_{run_id}_q1_bad").click().run()
    assert not at.exception, at.exception
    assert any(str(m.value) == "**Your review**" for m in at.markdown)
    where = f"cell_{run_id}_q1_bad_0"
    at.text_area(key=f"review_comment_{where}").input("x is not 1")
    at.button(key="cell_review_bad").click().run()
    assert not at.exception, at.exception
    outcomes = store.outcomes(run_id)
    [review] = ReviewStore(create_store_engine(db_url), ANN).reviews(run_id, outcomes)
    assert (review.key, review.passed, review.comment) == (("q1", "bad", 0), False, "x is not 1")
    # Opened again, the transcript shows the person's own review.
    at.button(key=f"exp_open_{run_id}_q1_bad").click().run()
    assert any(str(c.value) == "👎 bad: x is not 1" for c in at.caption)


def test_the_pages_exports_carry_the_reviews_and_it_shows_people_against_the_scorer(
    db_url: str, downloads: Callable[[Any], str]
) -> None:
    experiment_id = _run(db_url)
    engine = create_store_engine(db_url)
    run_id = ExperimentStore(engine, owner=ANN.id).list_runs(experiment_id)[0].id
    # The answers: good q0 "0", good q1 "1", bad q0 "0", bad q1 "x"; contains passes all but bad q1.
    # Ann thinks good's "1" is not good enough; Bob agrees with the scorer everywhere.
    ann_says = {("q0", "good"): True, ("q1", "good"): False, ("q0", "bad"): True, ("q1", "bad"): False}
    bob_says = {("q0", "good"): True, ("q1", "good"): True, ("q0", "bad"): True, ("q1", "bad"): False}
    for person, says in ((ANN, ann_says), (BOB, bob_says)):
        store = ReviewStore(engine, person)
        for (item, variant), good in says.items():
            store.save(run_id, (item, variant, 0), passed=good, rating=4 if good else 2, comment=person.label)
    ann = _page(experiment_id, ANN)

    buttons = {button.key: button for button in ann.get("download_button")}
    rows = {
        (row["item_id"], row["variant"]): row
        for row in csv.DictReader(io.StringIO(downloads(buttons[f"exp_csv_{run_id}"])))
    }
    assert {cell: (row["reviews.up"], row["reviews.down"]) for cell, row in rows.items()} == {
        ("q0", "good"): ("2", "0"),
        ("q1", "good"): ("1", "1"),
        ("q0", "bad"): ("2", "0"),
        ("q1", "bad"): ("0", "2"),
    }
    # Both are done, so each reviewer's words are in Ann's export, with whose they are.
    cell = json.loads(rows[("q1", "good")]["reviews"])
    assert sorted((r["reviewer"], r["thumbs"], r["score"], r["comment"], r["hidden"]) for r in cell) == [
        ("Ann", "down", 2, "Ann", False),
        ("Bob", "up", 4, "Bob", False),
    ]
    exported = json.loads(downloads(buttons[f"exp_json_{run_id}"]))
    by_cell = {(o["item_id"], o["variant"]): o["reviews"] for o in exported["outcomes"]}
    assert {c: sorted(r["thumbs"] for r in reviews) for c, reviews in by_cell.items()} == {
        ("q0", "good"): ["up", "up"],
        ("q1", "good"): ["down", "up"],
        ("q0", "bad"): ["up", "up"],
        ("q1", "bad"): ["down", "down"],
    }

    # People (the majority, a tie fails) against the contains scorer, in the run's cell order.
    order = [("q0", "good"), ("q1", "good"), ("q0", "bad"), ("q1", "bad")]
    people = [int(ann_says[c] and bob_says[c]) for c in order]
    scorer = [1, 1, 1, 0]
    alpha = krippendorff.alpha(reliability_data=[people, scorer], level_of_measurement="nominal")
    words = "\n".join(str(m.value) for m in ann.markdown)
    assert f"**People and contains:** α = {alpha:.3f} over 4 cells (2 raters)" in words


def test_only_the_owner_asks_reviewers_and_only_people_who_can_see_the_run(db_url: str) -> None:
    experiment_id = _run(db_url)
    store = ExperimentStore(create_store_engine(db_url), owner=ANN.id)
    run_id = store.list_runs(experiment_id)[0].id
    bob = _page(experiment_id, BOB)
    assert not [t for t in bob.text_input if t.key == f"review_assign_{run_id}"]  # not his experiment
    store.share(experiment_id, "private")
    ann = _page(experiment_id, ANN)
    ann.text_input(key=f"review_assign_{run_id}").input("bob@example.org").run()
    ann.button(key="review_assign_go").click().run()
    assert not ann.exception, ann.exception
    assert any("is not shared with bob@example.org" in str(e.value) for e in ann.error)
    assert ReviewStore(create_store_engine(db_url), ANN).assigned(run_id) == []
