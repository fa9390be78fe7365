"""Schema 15: usage rows tagged with the page that made them, and the saved comparisons' table."""

from __future__ import annotations

from sqlalchemy import Engine, inspect, select, text

from tests.store.test_owners import TIMES, _model, _reply
from yiem.store import SCHEMA_VERSION, ConversationStore, create_store_engine, current_schema_version, usage


def _back_to_version_14(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(text("DROP INDEX ix_usage_source"))
        conn.execute(text("ALTER TABLE usage DROP COLUMN source"))
        conn.execute(text("DROP TABLE compare_runs"))
        conn.execute(text("UPDATE schema_version SET version = 14"))


def test_a_version_14_database_gains_the_source_column_and_compare_runs(any_store_url: str) -> None:
    engine = create_store_engine(any_store_url)
    store = ConversationStore(engine)
    kept = store.create(title="before 15")
    store.append_message(kept.id, _reply("ann@example.com", TIMES[0], "old"), _model("ann@example.com"))
    _back_to_version_14(engine)
    engine.dispose()

    migrated = create_store_engine(any_store_url)
    with migrated.connect() as conn:
        assert current_schema_version(conn) == SCHEMA_VERSION
        assert "compare_runs" in inspect(conn).get_table_names()
        assert "source" in {c["name"] for c in inspect(conn).get_columns("usage")}
        assert "ix_usage_source" in {i["name"] for i in inspect(conn).get_indexes("usage")}
        # The rows from before are Chat's: no source.
        assert list(conn.execute(select(usage.c.source)).scalars()) == [None]
