"""Experiments are their owner's: private by default, shared with the team to read or edit by choice.

Run as two people (and an admin) on SQLite and PostgreSQL: what Bob sees, changes and deletes of
Ann's experiment at each sharing, and the migration that gives older experiments an owner.
"""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, func, select, text

from yiem.experiments import (
    ChatItemsNeedConfirmationError,
    Dataset,
    ExperimentAccessError,
    ExperimentDraft,
    ExperimentNotFoundError,
    ExperimentOwnerError,
    ExperimentStore,
    Variant,
    run_experiment,
    scorers,
)
from yiem.identity import LOCAL_OWNER_ID
from yiem.scripted_llm import ScriptedLlm
from yiem.store import (
    SCHEMA_VERSION,
    ConversationStore,
    create_store_engine,
    current_schema_version,
    experiment_runs,
    experiments,
)
from yiem.types import AssistantMessage, TextContent, UserMessage

A, B, ADMIN = "ann@example.com", "bob@example.com", "boss@example.com"


def _anns_experiment(engine: Engine) -> tuple[str, str]:
    """Ann's experiment with one run of one scripted item: its id and the run's id."""
    store = ExperimentStore(engine, A)
    data = Dataset.from_records([{"id": "q", "input": "Ann's question", "expected": "answer"}])
    variant = Variant(name="v", provider="openai", model_id="gpt-x")
    experiment_id = store.save_experiment(
        "Ann's quiz",
        ExperimentDraft(dataset=data, variants=[variant]).model_dump(mode="json", exclude={"name"}),
    )
    scripted = Variant(name="v", llm=ScriptedLlm(["the answer"]))
    result = run_experiment(data, [scripted], [scorers.contains()], name="Ann's quiz", store=store)
    return experiment_id, result.run_id


def _bob_sees(engine: Engine, experiment_id: str, run_id: str) -> bool:
    bob = ExperimentStore(engine, B)
    listed = experiment_id in {e.id for e in bob.list_experiments()}
    offered = any(name == "Ann's quiz" for name, _ in bob.saved_variants())
    runs = [r.id for r in bob.list_runs(experiment_id)] + [r.id for r in bob.list_runs()]
    assert listed == offered == (run_id in runs), (listed, offered, runs)
    return listed


def test_a_new_experiment_is_its_owners_alone(any_store_url: str) -> None:
    engine = create_store_engine(any_store_url)
    experiment_id, run_id = _anns_experiment(engine)
    ann, bob = ExperimentStore(engine, A), ExperimentStore(engine, B)
    record = ann.get_experiment(experiment_id)
    assert (record.owner, record.sharing) == (A, "private")
    assert not _bob_sees(engine, experiment_id, run_id)
    for attempt in (
        lambda: bob.get_experiment(experiment_id),
        lambda: bob.load_result(run_id),
        lambda: bob.load_spec(run_id),
        lambda: bob.get_run(run_id),
        lambda: bob.save_experiment("mine now", {}, experiment_id),
        lambda: bob.delete_experiment(experiment_id),
        lambda: bob.share(experiment_id, "edit"),
        lambda: bob.copy_experiment(experiment_id),
    ):
        with pytest.raises(ExperimentNotFoundError, match="not shared with you"):
            attempt()
    assert bob.outcomes(run_id) == []
    # An admin does not see a private one either: Ann's items may be her chats.
    assert ExperimentStore(engine, ADMIN, admin=True).list_experiments() == []
    assert ann.get_experiment(experiment_id) == record


def test_shared_to_read_bob_sees_it_cannot_change_it_and_copies_it(any_store_url: str) -> None:
    engine = create_store_engine(any_store_url)
    experiment_id, run_id = _anns_experiment(engine)
    ann, bob = ExperimentStore(engine, A), ExperimentStore(engine, B)
    ann.share(experiment_id, "read")
    assert _bob_sees(engine, experiment_id, run_id)
    seen = bob.get_experiment(experiment_id)
    assert (seen.owner, seen.sharing, bob.may_edit(seen), bob.may_manage(seen)) == (A, "read", False, False)
    assert [o.item_id for o in bob.load_result(run_id).outcomes] == ["q"]
    with pytest.raises(ExperimentAccessError, match="to read only"):
        bob.save_experiment("Ann's quiz", {"dataset": {"items": []}}, experiment_id)
    with pytest.raises(ExperimentAccessError, match=r"Only ann@example\.com"):
        bob.delete_experiment(experiment_id)
    with pytest.raises(ExperimentAccessError, match=r"Only ann@example\.com"):
        bob.share(experiment_id, "edit")
    with pytest.raises(ExperimentAccessError, match="to read only"):
        bob.create_run(ann.load_spec(run_id).model_copy(update={"run_id": "r2"}), experiment_id)
    assert ann.get_experiment(experiment_id) == seen  # nothing changed
    copy_id = bob.copy_experiment(experiment_id)
    copy = bob.get_experiment(copy_id)
    assert (copy.owner, copy.sharing, copy.name) == (B, "private", "Ann's quiz (copy)")
    assert copy.data == seen.data
    assert copy_id not in {e.id for e in ann.list_experiments()}


