"""Schema versions: each migration takes the schema from version N to N+1 (see docs/store.md)."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import Connection, Engine, bindparam, delete, func, insert, inspect, select, text, update
from sqlalchemy.schema import CreateIndex

from yiem.store._errors import SchemaTooNewError
from yiem.store._experiment_tables import PRIVATE
from yiem.store._message_search import install_message_search
from yiem.store._rollups import ROLLUPS, drop_rollup, install_rollup
from yiem.store._schema import (
    OWNER_DEFAULT,
    OWNER_WIDENED_INDEXES,
    conversations,
    fold_title,
    metadata,
    schema_version,
    usage_conversation_hourly,
    usage_hourly,
    usage_per_conversation,
)


def _migrate_1_to_2(conn: Connection) -> None:
    # Version 2 adds the indexes the sidebar (recent conversations) and the dashboard filter need;
    # `_ensure_indexes` creates them, so this step only has to exist to be counted.
    _ensure_indexes(conn)


_WIDENED_TO_TEXT = [
    ("conversations", "provider"),
    ("conversations", "model"),
    ("usage", "provider"),
    ("usage", "api"),
    ("usage", "model"),
    ("usage", "stop_reason"),
]


def _migrate_2_to_3(conn: Connection) -> None:
    # Version 3 makes the names TEXT (see above). SQLite stores them alike whatever the declared
    # type, so only PostgreSQL's columns change (varchar to text rewrites no table there).
    if conn.dialect.name != "postgresql":
        return
    existing_tables = set(inspect(conn).get_table_names())  # a version-1 database has no usage yet
    for table, column in _WIDENED_TO_TEXT:
        if table in existing_tables:
            conn.execute(text(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE TEXT"))


def _migrate_3_to_4(conn: Connection) -> None:
    # Version 4 adds usage_hourly, kept by a trigger, and fills it from the existing usage rows.
    # The rollup is today's, which sums per owner: the owner column comes first (version 11's).
    _add_owner_columns(conn)
    install_rollup(conn, usage_hourly)


def _migrate_4_to_5(conn: Connection) -> None:
    # Version 5 adds usage_conversation_hourly the same way.
    _add_owner_columns(conn)
    install_rollup(conn, usage_conversation_hourly)


_ADDED_IN_6 = [("conversations", "hidden"), ("usage", "experiment_id"), ("usage", "run_id")]


def _migrate_5_to_6(conn: Connection) -> None:
    # Version 6 adds the experiments' tables (created by create_all after the steps), hidden
    # conversations and usage rows tagged with an experiment and run. A database that replayed
    # the earlier steps may have made usage with these columns already (the rollup steps create
    # the table from today's metadata): add only what is missing.
    existing = set(inspect(conn).get_table_names())
    for table_name, column_name in _ADDED_IN_6:
        if table_name not in existing:
            continue
        if column_name in {c["name"] for c in inspect(conn).get_columns(table_name)}:
            continue
        column = metadata.tables[table_name].c[column_name]
        kind = column.type.compile(dialect=conn.dialect)
        default = " NOT NULL DEFAULT false" if column_name == "hidden" else ""
        conn.execute(text(f"ALTER TABLE {table_name} ADD COLUMN {column_name} {kind}{default}"))


def _migrate_6_to_7(conn: Connection) -> None:
    # Version 7 adds conversations.title_folded (see fold_title) and fills it from the titles there.
    if "title_folded" not in {c["name"] for c in inspect(conn).get_columns("conversations")}:
        conn.execute(text("ALTER TABLE conversations ADD COLUMN title_folded TEXT NOT NULL DEFAULT ''"))
    rows = conn.execute(select(conversations.c.id, conversations.c.title)).all()
    if rows:
        conn.execute(
            update(conversations)
            .where(conversations.c.id == bindparam("row_id"))
            .values(title_folded=bindparam("folded")),
            [{"row_id": row.id, "folded": fold_title(row.title)} for row in rows],
        )


def _migrate_7_to_8(conn: Connection) -> None:
    # Version 8 marks usage rows whose tokens are estimated (replies stopped mid-stream); the
    # rows before it are all reported by their providers. Its index is made by _ensure_indexes.
    if "estimated" not in {c["name"] for c in inspect(conn).get_columns("usage")}:
        kind = (
            "BOOLEAN NOT NULL DEFAULT false"
            if conn.dialect.name == "postgresql"
            else "BOOLEAN NOT NULL DEFAULT 0"
        )
        conn.execute(text(f"ALTER TABLE usage ADD COLUMN estimated {kind}"))


def _migrate_8_to_9(conn: Connection) -> None:
    # Version 9 adds compare_votes (the Compare page's blind votes); create_all after the steps makes
    # the table and its index, so this step only has to exist to be counted.
    del conn


def _migrate_9_to_10(conn: Connection) -> None:
    # Version 10 keeps each conversation's setup (see conversations.setup); older ones have none.
    if "setup" not in {c["name"] for c in inspect(conn).get_columns("conversations")}:
        conn.execute(text("ALTER TABLE conversations ADD COLUMN setup TEXT"))


_OWNED_TABLES = ("conversations", "usage", "compare_votes")


def _add_owner_columns(conn: Connection) -> None:
    # Every existing row goes to the one local user, who had them all before sign-in existed.
    existing = set(inspect(conn).get_table_names())
    for table_name in _OWNED_TABLES:
        if table_name in existing and "owner" not in {
            c["name"] for c in inspect(conn).get_columns(table_name)
        }:
            conn.execute(
                text(f"ALTER TABLE {table_name} ADD COLUMN owner TEXT NOT NULL DEFAULT '{OWNER_DEFAULT}'")
            )


def _migrate_10_to_11(conn: Connection) -> None:
    # Version 11 gives conversations, usage rows and votes an owner (sign-in, issue 11). The
    # covering indexes now hold the owner, so they are made again (by _ensure_indexes), and the
    # rollups sum per owner, so they are made again and refilled from the rows.
    _add_owner_columns(conn)
    for index_name in OWNER_WIDENED_INDEXES:
        conn.execute(text(f"DROP INDEX IF EXISTS {index_name}"))
    for rollup in ROLLUPS:
        drop_rollup(conn, rollup)
        install_rollup(conn, rollup)


def _migrate_11_to_12(conn: Connection) -> None:
    # Version 12 adds budgets and budget_reservations (yiem.budgets); create_all after the steps makes
    # both tables and their indexes, so this step only has to exist to be counted.
    del conn


def _migrate_12_to_13(conn: Connection) -> None:
    # Version 13 adds mcp_sign_ins (sealed OAuth grants for MCP servers); create_all after the steps
    # makes the table, so this step only has to exist to be counted.
    del conn


_ADDED_IN_14 = [
    ("messages", "parent_id", "INTEGER"),
    ("conversations", "current_leaf_id", "INTEGER"),
    ("conversations", "forked_from", "VARCHAR(36)"),
    ("conversations", "forked_from_message", "INTEGER"),
]


def _migrate_13_to_14(conn: Connection) -> None:
    # Version 14 makes messages a tree (regenerate and edit keep the old branch) and records forks.
    # The messages stored before it become one chain in position order, ending at the last one.
    for table_name, column_name, kind in _ADDED_IN_14:
        if column_name not in {c["name"] for c in inspect(conn).get_columns(table_name)}:
            conn.execute(text(f"ALTER TABLE {table_name} ADD COLUMN {column_name} {kind}"))
    chain_flat_messages(conn)


def chain_flat_messages(conn: Connection, conversation_id: str | None = None) -> None:
    """Link messages written without a parent into a chain in position order (all, or one conversation's).

    Only conversations with no chosen path yet: those were written flat (before version 14, or by a
    writer that stores a whole transcript at once)."""
    only = "" if conversation_id is None else " AND c.id = :conversation_id"
    params = {} if conversation_id is None else {"conversation_id": conversation_id}
    flat = f"SELECT c.id FROM conversations c WHERE c.current_leaf_id IS NULL{only}"
    conn.execute(
        text(
            "UPDATE messages SET parent_id = (SELECT p.id FROM messages p "
            "WHERE p.conversation_id = messages.conversation_id AND p.position < messages.position "
            f"ORDER BY p.position DESC LIMIT 1) WHERE conversation_id IN ({flat})"
        ),
        params,
    )
    conn.execute(
        text(
            "UPDATE conversations SET current_leaf_id = (SELECT m.id FROM messages m "
            "WHERE m.conversation_id = conversations.id ORDER BY m.position DESC LIMIT 1) "
            f"WHERE id IN ({flat})"
        ),
        params,
    )


def _migrate_14_to_15(conn: Connection) -> None:
    # Version 15 tags usage rows with the page that made them (usage.source, "compare") and adds the
    # saved comparisons (compare_runs, made by create_all after the steps). Earlier steps that make
    # usage from today's metadata may have added the column already.
    if "source" not in {c["name"] for c in inspect(conn).get_columns("usage")}:
        conn.execute(text("ALTER TABLE usage ADD COLUMN source TEXT"))


def _migrate_15_to_16(conn: Connection) -> None:
    # Version 16 adds setup_presets and saved_prompts (Chat's library); create_all after the steps
    # makes both tables and their indexes, so this step only has to exist to be counted.
    del conn


def _migrate_16_to_17(conn: Connection) -> None:
    # Version 17 makes message text searchable (see _message_search), the messages already stored too.
    install_message_search(conn)


def _migrate_17_to_18(conn: Connection) -> None:
    # Version 18 charges usage rows to an MCP tool or server (usage.tool): the Costs page's
    # spending per tool call. Steps that make usage from today's metadata may have added it already.
    if "tool" not in {c["name"] for c in inspect(conn).get_columns("usage")}:
        conn.execute(text("ALTER TABLE usage ADD COLUMN tool TEXT"))


def _migrate_18_to_19(conn: Connection) -> None:
    # Version 19 adds view_copies (MCP Apps views each person has seen); create_all after the steps
    # makes the table, so this step only has to exist to be counted.
    del conn


def _migrate_19_to_20(conn: Connection) -> None:
    # Version 20 adds the human review tables (experiment_reviews, review_assignments,
    # review_reveals); create_all after the steps makes them, so this step only has to be counted.
    del conn


def _migrate_20_to_21(conn: Connection) -> None:
    # Version 21 adds check_collections and check_runs (saved checks); create_all after the steps
    # makes both tables, so this step only has to exist to be counted.
    del conn


_ADDED_IN_22 = [
    ("experiments", "owner", f"TEXT NOT NULL DEFAULT '{OWNER_DEFAULT}'"),
    ("experiments", "sharing", f"TEXT NOT NULL DEFAULT '{PRIVATE}'"),
    ("experiment_runs", "owner", f"TEXT NOT NULL DEFAULT '{OWNER_DEFAULT}'"),
]


def _migrate_21_to_22(conn: Connection) -> None:
    # Version 22 gives experiments and their runs an owner (issue 29): every one stored before goes
    # to the local user, private, as conversations did in version 11; the owner shares it by choice.
    existing = set(inspect(conn).get_table_names())
    for table_name, column_name, kind in _ADDED_IN_22:
        if table_name in existing and column_name not in {
            c["name"] for c in inspect(conn).get_columns(table_name)
        }:
            conn.execute(text(f"ALTER TABLE {table_name} ADD COLUMN {column_name} {kind}"))


def _migrate_22_to_23(conn: Connection) -> None:
    # Version 23 adds reply_reviews (each person's reviews of Chat and Compare replies); create_all
    # after the steps makes the table, so this step only has to exist to be counted.
    del conn


def _migrate_23_to_24(conn: Connection) -> None:
    # Version 24 is the Costs page at 10M rows (issue 27). It adds usage_per_conversation (each
    # conversation's requests and dollars over all time, kept by a trigger like the other rollups)
    # and fills it from the usage rows already there; migration 11 may have made it already (it
    # remakes every rollup), and installing again refills it, counting each row once. Its index
    # ix_usage_sample (every 16th row, for the medians) is made by _ensure_indexes.
    install_rollup(conn, usage_per_conversation)


MIGRATIONS: dict[int, Callable[[Connection], None]] = {
    1: _migrate_1_to_2,
    2: _migrate_2_to_3,
    3: _migrate_3_to_4,
    4: _migrate_4_to_5,
    5: _migrate_5_to_6,
    6: _migrate_6_to_7,
    7: _migrate_7_to_8,
    8: _migrate_8_to_9,
    9: _migrate_9_to_10,
    10: _migrate_10_to_11,
    11: _migrate_11_to_12,
    12: _migrate_12_to_13,
    13: _migrate_13_to_14,
    14: _migrate_14_to_15,
    15: _migrate_15_to_16,
    16: _migrate_16_to_17,
    17: _migrate_17_to_18,
    18: _migrate_18_to_19,
    19: _migrate_19_to_20,
    20: _migrate_20_to_21,
    21: _migrate_21_to_22,
    22: _migrate_22_to_23,
    23: _migrate_23_to_24,
}
SCHEMA_VERSION = 1 + len(MIGRATIONS)


def _ensure_indexes(conn: Connection) -> None:
    # create_all skips tables that exist, and with them any index added to those tables later.
    existing_tables = set(inspect(conn).get_table_names())
    present = _postgres_index_names(conn)
    for table in metadata.sorted_tables:
        if table.name not in existing_tables:
            continue
        # A step before the one adding a column (the owner, version 11) leaves that column's indexes
        # to the final pass.
        columns = {c["name"] for c in inspect(conn).get_columns(table.name)}
        # IF NOT EXISTS rather than reflection, which skips expression indexes (ix_usage_hour).
        for index in table.indexes:
            if index.name not in present and {c.name for c in index.columns} <= columns:
                conn.execute(CreateIndex(index, if_not_exists=True))


def _postgres_index_names(conn: Connection) -> set[str]:
    # On PostgreSQL even CREATE INDEX IF NOT EXISTS locks the table against writes first, so every
    # replica start would wait for the writes in flight and hold up the ones after: skip the
    # indexes already there (pg_indexes lists expression indexes too).
    if conn.dialect.name != "postgresql":
        return set()
    found = conn.execute(text("SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"))
    return set(found.scalars())


def current_schema_version(conn: Connection) -> int:
    """The version stamped in the database; 1 for tables made before versioning; 0 when empty."""
    tables = set(inspect(conn).get_table_names())
    if "schema_version" in tables:
        found = conn.execute(select(func.max(schema_version.c.version))).scalar()
        if found is not None:
            return int(found)
    return 1 if "conversations" in tables else 0


# Replicas sharing one PostgreSQL database each migrate as they start; this transaction-scoped
# advisory lock makes them take turns, so the second finds the first's tables instead of racing
# it to CREATE TABLE. The key is arbitrary but fixed.
_MIGRATION_LOCK_KEY = 0x7969656D  # "yiem"


def migrate(engine: Engine) -> int:
    """Bring the schema to `SCHEMA_VERSION`; returns the version it found."""
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK_KEY})
        elif conn.dialect.name == "sqlite":
            # Take the write lock now: Python's sqlite3 would run the DDL outside any transaction,
            # and a writer slipping in between the rollup's trigger and its refill would count twice.
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        found = current_schema_version(conn)
        if found > SCHEMA_VERSION:
            raise SchemaTooNewError(
                f"The database at {engine.url.render_as_string(hide_password=True)} has schema "
                f"version {found}, newer than this yiem ({SCHEMA_VERSION}). Upgrade yiem."
            )
        if found == 0:
            metadata.create_all(conn)
            for rollup in ROLLUPS:
                install_rollup(conn, rollup)
            install_message_search(conn)
        else:
            for version in range(found, SCHEMA_VERSION):
                MIGRATIONS[version](conn)
            metadata.create_all(conn)  # tables a migration step introduced, if any
        _ensure_indexes(conn)
        conn.execute(delete(schema_version))
        conn.execute(insert(schema_version).values(version=SCHEMA_VERSION))
    return found
