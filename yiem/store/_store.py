"""Conversations, messages and usage in SQL (SQLAlchemy Core; SQLite by default)."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError
from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Connection,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    create_engine,
    delete,
    event,
    false,
    func,
    insert,
    inspect,
    select,
    text,
    update,
)
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError, IntegrityError, NoSuchModuleError, OperationalError
from sqlalchemy.schema import CreateIndex

from yiem.redaction import redact
from yiem.types import AgentMessage, AssistantMessage, AssistantMessageToolCall, LlmModel

metadata = MetaData()

# Names that come from servers, users or imports (provider, model, api, stop reason) are TEXT:
# SQLite never enforced the VARCHAR lengths they once had, PostgreSQL refuses a longer value.
# Times are epoch milliseconds (UTC): bucketing by day or hour is then plain integer arithmetic
# that SQLite and PostgreSQL evaluate alike.
conversations = Table(
    "conversations",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("title", Text, nullable=False, default=""),
    Column("provider", Text, nullable=False, default=""),
    Column("model", Text, nullable=False, default=""),
    Column("system_prompt", Text, nullable=False, default=""),
    Column("created_ms", BigInteger, nullable=False),
    Column("updated_ms", BigInteger, nullable=False),
    # An experiment item's transcript: kept out of Chat's list until someone opens it there.
    Column("hidden", Boolean, nullable=False, default=False, server_default=false()),
    Index("ix_conversations_updated", "updated_ms"),
)

messages = Table(
    "messages",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column(
        "conversation_id",
        String(36),
        ForeignKey("conversations.id", ondelete="CASCADE"),
        nullable=False,
    ),
    Column("position", Integer, nullable=False),
    Column("role", String(20), nullable=False),
    Column("data", Text, nullable=False),  # the message as JSON with the spec's field names
    Column("created_ms", BigInteger, nullable=False),
    Index("ix_messages_conversation_position", "conversation_id", "position", unique=True),
)

# The columns yiem.costs.Counts sums: an index holding them answers the Costs page by itself.
_USAGE_COUNT_COLUMNS = (
    "price_known",
    "cost_total",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
)
# The UTC hour of a usage row; yiem.costs writes the same text so the expression index matches.
USAGE_HOUR_EXPRESSION = "(created_ms / 3600000)"

usage = Table(
    "usage",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("created_ms", BigInteger, nullable=False),
    Column("conversation_id", String(36), nullable=True),
    Column("provider", Text, nullable=False, default=""),
    Column("api", Text, nullable=False, default=""),
    Column("model", Text, nullable=False, default=""),
    Column("input_tokens", Integer, nullable=False, default=0),
    Column("output_tokens", Integer, nullable=False, default=0),
    Column("cache_read_tokens", Integer, nullable=False, default=0),
    Column("cache_write_tokens", Integer, nullable=False, default=0),
    Column("reasoning_tokens", Integer, nullable=False, default=0),
    Column("cost_input", Float, nullable=False, default=0.0),
    Column("cost_output", Float, nullable=False, default=0.0),
    Column("cost_cache_read", Float, nullable=False, default=0.0),
    Column("cost_cache_write", Float, nullable=False, default=0.0),
    Column("cost_total", Float, nullable=False, default=0.0),
    Column("price_known", Boolean, nullable=False, default=False),
    Column("latency_ms", Float, nullable=True),
    Column("ttft_ms", Float, nullable=True),
    Column("stop_reason", Text, nullable=False, default=""),
    Column("error", Text, nullable=True),
    # Set on the rows of experiment runs (the items' replies and the rubric judges'), so the
    # Costs page can filter by experiment.
    Column("experiment_id", String(36), nullable=True),
    Column("run_id", String(36), nullable=True),
    Index("ix_usage_created", "created_ms"),
    Index("ix_usage_experiment", "experiment_id", "run_id"),
    Index("ix_usage_conversation", "conversation_id"),
    # The Costs page reads a time range and groups it: this index holds every column it reads,
    # in time order, so SQLite answers from the index alone without visiting the table.
    Index(
        "ix_usage_dashboard",
        "created_ms",
        "provider",
        "model",
        "stop_reason",
        "price_known",
        "conversation_id",
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "reasoning_tokens",
        "cost_input",
        "cost_output",
        "cost_cache_read",
        "cost_cache_write",
        "cost_total",
        "latency_ms",
        "ttft_ms",
    ),
    Index("ix_usage_provider_model", "provider", "model"),  # the page's filter choices
    # The Costs page's charts: requests in UTC-hour order, then grouped by model and stop reason,
    # so summing them per hour needs no sort (yiem.costs groups the hours into local days).
    Index(
        "ix_usage_hour",
        text(USAGE_HOUR_EXPRESSION),
        "provider",
        "model",
        "stop_reason",
        "created_ms",
        *_USAGE_COUNT_COLUMNS,
    ),
    # The top conversations: read in conversation order, SQLite groups them as it goes instead of
    # sorting every request of the period (yiem.costs.top_conversations asks for this index).
    Index(
        "ix_usage_conversation_totals",
        "conversation_id",
        "created_ms",
        "provider",
        "model",
        "stop_reason",
        *_USAGE_COUNT_COLUMNS,
    ),
)

# Rollups: the usage table summed per UTC hour and a few keys, which the Costs page reads instead
# of every request when its filters allow (yiem.costs). The database keeps them up to date itself,
# with a trigger on every insert into usage (`_rollup_trigger_sql`): whoever writes usage rows (the
# store, the demo seeder, a replica of an older yiem, a test), the sums move in the same
# transaction, so there is no refresh to schedule and no watermark that concurrent PostgreSQL
# commits could overtake. Usage rows are append-only (money spent stays spent). Dollars count only
# requests whose price is known; the tokens of the others are kept apart, as the page does.
ERROR_STOP_REASON = "error"


def _count_columns(*extra: Column[Any]) -> list[Column[Any]]:
    names = ["requests", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"]
    names += ["reasoning_tokens", "unpriced_requests"]
    return [
        *(Column(name, BigInteger, nullable=False) for name in names),
        Column("cost_total", Float, nullable=False),
        *extra,
    ]


# Per hour, provider, model and stop reason: the cube, the headline, the previous period.
usage_hourly = Table(
    "usage_hourly",
    metadata,
    Column("hour", BigInteger, nullable=False),  # created_ms // 3_600_000
    Column("provider", Text, nullable=False),
    Column("model", Text, nullable=False),
    Column("stop_reason", Text, nullable=False),
    *_count_columns(
        Column("cost_input", Float, nullable=False),
        Column("cost_output", Float, nullable=False),
        Column("cost_cache_read", Float, nullable=False),
        Column("cost_cache_write", Float, nullable=False),
        Column("unpriced_tokens", BigInteger, nullable=False),
    ),
    # In hour order, so the page's range is one seek and its hours come out grouped.
    PrimaryKeyConstraint("hour", "provider", "model", "stop_reason"),
    sqlite_with_rowid=False,
)

# Per conversation ('' for none), hour, provider and model: the most expensive conversations.
usage_conversation_hourly = Table(
    "usage_conversation_hourly",
    metadata,
    Column("conversation_id", Text, nullable=False),
    Column("hour", BigInteger, nullable=False),
    Column("provider", Text, nullable=False),
    Column("model", Text, nullable=False),
    *_count_columns(
        Column("errors", BigInteger, nullable=False),
        Column("last_ms", BigInteger, nullable=False),
    ),
    # In conversation order, so grouping conversations walks it without a sort.
    PrimaryKeyConstraint("conversation_id", "hour", "provider", "model"),
    sqlite_with_rowid=False,
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
ROLLUPS = (usage_hourly, usage_conversation_hourly)


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


def _install_rollup(conn: Connection, table: Table) -> None:
    """Create the rollup `table` and its trigger, and fill it from the usage rows already there."""
    metadata.create_all(conn, tables=[usage, table])
    # The trigger first: on PostgreSQL creating it waits for open inserts into usage and holds
    # new ones off until this transaction commits, so the refill below sees each row exactly once.
    for statement in _rollup_trigger_sql(table, conn.dialect.name):
        conn.execute(text(statement))
    conn.execute(delete(table))
    conn.execute(text(_rollup_insert(table) + _rollup_select(table, "usage")))


schema_version = Table(
    "schema_version",
    metadata,
    Column("version", Integer, nullable=False),
)

DEFAULT_DB_PATH = Path.home() / ".local" / "share" / "yiem" / "yiem.db"

_MESSAGES: TypeAdapter[AgentMessage] = TypeAdapter(AgentMessage)


class StoreError(Exception):
    """The store could not do what was asked; the message says why."""


class ConversationNotFoundError(StoreError):
    """No conversation has this id (deleted, or a stale link)."""


class StoreUnavailableError(StoreError):
    """The database cannot be reached or opened (bad URL, server down, wrong password)."""


class SchemaTooNewError(StoreError):
    """The database was written by a newer yiem than this one."""


def database_url() -> str:
    """`YIEM_DATABASE_URL` when set, else the SQLite file under ~/.local/share/yiem/."""
    url = os.environ.get("YIEM_DATABASE_URL")
    if url:
        return url
    DEFAULT_DB_PATH.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{DEFAULT_DB_PATH}"


# --- schema versions --------------------------------------------------------------------------
# Each migration takes the schema from version N to N+1. A fresh database gets the current tables
# at once and is stamped with the latest version; an older one replays the steps it lacks.


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
    _install_rollup(conn, usage_hourly)


def _migrate_4_to_5(conn: Connection) -> None:
    # Version 5 adds usage_conversation_hourly the same way.
    _install_rollup(conn, usage_conversation_hourly)


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


MIGRATIONS: dict[int, Callable[[Connection], None]] = {
    1: _migrate_1_to_2,
    2: _migrate_2_to_3,
    3: _migrate_3_to_4,
    4: _migrate_4_to_5,
    5: _migrate_5_to_6,
}
SCHEMA_VERSION = 1 + len(MIGRATIONS)


def _ensure_indexes(conn: Connection) -> None:
    # create_all skips tables that exist, and with them any index added to those tables later.
    existing_tables = set(inspect(conn).get_table_names())
    present = _postgres_index_names(conn)
    for table in metadata.sorted_tables:
        if table.name not in existing_tables:
            continue
        # IF NOT EXISTS rather than reflection, which skips expression indexes (ix_usage_hour).
        for index in table.indexes:
            if index.name not in present:
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
                _install_rollup(conn, rollup)
        else:
            for version in range(found, SCHEMA_VERSION):
                MIGRATIONS[version](conn)
            metadata.create_all(conn)  # tables a migration step introduced, if any
        _ensure_indexes(conn)
        conn.execute(delete(schema_version))
        conn.execute(insert(schema_version).values(version=SCHEMA_VERSION))
    return found


def create_store_engine(url: str | None = None) -> Engine:
    """An engine with the schema migrated; SQLite files get WAL and enforced foreign keys."""
    try:
        parsed = make_url(url or database_url())
        if parsed.drivername == "postgresql":  # SQLAlchemy's default driver there is psycopg2, not ours
            parsed = parsed.set(drivername="postgresql+psycopg")
        # A server database outlives the app's connections (restarts, failover, idle timeouts): each
        # pooled connection is checked before use, so a replica does not fail its next request.
        engine = create_engine(parsed, pool_pre_ping=parsed.get_backend_name() != "sqlite")
    except (ArgumentError, NoSuchModuleError, ImportError) as error:
        raise StoreUnavailableError(
            f"The database URL in YIEM_DATABASE_URL cannot be used ({error}). Use sqlite:///path/to/file.db "
            "or postgresql+psycopg://user:password@host:5432/database."
        ) from error
    if engine.dialect.name == "sqlite":

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA busy_timeout=5000")
            cursor.close()

    try:
        migrate(engine)
    except OperationalError as error:
        engine.dispose()
        raise StoreUnavailableError(
            f"Could not open the database at {parsed.render_as_string(hide_password=True)}: "
            f"{str(error.orig).strip()}"
        ) from error
    return engine


# --- conversations and messages ---------------------------------------------------------------


def _now_ms() -> int:
    return int(time.time() * 1000)


def _to_datetime(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


@dataclass(frozen=True)
class Conversation:
    """One conversation's header (its messages are loaded separately)."""

    id: str
    title: str
    provider: str
    model: str
    system_prompt: str
    created: datetime
    updated: datetime
    hidden: bool = False


