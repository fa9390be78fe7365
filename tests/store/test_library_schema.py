"""Schema 16: Chat's library tables (saved setups and saved prompts), made by the migration."""

from __future__ import annotations

from sqlalchemy import Engine, inspect, text

from yiem.store import SCHEMA_VERSION, ConversationStore, create_store_engine, current_schema_version


def _back_to_version_15(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(text("DROP TABLE setup_presets"))
        conn.execute(text("DROP TABLE saved_prompts"))
        conn.execute(text("UPDATE schema_version SET version = 15"))


def test_a_version_15_database_gains_the_library_tables_and_keeps_its_rows(any_store_url: str) -> None:
    engine = create_store_engine(any_store_url)
    kept = ConversationStore(engine).create(title="before 16")
    _back_to_version_15(engine)
    engine.dispose()

    migrated = create_store_engine(any_store_url)
    with migrated.connect() as conn:
        assert current_schema_version(conn) == SCHEMA_VERSION
        tables = set(inspect(conn).get_table_names())
        assert {"setup_presets", "saved_prompts"} <= tables
        for table in ("setup_presets", "saved_prompts"):
            indexes = {i["name"]: i for i in inspect(conn).get_indexes(table)}
            assert indexes[f"ix_{table}_owner_name"]["unique"], indexes
            assert "owner" in {c["name"] for c in inspect(conn).get_columns(table)}
    assert ConversationStore(migrated).get(kept.id).title == "before 16"
