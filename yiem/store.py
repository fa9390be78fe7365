"""Conversations, messages and usage in SQL (SQLAlchemy Core; SQLite by default)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    event,
)
from sqlalchemy.engine import Engine

metadata = MetaData()

# Times are epoch milliseconds (UTC): bucketing by day or hour is then plain integer arithmetic
# that SQLite and PostgreSQL evaluate alike.
conversations = Table(
    "conversations",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("title", Text, nullable=False, default=""),
    Column("provider", String(100), nullable=False, default=""),
    Column("model", String(200), nullable=False, default=""),
    Column("system_prompt", Text, nullable=False, default=""),
    Column("created_ms", BigInteger, nullable=False),
    Column("updated_ms", BigInteger, nullable=False),
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

usage = Table(
    "usage",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("created_ms", BigInteger, nullable=False),
    Column("conversation_id", String(36), nullable=True),
    Column("provider", String(100), nullable=False, default=""),
    Column("api", String(50), nullable=False, default=""),
    Column("model", String(200), nullable=False, default=""),
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
    Column("stop_reason", String(50), nullable=False, default=""),
    Column("error", Text, nullable=True),
    Index("ix_usage_created", "created_ms"),
)

DEFAULT_DB_PATH = Path.home() / ".local" / "share" / "yiem" / "yiem.db"


def database_url() -> str:
    """`YIEM_DATABASE_URL` when set, else the SQLite file under ~/.local/share/yiem/."""
    url = os.environ.get("YIEM_DATABASE_URL")
    if url:
        return url
    DEFAULT_DB_PATH.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{DEFAULT_DB_PATH}"


def create_store_engine(url: str | None = None) -> Engine:
    """An engine with the schema in place; SQLite files get WAL and enforced foreign keys."""
    engine = create_engine(url or database_url())
    if engine.dialect.name == "sqlite":

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA busy_timeout=5000")
            cursor.close()

    metadata.create_all(engine)
    return engine
