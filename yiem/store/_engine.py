"""Where the database is and how to open it: the URL, the engine, its SQLite settings."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine, ExceptionContext, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, OperationalError

from yiem.store._errors import StoreError, StoreUnavailableError, translate_sqlite_error
from yiem.store._migrations import migrate

DEFAULT_DB_PATH = Path.home() / ".local" / "share" / "yiem" / "yiem.db"
# How long a SQLite write waits for another writer's lock before it gives up (StoreBusyError).
BUSY_TIMEOUT_SECONDS = 5.0


def database_url() -> str:
    """`YIEM_DATABASE_URL` when set, else the SQLite file under ~/.local/share/yiem/."""
    url = os.environ.get("YIEM_DATABASE_URL")
    if url:
        return url
    DEFAULT_DB_PATH.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{DEFAULT_DB_PATH}"


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
            cursor.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_SECONDS * 1000)}")
            cursor.close()

        where = parsed.database or "in memory"

        # Every query of every caller (store, costs, migrations) fails in words, not as a driver error.
        @event.listens_for(engine, "handle_error")
        def _in_words(context: ExceptionContext) -> None:
            translated = translate_sqlite_error(context.original_exception, where, BUSY_TIMEOUT_SECONDS)
            if translated is not None:
                raise translated from context.sqlalchemy_exception

    try:
        migrate(engine)
    except StoreError:
        engine.dispose()
        raise
    except OperationalError as error:
        engine.dispose()
        raise StoreUnavailableError(
            f"Could not open the database at {parsed.render_as_string(hide_password=True)}: "
            f"{str(error.orig).strip()}"
        ) from error
    return engine