def _conversation(row: Any) -> Conversation:
    return Conversation(
        id=row.id,
        title=row.title,
        provider=row.provider,
        model=row.model,
        system_prompt=row.system_prompt,
        created=_to_datetime(row.created_ms),
        updated=_to_datetime(row.updated_ms),
        hidden=bool(row.hidden),
    )


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class ConversationStore:
    """Reads and writes conversations; every write is its own transaction, so a crash loses little."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    # conversations

    def create(
        self, title: str = "", provider: str = "", model: str = "", system_prompt: str = ""
    ) -> Conversation:
        """A new, empty conversation."""
        now = _now_ms()
        row = {
            "id": str(uuid.uuid4()),
            "title": redact(title),
            "provider": provider,
            "model": model,
            "system_prompt": redact(system_prompt),
            "created_ms": now,
            "updated_ms": now,
        }
        with self.engine.begin() as conn:
            conn.execute(insert(conversations).values(**row))
        return self.get(str(row["id"]))

    def get(self, conversation_id: str) -> Conversation:
        """The conversation with this id, or `ConversationNotFoundError`."""
        with self.engine.connect() as conn:
            row = conn.execute(select(conversations).where(conversations.c.id == conversation_id)).first()
        if row is None:
            raise ConversationNotFoundError(f"No conversation with id {conversation_id!r}.")
        return _conversation(row)

    def exists(self, conversation_id: str) -> bool:
        """Whether a conversation with this id is stored."""
        with self.engine.connect() as conn:
            found = conn.execute(
                select(conversations.c.id).where(conversations.c.id == conversation_id)
            ).first()
        return found is not None

    def list_conversations(self, search: str = "", limit: int = 200) -> list[Conversation]:
        """Most recently updated first, hidden ones left out; `search` keeps titles that contain it."""
        query = (
            select(conversations)
            .where(conversations.c.hidden == false())
            .order_by(conversations.c.updated_ms.desc())
            .limit(limit)
        )
        if search.strip():
            pattern = f"%{_escape_like(search.strip().lower())}%"
            query = query.where(func.lower(conversations.c.title).like(pattern, escape="\\"))
        with self.engine.connect() as conn:
            return [_conversation(row) for row in conn.execute(query)]

    def reveal(self, conversation_id: str) -> None:
        """Put a hidden conversation (an experiment item's transcript) in Chat's list, at the top."""
        self._update(conversation_id, hidden=False)

    def rename(self, conversation_id: str, title: str) -> None:
        """Set the title."""
        self._update(conversation_id, title=redact(title))

    def update_settings(
        self,
        conversation_id: str,
        *,
        provider: str | None = None,
        model: str | None = None,
        system_prompt: str | None = None,
    ) -> None:
        """Record the provider, model or system prompt the conversation now uses."""
        prompt = None if system_prompt is None else redact(system_prompt)
        values = {"provider": provider, "model": model, "system_prompt": prompt}
        self._update(conversation_id, **{key: value for key, value in values.items() if value is not None})

    def _update(self, conversation_id: str, **values: Any) -> None:
        with self.engine.begin() as conn:
            result = conn.execute(
                update(conversations)
                .where(conversations.c.id == conversation_id)
                .values(**values, updated_ms=_now_ms())
            )
        if result.rowcount == 0:
            raise ConversationNotFoundError(f"No conversation with id {conversation_id!r}.")

    def delete(self, conversation_id: str) -> None:
        """Remove the conversation and its messages; its usage rows stay (money spent stays spent)."""
        with self.engine.begin() as conn:
            conn.execute(delete(messages).where(messages.c.conversation_id == conversation_id))
            result = conn.execute(delete(conversations).where(conversations.c.id == conversation_id))
        if result.rowcount == 0:
            raise ConversationNotFoundError(f"No conversation with id {conversation_id!r}.")

    # messages

    def append_message(
        self, conversation_id: str, message: AgentMessage, model: LlmModel | None = None
    ) -> int:
        """Save one finished message at the end (with its usage row if it is an assistant reply).

        Returns its position. The message, its usage and the conversation's `updated` time are one
        transaction: after a crash either all of them are there or none.
        """
        # No secret the server knows is ever written (a provider may echo a key in its error).
        data = redact(message.model_dump_json(by_alias=True))
        for _attempt in range(3):
            try:
                with self.engine.begin() as conn:
                    now = _now_ms()
                    touched = conn.execute(
                        update(conversations)
                        .where(conversations.c.id == conversation_id)
                        .values(updated_ms=now)
                    )
                    if touched.rowcount == 0:
                        raise ConversationNotFoundError(
                            f"No conversation with id {conversation_id!r}; the message was not saved."
                        )
                    last = conn.execute(
                        select(func.max(messages.c.position)).where(
                            messages.c.conversation_id == conversation_id
                        )
                    ).scalar()
                    position = 0 if last is None else int(last) + 1
                    conn.execute(
                        insert(messages).values(
                            conversation_id=conversation_id,
                            position=position,
                            role=message.role,
                            data=data,
                            created_ms=now,
                        )
                    )
                    if isinstance(message, AssistantMessage | AssistantMessageToolCall):
                        conn.execute(insert(usage).values(**usage_row(message, model, conversation_id)))
                return position
            except IntegrityError:
                # Another writer (a second replica) took the same position; count again.
                continue
        raise StoreError(f"Could not append to conversation {conversation_id!r}: concurrent writers.")

    def load_messages(self, conversation_id: str) -> list[AgentMessage]:
        """The conversation's messages in order, as typed messages."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(messages.c.position, messages.c.data)
                .where(messages.c.conversation_id == conversation_id)
                .order_by(messages.c.position)
            ).all()
        loaded: list[AgentMessage] = []
        for row in rows:
            try:
                loaded.append(_MESSAGES.validate_json(row.data))
            except ValidationError as error:
                raise StoreError(
                    f"Message {row.position} of conversation {conversation_id!r} is not a valid "
                    f"message: {error.errors()[0]['msg']}"
                ) from error
        return loaded

    def truncate(self, conversation_id: str, keep: int) -> None:
        """Keep only the first `keep` messages (to regenerate or resend from an earlier point)."""
        with self.engine.begin() as conn:
            conn.execute(
                delete(messages).where(
                    messages.c.conversation_id == conversation_id, messages.c.position >= keep
                )
            )
            conn.execute(
                update(conversations)
                .where(conversations.c.id == conversation_id)
                .values(updated_ms=_now_ms())
            )

    def replace_messages(self, conversation_id: str, new_messages: Sequence[AgentMessage]) -> None:
        """Store these messages as the whole conversation, without usage rows (used by import)."""
        now = _now_ms()
        with self.engine.begin() as conn:
            conn.execute(delete(messages).where(messages.c.conversation_id == conversation_id))
            if new_messages:
                conn.execute(
                    insert(messages),
                    [
                        {
                            "conversation_id": conversation_id,
                            "position": position,
                            "role": message.role,
                            "data": redact(message.model_dump_json(by_alias=True)),
                            "created_ms": now,
                        }
                        for position, message in enumerate(new_messages)
                    ],
                )


