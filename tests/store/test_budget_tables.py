"""Schema 12: the budgets' tables exist on a new store and on one migrated from version 11."""

from __future__ import annotations

from sqlalchemy import insert, inspect, select, text

from yiem.store import (
    SCHEMA_VERSION,
    budget_reservations,
    budgets,
    create_store_engine,
    current_schema_version,
)


def test_a_version_11_store_gains_the_budget_tables_and_keeps_its_limits_after(any_store_url: str) -> None:
    engine = create_store_engine(any_store_url)
    with engine.begin() as conn:
        conn.execute(text("DROP TABLE budgets"))
        conn.execute(text("DROP TABLE budget_reservations"))
        conn.execute(text("UPDATE schema_version SET version = 11"))
    engine.dispose()

    migrated = create_store_engine(any_store_url)
    with migrated.begin() as conn:
        assert current_schema_version(conn) == SCHEMA_VERSION
        assert {"budgets", "budget_reservations"} <= set(inspect(conn).get_table_names())
        conn.execute(
            insert(budgets).values(
                id="b1",
                scope="team",
                owner="",
                provider="",
                period="day",
                limit_usd=1.5,
                created_ms=1,
                updated_ms=1,
            )
        )
        conn.execute(
            insert(budget_reservations).values(
                id="r1", owner="local", provider="openai", amount_usd=0.1, created_ms=1
            )
        )
    migrated.dispose()
    again = create_store_engine(any_store_url)
    with again.connect() as conn:
        assert conn.execute(select(budgets.c.limit_usd)).scalar() == 1.5
        assert conn.execute(select(budget_reservations.c.amount_usd)).scalar() == 0.1
