"""Each person's rows: every store, costs and votes query run as two owners, on SQLite and PostgreSQL.

A's queries must never return, count, change or delete a row of B's (and B's rows stay intact).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

import pytest
from sqlalchemy import Engine, inspect, select, text

from tests.fixtures.costs import utc_ms
from yiem import costs
from yiem.compare import Vote, VoteStore
from yiem.experiments import (
    Dataset,
    ExperimentResult,
    ExperimentStore,
    RunSpec,
    Variant,
    run_experiment,
    run_spec,
    scorers,
)
from yiem.identity import LOCAL_OWNER_ID
from yiem.scripted_llm import ScriptedLlm
from yiem.store import (
    SCHEMA_VERSION,
    ConversationNotFoundError,
    ConversationStore,
    compare_votes,
    conversations,
    create_store_engine,
    current_schema_version,
    usage,
    usage_conversation_hourly,
    usage_hourly,
)
from yiem.types import AssistantMessage, LlmModel, LlmUsage, ModelCost, TextContent, UserMessage

A, B = "ann@example.com", "bob@example.com"
# Times around whole hours, so the costs queries read both the rollups and the partial edge hours.
TIMES = ("2026-10-24T20:30:00", "2026-10-24T22:10:00", "2026-10-25T01:05:00", "2026-10-25T03:30:00")
RANGE = costs.UsageFilter(start_ms=utc_ms("2026-10-24T20:15:00"), end_ms=utc_ms("2026-10-25T03:45:00"))


def _model(owner: str) -> LlmModel:
    tag = owner[0]
    return LlmModel(
        id=f"model-{tag}", provider=f"prov-{tag}", cost=ModelCost(input=1.0, output=2.0), price_known=True
    )


def _reply(owner: str, when: str, text_: str) -> AssistantMessage:
    model = _model(owner)
    return AssistantMessage(
        content=[TextContent(text=text_)],
        api="openai-completions",
        provider=model.provider,
        model=model.id,
        usage=LlmUsage(input_tokens=100, output_tokens=10),
        duration_ms=100.0 if owner == A else 900.0,
        ttft_ms=10.0 if owner == A else 90.0,
        timestamp=datetime.fromisoformat(when + "+00:00"),
    )


def _fill(engine: Engine, owner: str, replies: int) -> tuple[ConversationStore, str]:
    """`owner`'s conversation with `replies` replies (the last one estimated) and a vote."""
    store = ConversationStore(engine, owner)
    conversation = store.create(title=f"secret of {owner}", setup={"model": f"model-{owner[0]}"})
    for index in range(replies):
        store.append_message(conversation.id, UserMessage.from_text(f"question {index} of {owner}"))
        store.append_message(
            conversation.id,
            _reply(owner, TIMES[index % len(TIMES)], f"answer of {owner}"),
            _model(owner),
            usage_estimated=index == replies - 1,
        )
    VoteStore(engine, owner).add(Vote(left_model=f"model-{owner[0]}", right_model="x", verdict="left"))
    return store, conversation.id


@pytest.fixture
def two(any_store_url: str) -> dict[str, Any]:
    engine = create_store_engine(any_store_url)
    store_a, id_a = _fill(engine, A, 4)
    store_b, id_b = _fill(engine, B, 7)
    return {"engine": engine, "a": store_a, "b": store_b, "id_a": id_a, "id_b": id_b}


def test_conversation_reads_see_only_the_owners_rows(two: dict[str, Any]) -> None:
    a: ConversationStore = two["a"]
    assert [c.id for c in a.list_conversations()] == [two["id_a"]]
    assert [c.id for c in a.list_conversations("secret")] == [two["id_a"]]
    assert a.list_conversations("bob") == []
    assert a.last_setup() == {"model": "model-a"}
    assert a.exists(two["id_a"]) and not a.exists(two["id_b"])
    assert len(a.load_messages(two["id_a"])) == 8
    assert a.load_messages(two["id_b"]) == []
    with pytest.raises(ConversationNotFoundError, match="not yours"):
        a.get(two["id_b"])
    # A new store for a person who has nothing yet sees nothing at all.
    nobody = ConversationStore(two["engine"], "carol@example.com")
    assert nobody.list_conversations() == [] and nobody.last_setup() is None


