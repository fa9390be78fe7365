"""The trigger SQL that keeps the usage rollups summed as usage rows are inserted (see docs/store.md).

A trigger, not a refresh: whoever writes usage rows, the sums move in the same transaction.
"""

from __future__ import annotations

from sqlalchemy import Connection, Table, delete, text

from yiem.store._errors import StoreError
from yiem.store._schema import (
    ERROR_STOP_REASON,
    metadata,
    usage,
    usage_conversation_hourly,
    usage_hourly,
    usage_per_conversation,
)

_PRICED = "CASE WHEN {r}price_known THEN {value} ELSE 0 END"
_TOKENS = "{r}input_tokens + {r}output_tokens + {r}cache_read_tokens + {r}cache_write_tokens"
# Each rollup column as an expression over one usage row (`{r}` is the row's prefix).
_ROW_SQL: dict[str, str] = {
    "conversation_id": "coalesce({r}conversation_id, '')",
    "hour": "{r}created_ms / 3600000",
    "provider": "{r}provider",
    "model": "{r}model",
    "stop_reason": "{r}stop_reason",
    "owner": "{r}owner",
    "requests": "1",
    "errors": f"CASE WHEN {{r}}stop_reason = '{ERROR_STOP_REASON}' THEN 1 ELSE 0 END",
    **{
        name: "{r}" + name
        for name in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
    },
    "reasoning_tokens": "{r}reasoning_tokens",
    **{
        name: _PRICED.replace("{value}", "{r}" + name)
        for name in ("cost_total", "cost_input", "cost_output", "cost_cache_read", "cost_cache_write")
    },
    "unpriced_requests": "CASE WHEN {r}price_known THEN 0 ELSE 1 END",
    "unpriced_tokens": f"CASE WHEN {{r}}price_known THEN 0 ELSE {_TOKENS} END",
    "last_ms": "{r}created_ms",
}
ROLLUPS = (usage_hourly, usage_conversation_hourly, usage_per_conversation)


def _keys(table: Table) -> list[str]:
    return [column.name for column in table.primary_key.columns]


def _rollup_select(table: Table, source: str) -> str:
    """SELECT of `source`'s usage rows summed per key of `table`, in key order."""
    keys = _keys(table)
    columns = []
    for column in table.c:
        expr = _ROW_SQL[column.name].format(r=f"{source}.")
        columns.append(
            expr if column.name in keys else f"{'max' if column.name == 'last_ms' else 'sum'}({expr})"
        )
    order = ", ".join(str(i + 1) for i in range(len(keys)))
    # WHERE true: SQLite needs it to tell the upsert's ON CONFLICT from a join's ON.
    return f"SELECT {', '.join(columns)} FROM {source} WHERE true GROUP BY {order} ORDER BY {order}"


def _rollup_insert(table: Table) -> str:
    return f"INSERT INTO {table.name} ({', '.join(column.name for column in table.c)}) "


def _rollup_upsert(table: Table, dialect: str) -> str:
    keys = _keys(table)
    latest = "max" if dialect == "sqlite" else "greatest"  # SQLite's two-argument max is a scalar
    merged = [
        f"{c.name} = {latest}({table.name}.{c.name}, excluded.{c.name})"
        if c.name == "last_ms"
        else f"{c.name} = {table.name}.{c.name} + excluded.{c.name}"
        for c in table.c
        if c.name not in keys
    ]
    return f"ON CONFLICT ({', '.join(keys)}) DO UPDATE SET {', '.join(merged)}"


def _rollup_trigger_sql(table: Table, dialect: str) -> list[str]:
    """The statements that make `dialect` add every new usage row to `table`."""
    name = f"{table.name}_add"
    if dialect == "sqlite":
        # SQLite has row triggers only: one upsert per inserted row.
        values = ", ".join(_ROW_SQL[column.name].format(r="NEW.") for column in table.c)
        return [
            f"CREATE TRIGGER IF NOT EXISTS {name} AFTER INSERT ON usage BEGIN "
            f"{_rollup_insert(table)}VALUES ({values}) {_rollup_upsert(table, dialect)}; END"
        ]
    if dialect == "postgresql":
        # A statement trigger sees the whole insert as a table: a bulk insert is one grouped upsert,
        # whose keys are locked in key order, so concurrent writers cannot deadlock on them.
        body = f"{_rollup_insert(table)}{_rollup_select(table, 'new_usage')} {_rollup_upsert(table, dialect)}"
        return [
            f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS "
            f"$$ BEGIN {body}; RETURN NULL; END $$",
            f"CREATE OR REPLACE TRIGGER {name} AFTER INSERT ON usage "
            f"REFERENCING NEW TABLE AS new_usage FOR EACH STATEMENT EXECUTE FUNCTION {name}()",
        ]
    raise StoreError(f"The usage rollups support SQLite and PostgreSQL, not {dialect}.")


def install_rollup(conn: Connection, table: Table) -> None:
    """Create the rollup `table` and its trigger, and fill it from the usage rows already there."""
    metadata.create_all(conn, tables=[usage, table])
    # The trigger first: on PostgreSQL creating it waits for open inserts into usage and holds
    # new ones off until this transaction commits, so the refill below sees each row exactly once.
    for statement in _rollup_trigger_sql(table, conn.dialect.name):
        conn.execute(text(statement))
    conn.execute(delete(table))
    conn.execute(text(_rollup_insert(table) + _rollup_select(table, "usage")))


def drop_rollup(conn: Connection, table: Table) -> None:
    """Remove the rollup `table` and its trigger (a migration that changes its keys makes it again)."""
    name = f"{table.name}_add"
    if conn.dialect.name == "postgresql":
        conn.execute(text(f"DROP TRIGGER IF EXISTS {name} ON usage"))
        conn.execute(text(f"DROP FUNCTION IF EXISTS {name}()"))
    else:
        conn.execute(text(f"DROP TRIGGER IF EXISTS {name}"))
    conn.execute(text(f"DROP TABLE IF EXISTS {table.name}"))
