"""A run's writes follow its experiment's sharing: only someone who may edit the experiment stops,
records into or resumes its runs; the transcripts a run writes stay its runner's.

Run as Ann and Bob on SQLite and PostgreSQL, on Ann's experiment private, shared to read, to edit.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlalchemy import Engine, select

from tests.store.test_experiment_owners import A, B
from yiem.experiments import (
    Dataset,
    ExperimentAccessError,
    ExperimentDraft,
    ExperimentNotFoundError,
    ExperimentStore,
    ItemOutcome,
    RunSpec,
    Variant,
    resume_experiment,
    scorers,
)
from yiem.scripted_llm import ScriptedLlm
from yiem.store import conversations, create_store_engine, experiment_runs


def _anns_stopped_run(engine: Engine) -> tuple[str, str]:
    """Ann's experiment and a run of its two items that stopped before either finished."""
    ann = ExperimentStore(engine, A)
    data = Dataset.from_records([{"id": f"q{n}", "input": f"say {n}", "expected": str(n)} for n in range(2)])
    experiment_id = ann.save_experiment(
        "Ann's quiz", ExperimentDraft(dataset=data).model_dump(mode="json", exclude={"name"})
    )
    spec = RunSpec.build(data, [Variant(name="v", provider="openai", model_id="m")], [scorers.contains()])
    run_id = ann.create_run(spec, experiment_id)
    ann.set_status(run_id, "stopped", "Stopped by you")
    return experiment_id, run_id


def _answers() -> list[Variant]:
    return [Variant(name="v", llm=ScriptedLlm(["0", "1"]))]


def _attempts(bob: ExperimentStore, run_id: str) -> dict[str, Callable[[], object]]:
    """Each write Bob might try on Ann's run; none may change it."""
    extra = ItemOutcome(item_id="bob's", variant="v", output="mine")
    return {
        "stop": lambda: bob.set_status(run_id, "failed", "Bob says so"),
        "record": lambda: bob.record(run_id, [extra]),
        "resume": lambda: resume_experiment(bob, run_id, _answers(), concurrency=1),
    }


def _unchanged(engine: Engine, run_id: str) -> None:
    run = ExperimentStore(engine, A).get_run(run_id)
    assert (run.status, run.stop_reason, run.done) == ("stopped", "Stopped by you", 0)


@pytest.mark.parametrize(
    ("sharing", "refusal", "words"),
    [
        ("private", ExperimentNotFoundError, "not shared with you"),
        ("read", ExperimentAccessError, "to read only"),
    ],
)
def test_bob_cannot_stop_record_into_or_resume_anns_run_he_may_not_edit(
    any_store_url: str, sharing: str, refusal: type[Exception], words: str
) -> None:
    engine = create_store_engine(any_store_url)
    experiment_id, run_id = _anns_stopped_run(engine)
    ExperimentStore(engine, A).share(experiment_id, sharing)
    for attempt in _attempts(ExperimentStore(engine, B), run_id).values():
        with pytest.raises(refusal, match=words):
            attempt()
        _unchanged(engine, run_id)


def test_shared_to_edit_bob_resumes_anns_run_and_its_transcripts_are_his(any_store_url: str) -> None:
    engine = create_store_engine(any_store_url)
    experiment_id, run_id = _anns_stopped_run(engine)
    ann, bob = ExperimentStore(engine, A), ExperimentStore(engine, B)
    ann.share(experiment_id, "edit")
    resumed = resume_experiment(bob, run_id, _answers(), concurrency=1)
    assert resumed.status == "finished" and [o.passed for o in resumed.outcomes] == [True, True]
    # Ann sees the scores of her run; the transcripts Bob's resume wrote are his.
    assert [o.passed for o in ann.load_result(run_id).outcomes] == [True, True]
    with engine.connect() as conn:
        run_owner = conn.execute(
            select(experiment_runs.c.owner).where(experiment_runs.c.id == run_id)
        ).scalar()
        ids = [o.conversation_id for o in ann.outcomes(run_id)]
        owners = set(conn.execute(select(conversations.c.owner).where(conversations.c.id.in_(ids))).scalars())
    assert (run_owner, owners) == (A, {B})
    first = ann.outcomes(run_id)[0]
    assert [m.role for m in bob.transcript(first)] == ["user", "assistant"]
    assert ann.transcript(first) == [] and not ann.conversations.exists(str(first.conversation_id))


def test_bobs_run_stops_storing_once_ann_takes_back_editing(any_store_url: str) -> None:
    engine = create_store_engine(any_store_url)
    experiment_id, anns_run = _anns_stopped_run(engine)
    ann, bob = ExperimentStore(engine, A), ExperimentStore(engine, B)
    ann.share(experiment_id, "edit")
    spec = ann.load_spec(anns_run).model_copy(update={"run_id": "bobs-run"})
    bobs_run = bob.create_run(spec, experiment_id)
    bob.record(bobs_run, [ItemOutcome(item_id="q0", variant="v", output="0")])
    ann.share(experiment_id, "read")
    with pytest.raises(ExperimentAccessError, match="to read only"):
        bob.record(bobs_run, [ItemOutcome(item_id="q1", variant="v", output="1")])
    with pytest.raises(ExperimentAccessError, match="to read only"):
        bob.set_status(bobs_run, "finished")
    assert [(o.item_id, r.status) for r in [bob.get_run(bobs_run)] for o in bob.outcomes(bobs_run)] == [
        ("q0", "running")
    ]
    # Ann, the owner, still stops her own run of it.
    ann.set_status(anns_run, "failed", "given up")
    assert ann.get_run(anns_run).status == "failed"