def test_writes_to_another_owners_conversation_are_refused_and_change_nothing(two: dict[str, Any]) -> None:
    a: ConversationStore = two["a"]
    b: ConversationStore = two["b"]
    victim = two["id_b"]
    before = (b.get(victim), b.load_messages(victim))
    attempts = [
        lambda: a.rename(victim, "mine now"),
        lambda: a.update_settings(victim, model="other", setup={"x": 1}),
        lambda: a.reveal(victim),
        lambda: a.delete(victim),
        lambda: a.choose(victim, b.load_path(victim).ids[0]),
        lambda: a.fork(victim, b.load_path(victim).ids[0]),
        lambda: a.replace_messages(victim, [UserMessage.from_text("overwritten")]),
        lambda: a.append_message(victim, _reply(A, TIMES[0], "injected"), _model(A)),
    ]
    for attempt in attempts:
        with pytest.raises(ConversationNotFoundError, match="not yours"):
            attempt()
    assert (b.get(victim), b.load_messages(victim)) == before
    with two["engine"].connect() as conn:  # the refused append left no usage row behind either
        owners = {
            row.owner for row in conn.execute(select(usage.c.owner).where(usage.c.conversation_id == victim))
        }
    assert owners == {B}


def test_every_costs_query_counts_only_the_owners_requests(two: dict[str, Any]) -> None:
    engine = two["engine"]
    mine = replace(RANGE, owner=A)
    assert costs.counts(engine, mine).requests == 4
    assert costs.totals(engine, mine).input_tokens == 400
    for tz in ("UTC", "Asia/Kolkata"):  # whole-hour zone (rollups) and half-hour zone (rows)
        summary = costs.summarize(engine, mine, tz)
        assert {(r.owner, r.model) for r in summary.rows} == {(A, "model-a")}
        assert summary.counts().requests == 4
    assert costs.medians(engine, mine) == (100.0, 10.0)
    assert costs.headline(engine, mine).current.totals.requests == 4
    assert costs.estimated_requests(engine, mine) == 1
    top = costs.top_conversations(engine, mine)
    assert [(r.conversation_id, r.label, r.totals.requests) for r in top] == [
        (two["id_a"], f"secret of {A}", 4)
    ]
    board = costs.dashboard(engine, mine, "Europe/Paris")
    assert board.headline.current.totals.requests == 4 and board.estimated_requests == 1
    assert [r.conversation_id for r in board.top_conversations] == [two["id_a"]]
    assert costs.data_range(engine, costs.UsageFilter(owner=A)) == (
        utc_ms(TIMES[0]),
        utc_ms(TIMES[3]) + 1,
    )
    assert costs.filter_options(engine, A) == [("prov-a", "model-a")]
    assert costs.conversation_titles(engine, [two["id_a"], two["id_b"]], A) == {two["id_a"]: f"secret of {A}"}
    rows = [row for chunk in costs.iter_rows(engine, mine) for row in chunk]
    assert {row["owner"] for row in rows} == {A} and len(rows) == 4
    assert "bob" not in "".join(costs.iter_csv(engine, mine))
    # B's conversation asked for by id, as A: nothing.
    theirs = replace(mine, conversation_id=two["id_b"])
    assert costs.counts(engine, theirs).requests == 0
    assert costs.top_conversations(engine, theirs) == []


