"""Schema 18: usage rows charged to the MCP tool (or server) they were spent for."""

from __future__ import annotations

from sqlalchemy import Engine, inspect, select, text

from tests.store.test_owners import TIMES, _model, _reply
from yiem.store import SCHEMA_VERSION, ConversationStore, create_store_engine, current_schema_version, usage


def _back_to_version_17(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(text("DROP INDEX ix_usage_tool"))
        conn.execute(text("ALTER TABLE usage DROP COLUMN tool"))
        conn.execute(text("UPDATE schema_version SET version = 17"))


def test_a_version_17_database_gains_the_tool_column(any_store_url: str) -> None:
    engine = create_store_engine(any_store_url)
    store = ConversationStore(engine)
    kept = store.create(title="before 18")
    store.append_message(kept.id, _reply("ann@example.com", TIMES[0], "old"), _model("ann@example.com"))
    _back_to_version_17(engine)
    engine.dispose()

    migrated = create_store_engine(any_store_url)
    with migrated.connect() as conn:
        assert current_schema_version(conn) == SCHEMA_VERSION
        assert "tool" in {c["name"] for c in inspect(conn).get_columns("usage")}
        assert "ix_usage_tool" in {i["name"] for i in inspect(conn).get_indexes("usage")}
        # The rows from before were charged to no tool.
        assert list(conn.execute(select(usage.c.tool)).scalars()) == [None]
    ConversationStore(migrated).append_message(
        kept.id, _reply("ann@example.com", TIMES[1], "new"), _model("ann@example.com"), tool="time__now"
    )
    with migrated.connect() as conn:
        assert sorted(conn.execute(select(usage.c.tool)).scalars(), key=str) == [None, "time__now"]
