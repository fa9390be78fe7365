"""Conversation title search folds case by one rule (Python's casefold) on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from yiem.store import SCHEMA_VERSION, ConversationStore, create_store_engine, current_schema_version


@pytest.fixture
def store(any_store_url: str) -> ConversationStore:
    return ConversationStore(create_store_engine(any_store_url))


def _found(store: ConversationStore, search: str) -> list[str]:
    return sorted(c.title for c in store.list_conversations(search))


@pytest.mark.parametrize(
    ("search", "title"),
    [
        ("été", "Notes d'ÉTÉ"),  # accented capitals
        ("ÉTÉ", "notes d'été"),
        ("strasse", "Straße planen"),  # ß folds to ss
        ("STRASSE", "Straße planen"),
        ("σίσυφος", "ΣΊΣΥΦΟΣ"),  # Greek, with the final sigma
        ("ΣΊΣΥΦΟΣ", "σίσυφος"),
        ("привет", "ПРИВЕТ мир"),
    ],
)
def test_search_matches_any_case_of_any_letter(store: ConversationStore, search: str, title: str) -> None:
    store.create(title=title)
    store.create(title="unrelated")
    assert _found(store, search) == [title]
    assert search.casefold() in title.casefold()  # the same rule as Python's


def test_a_renamed_title_is_found_by_its_new_name_only(store: ConversationStore) -> None:
    conversation = store.create(title="Ancien titre")
    store.rename(conversation.id, "NOUVEAU ÉTÉ")
    assert _found(store, "été") == ["NOUVEAU ÉTÉ"]
    assert _found(store, "ancien") == []


def test_titles_stored_before_the_rule_are_found_after_migrating(any_store_url: str) -> None:
    engine = create_store_engine(any_store_url)
    store = ConversationStore(engine)
    store.create(title="ÉCOLE d'été")
    # Back to version 6, before the folded titles: the column is gone.
    with engine.begin() as conn:
        conn.execute(text("ALTER TABLE conversations DROP COLUMN title_folded"))
        conn.execute(text("UPDATE schema_version SET version = 6"))
    engine.dispose()
    engine = create_store_engine(any_store_url)
    with engine.connect() as conn:
        assert current_schema_version(conn) == SCHEMA_VERSION
    assert _found(ConversationStore(engine), "école") == ["ÉCOLE d'été"]