def test_the_team_view_has_everyone_with_a_breakdown_per_person(two: dict[str, Any]) -> None:
    engine = two["engine"]
    team = replace(RANGE, owner=None)
    summary = costs.summarize(engine, team, "UTC")
    per_person = {row.key: row.totals.requests for row in summary.breakdown("owner")}
    assert per_person == {A: 4, B: 7}
    assert costs.filter_options(engine, None) == [("prov-a", "model-a"), ("prov-b", "model-b")]
    assert {r.conversation_id for r in costs.top_conversations(engine, team)} == {two["id_a"], two["id_b"]}


def test_votes_are_read_per_owner(two: dict[str, Any]) -> None:
    engine = two["engine"]
    assert [v.left_model for v in VoteStore(engine, A).votes()] == ["model-a"]
    assert [v.left_model for v in VoteStore(engine, B).votes()] == ["model-b"]
    assert sorted(v.left_model for v in VoteStore(engine, None).votes()) == ["model-a", "model-b"]
    with pytest.raises(ValueError, match="one person"):
        VoteStore(engine, None).add(Vote(left_model="m", right_model="n", verdict="tie"))


def _experiment(engine: Engine, owner: str) -> tuple[str, ExperimentResult]:
    """`owner` runs an experiment of their own: one item, one scripted reply; its id and result."""
    store = ExperimentStore(engine, owner)
    data = Dataset.from_records([{"id": "q", "input": f"question of {owner}", "expected": "answer"}])
    variant = Variant(name="v", llm=ScriptedLlm([f"answer of {owner}"]))
    result = run_experiment(data, [variant], [scorers.contains()], name=f"quiz of {owner}", store=store)
    return store.experiment_named(f"quiz of {owner}"), result


def test_costs_lists_an_experiment_by_name_only_while_its_owner_shares_it(any_store_url: str) -> None:
    engine = create_store_engine(any_store_url)
    exp_a, _ = _experiment(engine, A)
    ann = ExperimentStore(engine, A)
    ann.share(exp_a, "edit")
    # B runs A's shared experiment: B's own requests, counted on B's Costs page under its name.
    bob = ExperimentStore(engine, B)
    data = Dataset.from_records([{"id": "q", "input": "question of bob", "expected": "answer"}])
    spec = RunSpec.build(data, [Variant(name="v", llm=ScriptedLlm(["answer"]))], [scorers.contains()])
    run_spec(spec, bob.recorder(bob.create_run(spec, exp_a)))
    assert costs.experiment_options(engine, B) == [(exp_a, f"quiz of {A}")]
    ann.share(exp_a, "read")
    assert costs.experiment_options(engine, B) == [(exp_a, f"quiz of {A}")]  # read: still B's to see
    ann.share(exp_a, "private")
    assert costs.experiment_options(engine, B) == []  # its name is A's again
    assert costs.experiment_options(engine, A) == [(exp_a, f"quiz of {A}")]
    assert {e for e, _ in costs.experiment_options(engine, None)} == {exp_a}  # the admin's whole team
    every_time = costs.UsageFilter(start_ms=0, end_ms=utc_ms("2100-01-01T00:00:00"))
    assert costs.counts(engine, replace(every_time, owner=B)).requests == 1  # B's spending still counts


