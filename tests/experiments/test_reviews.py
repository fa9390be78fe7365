"""Human review of a stored run (SQLite and PostgreSQL): per-person reviews, the queue with blind names,
hidden comments until everyone is done or the owner opens them, and the assignment: the experiment's
owner's alone, of people who can see the run."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest
from sqlalchemy import inspect

from yiem import LlmModel, ScriptedLlm
from yiem.experiments import (
    Dataset,
    ExperimentNotFoundError,
    ExperimentStore,
    ReviewerCannotSeeError,
    ReviewError,
    ReviewPermissionError,
    ReviewStore,
    RunSpec,
    Variant,
    blind_names,
    run_experiment,
    run_spec,
    scorers,
    with_corrections,
)
from yiem.identity import Owner
from yiem.store import SCHEMA_VERSION, create_store_engine, current_schema_version

MODEL = LlmModel(id="m", provider="scripted")
ANN = Owner(id="ann@example.org", label="Ann", signed_in=True)
BOB = Owner(id="bob@example.org", label="Bob", signed_in=True)


def reply(text: str) -> dict[str, Any]:
    return {"content": text, "usage": {"inputTokens": 3, "outputTokens": 2}}


@pytest.fixture
def run(any_store_url: str) -> tuple[Any, str, list[Any]]:
    engine = create_store_engine(any_store_url)
    store = ExperimentStore(engine, owner=ANN.id)
    dataset = Dataset.from_records(
        [{"id": f"q{n}", "input": f"say {n}", "expected": str(n)} for n in range(2)]
    )
    variants = [
        Variant(name="small", llm=ScriptedLlm([reply("0"), reply("x")]), model=MODEL),
        Variant(name="large", llm=ScriptedLlm([reply("0"), reply("1")]), model=MODEL),
    ]
    result = run_experiment(dataset, variants, [scorers.contains()], name="quiz", store=store, concurrency=1)
    store.share(store.list_experiments()[0].id, "read")  # the team reviews it
    return engine, result.run_id, store.load_result(result.run_id).outcomes


def test_reviews_follow_the_experiments_sharing(run: Any) -> None:
    """Issue 29: a run of an experiment not shared with Bob is not his to review or read."""
    engine, run_id, outcomes = run
    ann_store = ExperimentStore(engine, owner=ANN.id)
    ann_store.share(ann_store.list_experiments()[0].id, "private")
    bob = ReviewStore(engine, BOB)
    with pytest.raises(ExperimentNotFoundError, match="not shared with you"):
        bob.save(run_id, outcomes[0].key, passed=True)
    with pytest.raises(ExperimentNotFoundError, match="not shared with you"):
        bob.reviews(run_id, outcomes)
    with pytest.raises(ExperimentNotFoundError, match="not shared with you"):
        bob.queue(run_id, outcomes, ["small", "large"])
    ReviewStore(engine, ANN).save(run_id, outcomes[0].key, passed=True)
    ann_store.share(ann_store.list_experiments()[0].id, "read")
    assert [review.reviewer for review in bob.reviews(run_id, outcomes)] == [ANN.id]


def test_the_store_has_the_review_tables(run: Any) -> None:
    engine, _run_id, _outcomes = run
    with engine.connect() as conn:
        assert current_schema_version(conn) == SCHEMA_VERSION
        tables = set(inspect(conn).get_table_names())
    assert {"experiment_reviews", "review_assignments", "review_reveals"} <= tables


def test_each_person_walks_the_queue_and_sees_others_words_only_when_all_are_done(run: Any) -> None:
    engine, run_id, outcomes = run
    ann, bob = ReviewStore(engine, ANN), ReviewStore(engine, BOB)
    ann.assign(run_id, [ANN, BOB])
    assert [person.id for person in bob.assigned(run_id)] == [ANN.id, BOB.id]

    names = blind_names(run_id, ["small", "large"])
    assert sorted(names.values()) == ["Variant A", "Variant B"]
    seen = []
    while (cell := ann.queue(run_id, outcomes, ["small", "large"])) is not None:
        assert cell.total == 4 and cell.left == 4 - len(seen)
        assert cell.blind_name == names[cell.outcome.variant]
        ann.save(
            run_id,
            cell.outcome.key,
            passed=cell.outcome.passed,
            rating=4,
            comment=f"ann on {cell.outcome.key}",
        )
        seen.append(cell.outcome.key)
    assert sorted(seen) == sorted(outcome.key for outcome in outcomes)

    # Bob has done nothing: Ann's words are hidden from him, her verdicts are not.
    hidden = bob.reviews(run_id, outcomes)
    assert len(hidden) == 4 and all(review.hidden and review.comment == "" for review in hidden)
    assert not ann.comments_open(run_id, outcomes)
    # A second save replaces the first.
    first = outcomes[0].key
    bob.save(run_id, first, passed=False, comment="too short")
    bob.save(run_id, first, passed=True, comment="fine after all", expected="zero", use_expected=True)
    assert [r.comment for r in ann.reviews(run_id, outcomes) if r.reviewer == BOB.id] == [""]
    for outcome in outcomes[1:]:
        bob.save(run_id, outcome.key, passed=True)
    assert bob.queue(run_id, outcomes, ["small", "large"]) is None
    opened = ann.reviews(run_id, outcomes)
    assert [r.comment for r in opened if r.reviewer == BOB.id and r.key == first] == ["fine after all"]
    assert not any(review.hidden for review in opened)
    assert ann.corrected_expectations(run_id, outcomes) == {first[0]: "zero"}


def test_the_owner_alone_assigns_and_opens_comments_early(run: Any) -> None:
    engine, run_id, outcomes = run
    ann, bob = ReviewStore(engine, ANN), ReviewStore(engine, BOB)
    with pytest.raises(ReviewPermissionError, match=f"Only {ANN.id}, who owns the experiment 'quiz'"):
        bob.assign(run_id, [BOB])
    with pytest.raises(ReviewPermissionError):
        bob.reveal(run_id)
    bob.save(run_id, outcomes[0].key, passed=True, comment="bob's note")
    assert [r.comment for r in ann.reviews(run_id, outcomes)] == [""]
    ann.reveal(run_id)
    assert [r.comment for r in ann.reviews(run_id, outcomes)] == ["bob's note"]


def test_the_experiments_owner_assigns_not_whoever_ran_it_nor_anyone_before_results(run: Any) -> None:
    engine, first_run, _outcomes = run
    ann_store, bob_store = ExperimentStore(engine, owner=ANN.id), ExperimentStore(engine, owner=BOB.id)
    experiment_id = ann_store.list_experiments()[0].id
    ann_store.share(experiment_id, "edit")
    ann, bob = ReviewStore(engine, ANN), ReviewStore(engine, BOB)
    # Bob runs Ann's experiment (shared to edit): the transcripts are his, the experiment is still hers.
    spec = RunSpec.build(
        Dataset.from_records([{"id": "q0", "input": "say 0", "expected": "0"}]),
        [Variant(name="small", llm=ScriptedLlm([reply("0")]), model=MODEL)],
        [scorers.contains()],
        name="quiz",
    )
    bobs_run = bob_store.create_run(spec, experiment_id)
    run_spec(spec, bob_store.recorder(bobs_run))
    # A run with no results yet (started, nothing finished) has an owner too.
    empty = RunSpec.build(spec.dataset, spec.variants, spec.scorers, name="quiz")
    empty_run = bob_store.create_run(empty, experiment_id)
    for run_id in (bobs_run, empty_run, first_run):
        assert (ann.may_manage(run_id), bob.may_manage(run_id)) == (True, False)
        with pytest.raises(ReviewPermissionError, match=f"Only {ANN.id}, who owns the experiment 'quiz'"):
            bob.assign(run_id, [BOB])
        with pytest.raises(ReviewPermissionError, match="open everyone's comments early"):
            bob.reveal(run_id)
        ann.assign(run_id, [BOB])
        ann.reveal(run_id)
        assert [person.id for person in bob.assigned(run_id)] == [BOB.id]


def test_only_people_who_can_see_the_run_are_asked_to_review_it(run: Any) -> None:
    engine, run_id, _outcomes = run
    ann_store = ExperimentStore(engine, owner=ANN.id)
    experiment_id = ann_store.list_experiments()[0].id
    ann = ReviewStore(engine, ANN)
    ann.assign(run_id, [ANN])
    ann_store.share(experiment_id, "private")
    cara = Owner(id="cara@example.org", label="cara@example.org")
    with pytest.raises(ReviewerCannotSeeError) as refused:
        ann.assign(run_id, [ANN, BOB, cara])
    assert str(refused.value) == (
        "The experiment 'quiz' is not shared with Bob, cara@example.org, so they cannot see this run to "
        "review it; nobody was asked. Share it with the team (to read is enough), then ask again."
    )
    assert [person.id for person in ann.assigned(run_id)] == [ANN.id]  # the earlier list stands
    ann.assign(run_id, [ANN])  # the owner sees her own private experiment
    ann_store.share(experiment_id, "read")
    ann.assign(run_id, [ANN, BOB, cara])
    assert [person.id for person in ann.assigned(run_id)] == [ANN.id, BOB.id, cara.id]


def test_bad_reviews_get_words(run: Any) -> None:
    engine, run_id, outcomes = run
    ann = ReviewStore(engine, ANN)
    with pytest.raises(ReviewError, match="1 to 5"):
        ann.save(run_id, outcomes[0].key, passed=True, rating=6)
    with pytest.raises(ReviewError, match="no result for item 'nope'"):
        ann.save(run_id, ("nope", "small", 0), passed=True)
    assert ann.reviews(run_id, outcomes) == []


def test_a_kept_correction_becomes_the_items_expected_answer(run: Any) -> None:
    engine, run_id, outcomes = run
    ann, bob = ReviewStore(engine, ANN), ReviewStore(engine, BOB)
    ann.save(run_id, outcomes[0].key, passed=False, expected="nought", use_expected=True)
    bob.save(run_id, outcomes[1].key, passed=False, expected="only a note")  # not kept
    # Ann's own correction is hers to use; Bob cannot read it before he is done.
    assert bob.corrected_expectations(run_id, outcomes) == {}
    corrections = ann.corrected_expectations(run_id, outcomes)
    assert corrections == {outcomes[0].item_id: "nought"}
    dataset = ExperimentStore(engine, owner=ANN.id).load_spec(run_id).dataset
    corrected, changed = with_corrections(dataset, corrections)
    assert changed == 1
    assert [item.expected for item in corrected.items] == ["nought", "1"]
    assert [item.expected for item in dataset.items] == ["0", "1"]  # the run keeps what it ran


def test_the_runs_export_has_each_cells_reviews_the_reader_may_see(run: Any) -> None:
    engine, run_id, outcomes = run
    ann, bob = ReviewStore(engine, ANN), ReviewStore(engine, BOB)
    first, second = outcomes[0].key, outcomes[1].key
    ann.save(
        run_id, first, passed=False, rating=2, comment="ann: wrong", expected="nought", use_expected=True
    )
    bob.save(run_id, first, passed=True, comment="bob: fine")
    result = ExperimentStore(engine, owner=ANN.id).load_result(run_id)

    # Ann's export: her words in full, Bob's thumbs but not his words (he is not done).
    rows = {
        (r["item_id"], r["variant"], int(r["repeat"])): r
        for r in csv.DictReader(io.StringIO(result.to_csv(ann.reviews(run_id, outcomes))))
    }
    assert len(rows) == 4
    assert (rows[first]["reviews.up"], rows[first]["reviews.down"]) == ("1", "1")
    assert [rows[second][name] for name in ("reviews.up", "reviews.down", "reviews")] == ["0", "0", "[]"]
    cell = {review["reviewer_id"]: review for review in json.loads(rows[first]["reviews"])}
    assert cell[ANN.id] == {
        "reviewer": "Ann",
        "reviewer_id": ANN.id,
        "thumbs": "down",
        "score": 2,
        "comment": "ann: wrong",
        "correction": "nought",
        "correction_kept_as_expected": True,
        "hidden": False,
    }
    assert (cell[BOB.id]["thumbs"], cell[BOB.id]["comment"], cell[BOB.id]["hidden"]) == ("up", "", True)
    assert "bob: fine" not in result.to_csv(ann.reviews(run_id, outcomes))

    # The JSON export: each outcome with its reviews; once Ann opens them, Bob's words are in it.
    ann.reveal(run_id)
    data = json.loads(result.to_json(ann.reviews(run_id, outcomes)))
    by_cell = {(o["item_id"], o["variant"], o["repeat"]): o for o in data["outcomes"]}
    assert sorted(r["comment"] for r in by_cell[first]["reviews"]) == ["ann: wrong", "bob: fine"]
    assert by_cell[second]["reviews"] == []
    # Without reviews the export is as before: no reviews columns.
    assert "reviews" not in next(csv.DictReader(io.StringIO(result.to_csv())))
    # Someone the experiment is not shared with gets no reviews to export.
    owner_store = ExperimentStore(engine, owner=ANN.id)
    owner_store.share(owner_store.list_experiments()[0].id, "private")
    with pytest.raises(ExperimentNotFoundError):
        bob.reviews(run_id, outcomes)
