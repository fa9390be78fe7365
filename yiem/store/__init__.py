"""The store: conversations, messages and usage rows on SQLite or PostgreSQL, with migrations."""

from yiem.store._compare_tables import COMPARE_SOURCE, compare_runs, compare_votes
from yiem.store._conversations import Conversation, ConversationStore
from yiem.store._demo_data import DAY_MS, generate, seed_demo
from yiem.store._engine import create_store_engine, database_url
from yiem.store._errors import (
    ConversationNotFoundError,
    SchemaTooNewError,
    StoreBusyError,
    StoreCorruptError,
    StoreError,
    StoreUnavailableError,
)
from yiem.store._experiment_tables import experiment_outcomes, experiment_runs, experiments
from yiem.store._migrations import SCHEMA_VERSION, current_schema_version
from yiem.store._schema import (
    ERROR_STOP_REASON,
    USAGE_HOUR_EXPRESSION,
    conversations,
    messages,
    usage,
    usage_conversation_hourly,
    usage_hourly,
)
from yiem.store._usage_rows import usage_row

__all__ = [
    "COMPARE_SOURCE",
    "DAY_MS",
    "ERROR_STOP_REASON",
    "SCHEMA_VERSION",
    "USAGE_HOUR_EXPRESSION",
    "Conversation",
    "ConversationNotFoundError",
    "ConversationStore",
    "SchemaTooNewError",
    "StoreBusyError",
    "StoreCorruptError",
    "StoreError",
    "StoreUnavailableError",
    "compare_runs",
    "compare_votes",
    "conversations",
    "create_store_engine",
    "current_schema_version",
    "database_url",
    "experiment_outcomes",
    "experiment_runs",
    "experiments",
    "generate",
    "messages",
    "seed_demo",
    "usage",
    "usage_conversation_hourly",
    "usage_hourly",
    "usage_row",
]
