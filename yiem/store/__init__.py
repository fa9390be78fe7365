"""The store: conversations, messages and usage rows on SQLite or PostgreSQL, with migrations."""

from yiem.store._demo_data import DAY_MS, generate, seed_demo
from yiem.store._store import (
    ERROR_STOP_REASON,
    SCHEMA_VERSION,
    USAGE_HOUR_EXPRESSION,
    Conversation,
    ConversationNotFoundError,
    ConversationStore,
    SchemaTooNewError,
    StoreError,
    StoreUnavailableError,
    conversations,
    create_store_engine,
    current_schema_version,
    database_url,
    usage,
    usage_conversation_hourly,
    usage_hourly,
)

__all__ = [
    "DAY_MS",
    "ERROR_STOP_REASON",
    "SCHEMA_VERSION",
    "USAGE_HOUR_EXPRESSION",
    "Conversation",
    "ConversationNotFoundError",
    "ConversationStore",
    "SchemaTooNewError",
    "StoreError",
    "StoreUnavailableError",
    "conversations",
    "create_store_engine",
    "current_schema_version",
    "database_url",
    "generate",
    "seed_demo",
    "usage",
    "usage_conversation_hourly",
    "usage_hourly",
]
