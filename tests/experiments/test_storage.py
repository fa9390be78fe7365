"""Experiments in the store (SQLite and PostgreSQL): runs, transcripts kept out of Chat's list,
usage rows tagged with the experiment and run, resume after a restart, the version-6 migration."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from sqlalchemy import inspect, select, text

from tests.fixtures.core import make_tool, tool_call_response
from yiem import AbortSignal, LlmModel, ModelCost, ScriptedLlm
from yiem.chat import ChatSession
from yiem.experiments import (
    Dataset,
    ExperimentStore,
    Progress,
    Variant,
    resume_experiment,
    run_experiment,
    scorers,
)
from yiem.store import SCHEMA_VERSION, ConversationStore, create_store_engine, current_schema_version, usage

PRICED = LlmModel(id="m", provider="scripted", cost=ModelCost(input=1.0, output=2.0), price_known=True)
JUDGE = LlmModel(id="judge-1", provider="judgeco", cost=ModelCost(input=10.0, output=10.0), price_known=True)


@pytest.fixture
def db_url(any_store_url: str) -> str:
    return any_store_url


def reply(text: str) -> dict[str, Any]:
    return {"content": text, "usage": {"inputTokens": 10, "outputTokens": 5}}


def data() -> Dataset:
    return Dataset.from_records([{"id": f"q{n}", "input": f"say {n}", "expected": str(n)} for n in range(4)])


def test_run_is_stored_with_hidden_transcripts_and_tagged_usage(db_url: str) -> None:
    engine = create_store_engine(db_url)
    store = ExperimentStore(engine)
    tool = make_tool("noop", lambda *_: "done")
    llm = ScriptedLlm([tool_call_response(("noop", {})), reply("0"), reply("1"), reply("x"), reply("3")])
    judge = ScriptedLlm(
        [{"content": '{"score": 1, "reason": "fine"}', "usage": {"inputTokens": 7, "outputTokens": 3}}] * 4
    )
    variant = Variant(name="v", llm=llm, model=PRICED, tools=["noop"])
    result = run_experiment(
        data(),
        [variant],
        [scorers.contains(), scorers.rubric("ok?", Variant(name="j", llm=judge, model=JUDGE))],
        name="quiz",
        store=store,
        tools={"noop": tool},
        concurrency=1,
    )
    assert result.status == "finished"
    record = store.get_run(result.run_id)
    assert (record.status, record.total, record.done) == ("finished", 4, 4)
    [experiment] = store.list_experiments()
    assert experiment.name == "quiz" and record.experiment_id == experiment.id

    loaded = store.load_result(result.run_id)
    assert [o.item_id for o in loaded.outcomes] == ["q0", "q1", "q2", "q3"]
    assert [o.passed for o in loaded.outcomes] == [True, True, False, True]
    assert loaded.summary()[0].passed == 3
    # The transcript is a conversation, loaded on demand, with its tool call.
    first = loaded.outcomes[0]
    assert first.messages == [] and first.conversation_id is not None
    transcript = store.transcript(first)
    assert [m.role for m in transcript] == ["user", "assistant", "toolResult", "assistant"]

    # Kept out of Chat's list until opened in Chat.
    conversations = ConversationStore(engine)
    assert conversations.list_conversations() == []
    chat = ChatSession(conversations)
    chat.open(first.conversation_id)
    assert [c.id for c in conversations.list_conversations()] == [first.conversation_id]
    assert len(chat.messages) == 4

    # Usage rows: 5 replies and 4 judge calls, each tagged with the experiment and run.
    with engine.connect() as conn:
        rows = conn.execute(select(usage).order_by(usage.c.id)).all()
    assert len(rows) == 9
    assert {(r.experiment_id, r.run_id) for r in rows} == {(experiment.id, result.run_id)}
    judged = [r for r in rows if r.stop_reason == "judge"]
    assert [(r.provider, r.model, r.input_tokens, r.conversation_id) for r in judged] == [
        ("judgeco", "judge-1", 7, None)
    ] * 4
    assert judged[0].cost_total == pytest.approx(100 / 1_000_000) and judged[0].price_known
    # The tool call's reply: 100 in, 20 out; the four answers: 10 in, 5 out ($1 and $2 per 1M).
    spent = (100 * 1 + 20 * 2) / 1e6 + 4 * (10 * 1 + 5 * 2) / 1e6
    assert sum(r.cost_total for r in rows if r.stop_reason != "judge") == pytest.approx(spent)
    assert result.judge_cost == pytest.approx(4 * 100 / 1_000_000)


def test_stopped_run_resumes_after_a_restart(db_url: str) -> None:
    store = ExperimentStore(create_store_engine(db_url))
    signal = AbortSignal()
    stopped_yet = threading.Event()

    def after_the_stop(text: str) -> Any:
        # An item queued ahead may start while the caller stores the first two: it waits for the Stop.
        def answer(_context: Any) -> dict[str, Any]:
            stopped_yet.wait(10)
            return reply(text)

        return answer

    first_llm = ScriptedLlm([reply("0"), reply("1"), after_the_stop("2"), after_the_stop("3")])

    def stop_after_two(progress: Progress) -> None:
        if progress.done == 2:
            signal.abort("Stop pressed")
            stopped_yet.set()

    stopped = run_experiment(
        data(),
        [Variant(name="v", llm=first_llm, model=PRICED)],
        [scorers.contains()],
        store=store,
        signal=signal,
        progress=stop_after_two,
        concurrency=1,
    )
    assert stopped.status == "stopped" and len(stopped.outcomes) == 2
    assert store.get_run(stopped.run_id).status == "stopped"

    # A new process: a new engine and store; the client object is given again (it is never stored).
    store = ExperimentStore(create_store_engine(db_url))
    second_llm = ScriptedLlm([reply("2"), reply("3")])
    seen: list[Progress] = []
    resumed = resume_experiment(
        store, stopped.run_id, [Variant(name="v", llm=second_llm, model=PRICED)], progress=seen.append
    )
    assert resumed.status == "finished"
    assert [o.passed for o in resumed.outcomes] == [True] * 4
    assert [r.messages[0].content[0].text for r in second_llm.requests] == ["say 2", "say 3"]  # type: ignore[union-attr]
    assert (seen[0].done, seen[0].resumed, seen[-1].done) == (2, 2, 4)
    assert store.get_run(stopped.run_id).status == "finished"
    assert len(store.list_runs()) == 1


def test_failed_run_is_marked(db_url: str) -> None:
    store = ExperimentStore(create_store_engine(db_url))
    with pytest.raises(Exception, match="no connected MCP server"):
        run_experiment(data(), [Variant(name="v", llm=ScriptedLlm([]), tools=["gone"])], store=store)
    [run] = store.list_runs()
    assert run.status == "failed" and "gone" in (run.stop_reason or "")


def test_a_version_5_database_migrates_to_6(db_url: str) -> None:
    engine = create_store_engine(db_url)
    conversations = ConversationStore(engine)
    kept = conversations.create(title="before experiments")
    # Take the database back to version 5: no experiment tables, no new columns.
    with engine.begin() as conn:
        # Tables of later versions that hang on the experiment tables go too (migration 19 remakes them).
        for table in ("review_reveals", "review_assignments", "experiment_reviews"):
            conn.execute(text(f"DROP TABLE {table}"))
        for table in ("experiment_outcomes", "experiment_runs", "experiments"):
            conn.execute(text(f"DROP TABLE {table}"))
        conn.execute(text("DROP INDEX ix_usage_experiment"))
        for table, column in (("conversations", "hidden"), ("usage", "experiment_id"), ("usage", "run_id")):
            conn.execute(text(f"ALTER TABLE {table} DROP COLUMN {column}"))
        conn.execute(text("UPDATE schema_version SET version = 5"))
    engine.dispose()
    engine = create_store_engine(db_url)
    with engine.connect() as conn:
        assert current_schema_version(conn) == SCHEMA_VERSION
        assert {"experiments", "experiment_runs", "experiment_outcomes"} <= set(
            inspect(conn).get_table_names()
        )
        assert "run_id" in {c["name"] for c in inspect(conn).get_columns("usage")}
    assert [c.id for c in ConversationStore(engine).list_conversations()] == [kept.id]  # not hidden
    run_experiment(
        data(), [Variant(name="v", llm=ScriptedLlm([reply("0")] * 4))], store=ExperimentStore(engine)
    )


def test_experiment_drafts(db_url: str) -> None:
    store = ExperimentStore(create_store_engine(db_url))
    first = store.save_experiment("a", {"items": 1})
    assert store.save_experiment("a2", {"items": 2}, first) == first
    assert store.get_experiment(first).data == {"items": 2}
    store.delete_experiment(first)
    assert store.list_experiments() == []


def test_lone_surrogates_in_an_item_are_stored_and_read_back_replaced(db_url: str) -> None:
    """Issue 12: JSON's "\\ud800" in an item's input or the model's output made saving the run raise."""
    store = ExperimentStore(create_store_engine(db_url))
    dataset = Dataset.from_records([{"id": "q1", "input": "say \ud800", "expected": "\ud800"}])
    llm = ScriptedLlm([reply("got \ud800")])
    result = run_experiment(
        dataset, [Variant(name="v", llm=llm, model=PRICED)], [scorers.contains()], store=store, concurrency=1
    )
    assert result.status == "finished" and [o.error for o in result.outcomes] == [None]

    loaded = store.load_result(result.run_id)
    [outcome] = loaded.outcomes
    assert outcome.output == "got \ufffd"
    assert [m.text for m in store.transcript(outcome)] == ["say \ufffd", "got \ufffd"]
    assert store.load_spec(result.run_id).dataset.items[0].input == "say \ufffd"
    # The exports are written as UTF-8 too.
    assert "\ufffd" in loaded.to_json().encode().decode()
    assert dataset.to_jsonl().encode().decode().startswith('{"id": "q1", "input": "say \ufffd"')
    draft = store.save_experiment("odd \ud800", {"input": "say \ud800"})
    assert store.get_experiment(draft).data == {"input": "say \ufffd"}
    assert store.experiment_named("odd \ud800") == draft


def test_saved_variants_are_every_experiment_s_that_this_version_can_read(db_url: str) -> None:
    store = ExperimentStore(create_store_engine(db_url))
    store.save_experiment(
        "first", {"variants": [Variant(name="a", provider="groq", model_id="m").settings_dict()]}
    )
    broken = {"name": "broken", "max_turns": 0}  # fails validation: not offered
    store.save_experiment("second", {"variants": [Variant(name="b").settings_dict(), broken], "repeats": 1})
    store.save_experiment("empty", {})
    found = sorted((name, variant.name, variant.label) for name, variant in store.saved_variants())
    assert found == [("first", "a", "groq/m"), ("second", "b", "local")]  # no provider: the embedded model
