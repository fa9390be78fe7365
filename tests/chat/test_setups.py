"""A conversation's setup: made from the settings without the key, saved on send, restored on open."""

from __future__ import annotations

from pathlib import Path

import pytest

from yiem.chat import ChatSession, conversation_setup, stored_setup, user_message
from yiem.model_setup import ModelSetup
from yiem.store import ConversationStore, create_store_engine

KEY = "sk-typed-in-this-session-only"
SETTINGS = ModelSetup(
    provider="openai",
    base_url="https://api.openai.com/v1",
    model_id="gpt-4o-mini",
    api_key=KEY,
    system_prompt="Answer like a pirate.",
    temperature=0.3,
    max_tokens=512,
    tool_execution="sequential",
)


@pytest.fixture
def store(tmp_path: Path) -> ConversationStore:
    return ConversationStore(create_store_engine(f"sqlite:///{tmp_path / 'chat.db'}"))


def test_a_setup_never_holds_the_key() -> None:
    setup = SETTINGS.with_tools({"b", "a"}).as_stored()
    assert KEY not in setup.model_dump_json()
    assert setup.tools == ["a", "b"]
    assert (setup.system_prompt, setup.temperature, setup.max_tokens) == ("Answer like a pirate.", 0.3, 512)


def test_a_new_column_takes_the_model_alone_never_the_key_prompt_or_tools() -> None:
    column = SETTINGS.with_tools({"a"}).model_only()
    assert column == ModelSetup(provider="openai", base_url=SETTINGS.base_url, model_id="gpt-4o-mini")
    assert column.api_key == "" and column.label == "openai/gpt-4o-mini"


def test_applying_a_setup_keeps_the_typed_key_only_for_the_same_server() -> None:
    same = SETTINGS.restored(SETTINGS.with_tools([]).as_stored().model_copy(update={"system_prompt": "x"}))
    assert (same.api_key, same.system_prompt) == (KEY, "x")
    other = ModelSetup(
        provider="groq", model_id="llama-3.1-8b-instant", base_url="https://api.groq.com/openai/v1"
    )
    moved = SETTINGS.restored(other)
    assert (moved.provider, moved.api_key, moved.system_prompt, moved.temperature) == ("groq", "", "", None)


def test_a_sent_setup_is_saved_and_restored_and_not_overwritten(store: ConversationStore) -> None:
    chat = ChatSession(store)
    setup = SETTINGS.with_tools(["calc"]).as_stored()
    conversation_id = chat.keep_prompt(user_message("ahoy"), "", "", setup=setup)
    reopened = ChatSession(store)
    reopened.open(conversation_id)
    assert reopened.conversation is not None
    restored = conversation_setup(reopened.conversation, ModelSetup(), [])
    assert restored == setup
    reopened.keep_prompt(user_message("again"), "", "", setup=restored)
    assert store.get(conversation_id).system_prompt == "Answer like a pirate."
    changed = restored.model_copy(update={"temperature": 1.0})
    reopened.keep_prompt(user_message("hotter"), "", "", setup=changed)
    assert stored_setup(store.get(conversation_id).setup) == changed


def test_a_conversation_saved_before_setups_restores_its_own_columns(store: ConversationStore) -> None:
    old = store.create(title="old", provider="openai", model="gpt-4o", system_prompt="Be kind.")
    restored = conversation_setup(store.get(old.id), SETTINGS, ["calc"])
    assert (restored.provider, restored.model_id, restored.system_prompt) == ("openai", "gpt-4o", "Be kind.")
    assert (restored.temperature, restored.tools) == (0.3, ["calc"])  # what it never recorded stays
    imported = store.create(title="imported", system_prompt="From a file.")
    kept = conversation_setup(store.get(imported.id), SETTINGS, [])
    assert (kept.provider, kept.model_id, kept.system_prompt) == ("openai", "gpt-4o-mini", "From a file.")
