"""Each conversation's setup: kept as JSON, secrets masked, the last one found, added by version 10."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import inspect, text

from yiem.redaction import add_secrets
from yiem.store import SCHEMA_VERSION, ConversationStore, create_store_engine, current_schema_version

SETUP = {
    "provider": "openai",
    "model_id": "gpt-4o-mini",
    "base_url": "https://api.openai.com/v1",
    "system_prompt": "Answer like a pirate.",
    "temperature": 0.3,
    "max_tokens": 512,
    "tools": ["calc"],
    "tool_execution": "sequential",
}


@pytest.fixture
def db_url(any_store_url: str) -> str:
    return any_store_url


@pytest.fixture
def store(db_url: str) -> ConversationStore:
    return ConversationStore(create_store_engine(db_url))


def test_a_setup_is_kept_and_replaced(store: ConversationStore) -> None:
    conversation = store.create(title="t", setup=SETUP)
    assert store.get(conversation.id).setup == SETUP
    changed = {**SETUP, "temperature": None, "tools": []}
    store.update_settings(conversation.id, setup=changed)
    assert store.get(conversation.id).setup == changed
    store.update_settings(conversation.id, model="other")  # no setup given: the stored one stays
    assert store.get(conversation.id).setup == changed
    assert store.create(title="old style").setup is None


def test_a_secret_quoted_in_a_system_prompt_is_masked(store: ConversationStore) -> None:
    secret = f"sk-{uuid.uuid4().hex}"
    add_secrets(secret)
    conversation = store.create(setup={**SETUP, "system_prompt": f'use {secret} "quoted"'})
    with store.engine.connect() as conn:
        raw = conn.execute(
            text("SELECT setup FROM conversations WHERE id = :i"), {"i": conversation.id}
        ).scalar()
    assert secret not in str(raw)
    assert store.get(conversation.id).setup["system_prompt"] == 'use *** "quoted"'  # type: ignore[index]


def test_last_setup_is_the_most_recently_sent_visible_one(store: ConversationStore) -> None:
    assert store.last_setup() is None
    first = store.create(setup={**SETUP, "system_prompt": "first"})
    store.create(setup={**SETUP, "system_prompt": "second"})
    store.create(title="no setup")  # newer, but it has none
    assert store.last_setup()["system_prompt"] == "second"  # type: ignore[index]
    store.update_settings(first.id, setup={**SETUP, "system_prompt": "first again"})
    assert store.last_setup()["system_prompt"] == "first again"  # type: ignore[index]
    with store.engine.begin() as conn:
        conn.execute(text("UPDATE conversations SET hidden = true WHERE id = :i"), {"i": first.id})
    assert store.last_setup()["system_prompt"] == "second"  # type: ignore[index]


def test_a_damaged_setup_does_not_stop_a_conversation_from_opening(store: ConversationStore) -> None:
    conversation = store.create(title="t")
    with store.engine.begin() as conn:
        conn.execute(text("UPDATE conversations SET setup = '{oops' WHERE id = :i"), {"i": conversation.id})
    assert store.get(conversation.id).setup is None


def test_a_version_9_database_gains_the_setup_column(db_url: str) -> None:
    engine = create_store_engine(db_url)
    kept = ConversationStore(engine).create(title="kept", system_prompt="Be kind.")
    with engine.begin() as conn:
        conn.execute(text("ALTER TABLE conversations DROP COLUMN setup"))
        conn.execute(text("UPDATE schema_version SET version = 9"))
    engine.dispose()
    store = ConversationStore(create_store_engine(db_url))
    with store.engine.connect() as conn:
        assert current_schema_version(conn) == SCHEMA_VERSION
        assert "setup" in {c["name"] for c in inspect(conn).get_columns("conversations")}
    found = store.get(kept.id)
    assert (found.system_prompt, found.setup) == ("Be kind.", None)
    store.update_settings(kept.id, setup=SETUP)
    assert store.get(kept.id).setup == SETUP