def test_shared_to_edit_bob_changes_it_but_only_ann_or_an_admin_deletes_it(any_store_url: str) -> None:
    engine = create_store_engine(any_store_url)
    experiment_id, run_id = _anns_experiment(engine)
    ann, bob = ExperimentStore(engine, A), ExperimentStore(engine, B)
    ann.share(experiment_id, "edit")
    bob.save_experiment("Ann's quiz", {"repeats": 3}, experiment_id)
    changed = ann.get_experiment(experiment_id)
    assert (changed.data, changed.owner, changed.sharing) == ({"repeats": 3}, A, "edit")
    with pytest.raises(ExperimentAccessError, match="rename"):
        bob.save_experiment("Bob's quiz", {}, experiment_id)
    with pytest.raises(ExperimentAccessError, match="delete"):
        bob.delete_experiment(experiment_id)
    assert ann.get_experiment(experiment_id).name == "Ann's quiz"
    # Bob's run of it is Bob's: its row names him, Ann's names her.
    bob_run = bob.create_run(ann.load_spec(run_id).model_copy(update={"run_id": "bobs-run"}), experiment_id)
    with engine.connect() as conn:
        owners = dict(conn.execute(select(experiment_runs.c.id, experiment_runs.c.owner)).all())
    assert owners == {run_id: A, bob_run: B}
    ExperimentStore(engine, ADMIN, admin=True).delete_experiment(experiment_id)
    with pytest.raises(ExperimentNotFoundError):
        ann.get_experiment(experiment_id)


def test_items_from_chats_are_shared_only_when_their_owner_confirms(any_store_url: str) -> None:
    engine = create_store_engine(any_store_url)
    chats = ConversationStore(engine, A)
    chat = chats.create(title="Ann's private chat")
    chats.append_message(chat.id, UserMessage.from_text("my salary is 90k, is that fair?"))
    chats.append_message(
        chat.id, AssistantMessage(content=[TextContent(text="yes")], provider="p", model="m")
    )
    draft = ExperimentDraft(dataset=Dataset.from_records([{"id": "typed", "input": "typed by Ann"}]))
    draft.dataset = draft.add_from_conversations(Dataset.from_conversations(chats, [chat.id]), A)
    (from_chat,) = [item.id for item in draft.dataset.items if item.id != "typed"]
    ann = ExperimentStore(engine, A)
    experiment_id = ann.save_experiment("chats", draft.model_dump(mode="json", exclude={"name"}))
    assert ann.get_experiment(experiment_id).chat_items == {from_chat: A}
    with pytest.raises(ChatItemsNeedConfirmationError, match="came from your conversations") as asked:
        ann.share(experiment_id, "read")
    assert asked.value.items == [from_chat] and from_chat in str(asked.value)
    assert ExperimentStore(engine, B).list_experiments() == []
    ann.share(experiment_id, "read", confirm_chat_items=True)
    assert [e.id for e in ExperimentStore(engine, B).list_experiments()] == [experiment_id]
    # An admin re-sharing cannot confirm for Ann: the chats are hers.
    ann.share(experiment_id, "private")
    boss = ExperimentStore(engine, ADMIN, admin=True)
    ann.share(experiment_id, "edit", confirm_chat_items=True)
    with pytest.raises(ChatItemsNeedConfirmationError, match="someone else's conversations"):
        boss.share(experiment_id, "read", confirm_chat_items=True)
    with pytest.raises(ExperimentAccessError, match="not 'team'"):
        ann.share(experiment_id, "team")


def test_experiments_stored_before_owners_go_to_the_local_user(any_store_url: str) -> None:
    engine = create_store_engine(any_store_url)
    experiment_id, _ = _anns_experiment(engine)
    local = ExperimentStore(engine).save_experiment("older", {})
    with engine.begin() as conn:
        conn.execute(text("DROP INDEX ix_experiments_owner"))
        for table, column in (
            ("experiments", "owner"),
            ("experiments", "sharing"),
            ("experiment_runs", "owner"),
        ):
            conn.execute(text(f"ALTER TABLE {table} DROP COLUMN {column}"))
        conn.execute(text("UPDATE schema_version SET version = 21"))
    engine.dispose()
    migrated = create_store_engine(any_store_url)
    with migrated.connect() as conn:
        assert current_schema_version(conn) == SCHEMA_VERSION >= 22
        rows = conn.execute(select(experiments.c.id, experiments.c.owner, experiments.c.sharing)).all()
        assert {tuple(r) for r in rows} == {
            (experiment_id, LOCAL_OWNER_ID, "private"),
            (local, LOCAL_OWNER_ID, "private"),
        }
        assert set(conn.execute(select(experiment_runs.c.owner)).scalars()) == {LOCAL_OWNER_ID}
    assert ExperimentStore(migrated, A).list_experiments() == []
    assert {e.id for e in ExperimentStore(migrated).list_experiments()} == {experiment_id, local}


def test_every_experiments_row_has_an_owner(any_store_url: str) -> None:
    """The store check: no experiment without a non-empty owner, however it was made."""
    engine = create_store_engine(any_store_url)
    # The one way a row could get an empty owner: a store made for nobody, refused where it is made.
    for nobody in ("", "  "):
        with pytest.raises(ExperimentOwnerError, match="needs the id of the person"):
            ExperimentStore(engine, nobody)
    _anns_experiment(engine)
    local = ExperimentStore(engine).save_experiment("local", {})
    ExperimentStore(engine).share(local, "read")
    ExperimentStore(engine, B).copy_experiment(local)
    with engine.connect() as conn:
        for table in (experiments, experiment_runs):
            empty = conn.execute(
                select(func.count()).select_from(table).where(func.coalesce(table.c.owner, "") == "")
            ).scalar()
            assert empty == 0
            assert conn.execute(select(func.count()).select_from(table)).scalar() > 0