def test_experiment_transcripts_and_costs_are_the_runners_own(any_store_url: str) -> None:
    engine = create_store_engine(any_store_url)
    exp_a, run_a = _experiment(engine, A)
    exp_b, run_b = _experiment(engine, B)
    assert costs.experiment_options(engine, A) == [(exp_a, f"quiz of {A}")]
    assert costs.experiment_options(engine, B) == [(exp_b, f"quiz of {B}")]
    assert {e for e, _ in costs.experiment_options(engine, None)} == {exp_a, exp_b}
    # B's experiment on A's Costs page (a shared ?experiment= link): none of B's requests.
    every_time = costs.UsageFilter(start_ms=0, end_ms=utc_ms("2100-01-01T00:00:00"))
    assert costs.counts(engine, replace(every_time, owner=A, experiment_id=exp_b)).requests == 0
    assert costs.counts(engine, replace(every_time, owner=B, experiment_id=exp_b)).requests == 1
    assert costs.counts(engine, replace(every_time, owner=None, experiment_id=exp_b)).requests == 1

    as_a, as_b = ExperimentStore(engine, A), ExperimentStore(engine, B)
    # B shares the experiment with the team to read: A reads B's run's outcomes...
    as_b.share(exp_b, "read")
    (theirs,) = as_a.load_result(run_b.run_id).outcomes
    assert {e.id for e in as_a.list_experiments()} == {exp_a, exp_b}
    # ...but B's transcript, a hidden conversation of B's, stays B's.
    assert theirs.conversation_id is not None
    assert as_a.transcript(theirs) == []
    assert "answer of " + B in [m.text for m in as_b.transcript(theirs) if isinstance(m, AssistantMessage)]
    with pytest.raises(ConversationNotFoundError, match="not yours"):
        ConversationStore(engine, A).get(theirs.conversation_id)
    (mine,) = as_a.load_result(run_a.run_id).outcomes
    assert [m.role for m in as_a.transcript(mine)] == ["user", "assistant"]
    with engine.connect() as conn:
        for run, owner in ((run_a, A), (run_b, B)):
            stored = select(usage.c.owner).where(usage.c.run_id == run.run_id)
            assert set(conn.execute(stored).scalars()) == {owner}
            hidden = select(conversations.c.owner).where(
                conversations.c.id.in_(
                    [o.conversation_id for o in ExperimentStore(engine, owner).outcomes(run.run_id)]
                )
            )
            assert set(conn.execute(hidden).scalars()) == {owner}


def test_rows_stored_before_owners_go_to_the_local_user(any_store_url: str) -> None:
    """A version-10 database (no owner anywhere) migrates with every row the local user's."""
    engine = create_store_engine(any_store_url)
    local = ConversationStore(engine)
    kept = local.create(title="before sign-in")
    local.append_message(kept.id, _reply(A, TIMES[1], "old answer"), _model(A))
    VoteStore(engine).add(Vote(left_model="m", right_model="n", verdict="tie"))
    _back_to_version_10(engine)
    engine.dispose()

    migrated = create_store_engine(any_store_url)
    with migrated.connect() as conn:
        assert current_schema_version(conn) == SCHEMA_VERSION
        for table in (conversations, usage, compare_votes, usage_hourly, usage_conversation_hourly):
            assert set(conn.execute(select(table.c.owner)).scalars()) == {LOCAL_OWNER_ID}
    assert [c.title for c in ConversationStore(migrated).list_conversations()] == ["before sign-in"]
    assert ConversationStore(migrated, A).list_conversations() == []
    assert (
        costs.counts(migrated, costs.UsageFilter(start_ms=0, end_ms=utc_ms("2027-01-01T00:00:00"))).requests
        == 1
    )


def _back_to_version_10(engine: Engine) -> None:
    # What version 10 had: no owner columns, rollups keyed without one. The rollups are dropped
    # (migration 11 makes them again either way) and so is every index that holds the owner.
    with engine.begin() as conn:
        for rollup in ("usage_hourly", "usage_conversation_hourly", "usage_per_conversation"):
            if conn.dialect.name == "postgresql":
                conn.execute(text(f"DROP TRIGGER {rollup}_add ON usage"))
                conn.execute(text(f"DROP FUNCTION {rollup}_add()"))
            else:
                conn.execute(text(f"DROP TRIGGER {rollup}_add"))
            conn.execute(text(f"DROP TABLE {rollup}"))
        conn.execute(text("DROP INDEX ix_usage_hour"))  # an expression index: reflection skips it
        for table in ("conversations", "usage", "compare_votes"):
            for index in inspect(conn).get_indexes(table):
                if "owner" in index["column_names"]:
                    conn.execute(text(f"DROP INDEX {index['name']}"))
            conn.execute(text(f"ALTER TABLE {table} DROP COLUMN owner"))
        conn.execute(text("UPDATE schema_version SET version = 10"))
