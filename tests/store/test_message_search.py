"""Searching message text (SQLite FTS5, PostgreSQL text search): snippets, owners, deletes, migration."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from yiem.store import (
    MATCH_END,
    MATCH_START,
    SCHEMA_VERSION,
    ConversationStore,
    create_store_engine,
    current_schema_version,
)
from yiem.types import AssistantMessage, TextContent, ToolResultMessage, UserMessage

REPLY = "Quokkas live on Rottnest Island, where they are small, friendly marsupials."


@pytest.fixture
def store(any_store_url: str) -> ConversationStore:
    return ConversationStore(create_store_engine(any_store_url))


def _reply(words: str) -> AssistantMessage:
    return AssistantMessage(content=[TextContent(text=words)], provider="p", model="m")


def _chat(store: ConversationStore, title: str, prompt: str, reply: str) -> str:
    conversation = store.create(title=title)
    store.add_message(conversation.id, UserMessage.from_text(prompt))
    store.add_message(conversation.id, _reply(reply))
    return conversation.id


def _found(store: ConversationStore, search: str) -> list[tuple[str, str]]:
    return [(c.title, c.match) for c in store.list_conversations(search)]


def test_a_word_only_in_a_reply_finds_its_conversation_with_a_snippet(store: ConversationStore) -> None:
    _chat(store, "Animals", "Tell me about quokkas", REPLY)
    _chat(store, "Cooking", "A soup recipe", "Simmer the leeks slowly.")
    [(title, match)] = _found(store, "rottnest")
    assert title == "Animals"
    assert f"{MATCH_START}Rottnest{MATCH_END} Island" in match
    assert _found(store, "ROTTN")[0][0] == "Animals"  # any case, and the start of a word
    assert [t for t, _m in _found(store, "rottnest marsupials")] == ["Animals"]  # every word
    assert _found(store, "rottnest leeks") == []


def test_json_keys_and_roles_are_not_searched(store: ConversationStore) -> None:
    _chat(store, "Animals", "Tell me about quokkas", REPLY)
    for word in ("assistant", "role", "content", "timestamp", "provider"):
        assert _found(store, word) == [], word


def test_titles_are_still_found_without_a_snippet(store: ConversationStore) -> None:
    _chat(store, "Trip to Perth", "Tell me about quokkas", REPLY)
    assert _found(store, "to per") == [("Trip to Perth", "")]  # a title's inside, not only words
    assert _found(store, "--") == []  # no word at all: titles only


def test_tool_results_and_imported_messages_are_searched(store: ConversationStore) -> None:
    conversation = store.create(title="Imported")
    result = ToolResultMessage(
        tool_call_id="c1", tool_name="weather", content=[TextContent(text="Drizzle over Wellington")]
    )
    store.replace_messages(conversation.id, [UserMessage.from_text("weather?"), result])
    assert _found(store, "wellington")[0][0] == "Imported"


def test_another_owner_never_finds_or_sees_the_text(any_store_url: str) -> None:
    engine = create_store_engine(any_store_url)
    ann, bob = ConversationStore(engine, owner="ann"), ConversationStore(engine, owner="bob")
    _chat(ann, "Ann's", "quokkas?", REPLY)
    _chat(bob, "Bob's", "wombats?", "Wombats dig burrows.")
    assert [t for t, _m in _found(ann, "rottnest")] == ["Ann's"]
    assert _found(bob, "rottnest") == []
    assert _found(ann, "burrows") == []


def test_deleted_and_hidden_conversations_are_not_found(store: ConversationStore) -> None:
    gone = _chat(store, "Gone", "quokkas?", REPLY)
    store.delete(gone)
    hidden = store.create(title="Experiment item", hidden=True)
    store.add_message(hidden.id, _reply(REPLY))
    assert _found(store, "rottnest") == []
    store.reveal(hidden.id)
    assert [t for t, _m in _found(store, "rottnest")] == ["Experiment item"]


def test_messages_stored_before_version_17_are_found_after_migrating(any_store_url: str) -> None:
    engine = create_store_engine(any_store_url)
    with engine.begin() as conn:  # back to version 15: no search index of messages (17), no library (16)
        if conn.dialect.name == "postgresql":
            conn.execute(text("DROP INDEX ix_messages_search"))
            conn.execute(text("DROP FUNCTION yiem_message_text(TEXT)"))
        else:
            for trigger in ("insert", "delete", "update"):
                conn.execute(text(f"DROP TRIGGER message_search_{trigger}"))
            conn.execute(text("DROP TABLE message_search"))
        conn.execute(text("UPDATE schema_version SET version = 15"))
    _chat(ConversationStore(engine), "Old one", "quokkas?", REPLY)
    engine.dispose()
    engine = create_store_engine(any_store_url)
    with engine.connect() as conn:
        assert current_schema_version(conn) == SCHEMA_VERSION
    assert [t for t, _m in _found(ConversationStore(engine), "rottnest")] == ["Old one"]
