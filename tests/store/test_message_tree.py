"""Messages as a tree (schema 14): alternatives kept, the chosen path, switching, forks, whole trees."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect, select, text

from yiem.store import (
    SCHEMA_VERSION,
    ConversationStore,
    StoreError,
    create_store_engine,
    current_schema_version,
    messages,
    usage,
)
from yiem.types import AgentMessage, AssistantMessage, LlmUsage, TextContent, UserMessage


@pytest.fixture
def db_url(any_store_url: str) -> str:
    return any_store_url


@pytest.fixture
def store(db_url: str) -> ConversationStore:
    return ConversationStore(create_store_engine(db_url))


def _user(text: str) -> UserMessage:
    return UserMessage.from_text(text)


def _reply(text: str, output_tokens: int = 5) -> AssistantMessage:
    return AssistantMessage(
        content=[TextContent(text=text)],
        api="openai-completions",
        provider="openai",
        model="gpt-test",
        usage=LlmUsage(input_tokens=10, output_tokens=output_tokens),
    )


def _texts(found: list[AgentMessage]) -> list[str]:
    return [m.text for m in found]  # type: ignore[union-attr]


def test_a_version_13_database_becomes_chains_ending_at_the_last_message(db_url: str) -> None:
    engine = create_store_engine(db_url)
    store = ConversationStore(engine)
    kept = store.create(title="kept")
    for word in ("one", "two", "three"):
        store.append_message(kept.id, _user(word))
    empty = store.create(title="empty")
    with engine.begin() as conn:
        conn.execute(text("ALTER TABLE messages DROP COLUMN parent_id"))
        for column in ("current_leaf_id", "forked_from", "forked_from_message"):
            conn.execute(text(f"ALTER TABLE conversations DROP COLUMN {column}"))
        conn.execute(text("UPDATE schema_version SET version = 13"))
    engine.dispose()
    store = ConversationStore(create_store_engine(db_url))
    with store.engine.connect() as conn:
        assert current_schema_version(conn) == SCHEMA_VERSION
        assert "parent_id" in {c["name"] for c in inspect(conn).get_columns("messages")}
        rows = conn.execute(select(messages.c.id, messages.c.parent_id).order_by(messages.c.position)).all()
    assert [row.parent_id for row in rows] == [None, rows[0].id, rows[1].id]
    path = store.load_path(kept.id)
    assert (_texts(path.messages), path.ids) == (["one", "two", "three"], [row.id for row in rows])
    store.append_message(kept.id, _user("four"))  # goes after the last one, as before
    assert _texts(store.load_messages(kept.id)) == ["one", "two", "three", "four"]
    assert store.load_messages(empty.id) == []


def _turn(store: ConversationStore) -> tuple[str, list[int]]:
    conversation = store.create(title="tree")
    ids = [
        store.add_message(conversation.id, message).id
        for message in (_user("hi"), _reply("first answer"), _user("more?"), _reply("more"))
    ]
    return conversation.id, ids


def test_regenerate_adds_a_sibling_of_the_reply_and_keeps_the_old_one(store: ConversationStore) -> None:
    cid, (hi, first, _more, _answer) = _turn(store)
    second = store.add_message(cid, _reply("second answer", output_tokens=7), parent_id=hi)
    third = store.add_message(cid, _reply("third answer", output_tokens=9), parent_id=hi)
    path = store.load_path(cid)
    assert _texts(path.messages) == ["hi", "third answer"]  # the newest alternative is the chosen path
    assert path.siblings[1] == (first, second.id, third.id)
    assert path.siblings[0] == (hi,)
    with store.engine.connect() as conn:  # each alternative keeps its own usage row
        outputs = sorted(conn.execute(select(usage.c.output_tokens)).scalars())
    assert outputs == [5, 5, 7, 9]


def test_choosing_an_alternative_follows_its_latest_replies(store: ConversationStore) -> None:
    cid, (hi, first, _more, _answer) = _turn(store)
    store.add_message(cid, _reply("second answer"), parent_id=hi)
    store.choose(cid, first)
    assert _texts(store.load_messages(cid)) == ["hi", "first answer", "more?", "more"]
    store.append_message(cid, _user("after switching"))  # continues the chosen path
    assert _texts(store.load_messages(cid))[-2:] == ["more", "after switching"]
    with pytest.raises(StoreError, match="no longer in this conversation"):
        store.choose(cid, 10_000_000)


def test_edit_adds_a_sibling_of_the_prompt_even_the_first(store: ConversationStore) -> None:
    cid, (hi, first, more, _answer) = _turn(store)
    edited = store.add_message(cid, _user("more, please"), parent_id=first)
    store.add_message(cid, _reply("plenty"))
    path = store.load_path(cid)
    assert _texts(path.messages) == ["hi", "first answer", "more, please", "plenty"]
    assert path.siblings[2] == (more, edited.id)
    root = store.add_message(cid, _user("hello instead"), parent_id=None)
    path = store.load_path(cid)
    assert (_texts(path.messages), path.siblings[0]) == (["hello instead"], (hi, root.id))
    store.choose(cid, hi)
    assert _texts(store.load_messages(cid)) == ["hi", "first answer", "more, please", "plenty"]


def test_fork_copies_the_path_up_to_a_message_and_names_its_origin(store: ConversationStore) -> None:
    cid, (hi, first, _more, _answer) = _turn(store)
    store.add_message(cid, _reply("second answer"), parent_id=hi)
    store.choose(cid, first)
    fork = store.fork(cid, first)
    assert (fork.forked_from, fork.forked_from_message) == (cid, first)
    assert fork.title == "tree (fork)"
    assert _texts(store.load_messages(fork.id)) == ["hi", "first answer"]
    assert _texts(store.load_messages(cid)) == ["hi", "first answer", "more?", "more"]  # origin unchanged
    with store.engine.connect() as conn:  # the copy spent nothing: no usage row is added
        assert (
            conn.execute(select(usage.c.conversation_id).where(usage.c.conversation_id == fork.id)).all()
            == []
        )
    with pytest.raises(StoreError, match="no longer on this conversation's path"):
        store.fork(cid, 10_000_000)


def test_a_whole_tree_is_stored_and_read_back(store: ConversationStore) -> None:
    cid, (hi, _first, _more, _answer) = _turn(store)
    store.add_message(cid, _reply("second answer"), parent_id=hi)
    tree = store.load_tree(cid)
    assert _texts(tree.messages) == ["hi", "first answer", "more?", "more", "second answer"]
    assert (tree.parents, tree.current) == ([None, 0, 1, 2, 0], 4)
    copy = store.create(title="imported")
    store.replace_messages(copy.id, tree.messages, tree.parents, current=3)
    again = store.load_tree(copy.id)
    assert (_texts(again.messages), again.parents, again.current) == (_texts(tree.messages), tree.parents, 3)
    assert _texts(store.load_messages(copy.id)) == ["hi", "first answer", "more?", "more"]
    store.replace_messages(copy.id, [_user("a"), _reply("b")])  # no parents: one chain
    assert store.load_tree(copy.id).parents == [None, 0]


def test_a_conversation_written_flat_is_chained_when_next_written(store: ConversationStore) -> None:
    # An experiment item's transcript is stored in one insert, without parents or a chosen path.
    conversation = store.create(title="flat")
    with store.engine.begin() as conn:
        for position, word in enumerate(("q", "a")):
            conn.execute(
                messages.insert().values(
                    conversation_id=conversation.id,
                    position=position,
                    role="user",
                    data=_user(word).to_json(),
                    created_ms=0,
                )
            )
    path = store.load_path(conversation.id)
    assert _texts(path.messages) == ["q", "a"]
    store.add_message(conversation.id, _user("next"), parent_id=path.ids[-1])
    assert _texts(store.load_messages(conversation.id)) == ["q", "a", "next"]