def usage_row(
    message: AssistantMessage | AssistantMessageToolCall,
    model: LlmModel | None,
    conversation_id: str | None,
) -> dict[str, Any]:
    """The usage table's row for one assistant message."""
    tokens = message.usage
    cost = message.cost
    if cost is None and model is not None and model.price_known:
        cost = tokens.cost(model.cost)
    return {
        "created_ms": int(message.timestamp.timestamp() * 1000),
        "conversation_id": conversation_id,
        "provider": message.provider or (model.provider if model else ""),
        "api": message.api or (model.api if model else ""),
        "model": message.model or (model.id if model else ""),
        "input_tokens": tokens.input_tokens,
        "output_tokens": tokens.output_tokens,
        "cache_read_tokens": tokens.cache_read_tokens,
        "cache_write_tokens": tokens.cache_write_tokens,
        "reasoning_tokens": tokens.reasoning_tokens,
        "cost_input": cost.input if cost else 0.0,
        "cost_output": cost.output if cost else 0.0,
        "cost_cache_read": cost.cache_read if cost else 0.0,
        "cost_cache_write": cost.cache_write if cost else 0.0,
        "cost_total": cost.total if cost else 0.0,
        "price_known": bool(model.price_known) if model is not None else False,
        "latency_ms": message.duration_ms,
        "ttft_ms": message.ttft_ms,
        "stop_reason": message.stop_reason,
        "error": redact(message.error_message) if message.error_message else message.error_message,
    }


def main(argv: list[str] | None = None) -> int:
    """`python -m yiem.store seed-demo N`: fill the store with N rows of demo usage."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m yiem.store")
    commands = parser.add_subparsers(dest="command", required=True)
    seed = commands.add_parser("seed-demo", help="add N rows of realistic demo usage (and conversations)")
    seed.add_argument("rows", type=int, help="how many usage rows to add")
    seed.add_argument("--days", type=int, default=180, help="spread them over this many days up to now")
    seed.add_argument("--seed", type=int, default=7, help="random seed (same seed, same data)")
    args = parser.parse_args(argv)
    if args.rows < 0 or args.days < 1:
        parser.error("rows must be 0 or more and days 1 or more")

    from yiem.store._demo_data import seed_demo

    engine = create_store_engine()
    written = seed_demo(
        engine,
        args.rows,
        days=args.days,
        seed=args.seed,
        progress=lambda n: print(f"\r{n:,} / {args.rows:,} rows", end="", file=sys.stderr, flush=True),
    )
    print(f"\nAdded {written:,} demo usage rows to {engine.url.render_as_string(hide_password=True)}.")
    return 0
