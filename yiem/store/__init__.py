"""The store: conversations, messages and usage rows on SQLite or PostgreSQL, with migrations."""

from yiem.store._budget_tables import budget_reservations, budgets
from yiem.store._check_tables import check_collections, check_runs
from yiem.store._compare_tables import COMPARE_SOURCE, compare_runs, compare_votes
from yiem.store._conversations import Conversation, ConversationStore
from yiem.store._demo_data import DAY_MS, DemoDataError, generate, seed_demo
from yiem.store._engine import create_store_engine, database_url
from yiem.store._errors import (
    ConversationNotFoundError,
    SchemaTooNewError,
    StoreBusyError,
    StoreCorruptError,
    StoreError,
    StoreUnavailableError,
)
from yiem.store._experiment_tables import (
    PRIVATE,
    experiment_outcomes,
    experiment_runs,
    experiments,
    visible_experiments,
)
from yiem.store._library_tables import saved_prompts, setup_presets
from yiem.store._message_search import MATCH_END, MATCH_START
from yiem.store._messages import LEAF, MessagePath, MessageTree, StoredMessage
from yiem.store._migrations import SCHEMA_VERSION, current_schema_version
from yiem.store._reply_reviews import ReplyKind, ReplyReview, ReplyReviewStore, ReviewError, check_rating
from yiem.store._review_tables import experiment_reviews, reply_reviews, review_assignments, review_reveals
from yiem.store._schema import (
    ERROR_STOP_REASON,
    USAGE_HOUR_EXPRESSION,
    USAGE_SAMPLE_EVERY,
    conversations,
    messages,
    usage,
    usage_conversation_hourly,
    usage_hourly,
    usage_per_conversation,
)
from yiem.store._sign_in_tables import mcp_sign_ins
from yiem.store._usage_rows import SAMPLING_SOURCE, usage_row
from yiem.store._view_copies import ViewCopies, view_copies

__all__ = [
    "COMPARE_SOURCE",
    "DAY_MS",
    "ERROR_STOP_REASON",
    "LEAF",
    "MATCH_END",
    "MATCH_START",
    "PRIVATE",
    "SAMPLING_SOURCE",
    "SCHEMA_VERSION",
    "USAGE_HOUR_EXPRESSION",
    "USAGE_SAMPLE_EVERY",
    "Conversation",
    "ConversationNotFoundError",
    "ConversationStore",
    "DemoDataError",
    "MessagePath",
    "MessageTree",
    "ReplyKind",
    "ReplyReview",
    "ReplyReviewStore",
    "ReviewError",
    "SchemaTooNewError",
    "StoreBusyError",
    "StoreCorruptError",
    "StoreError",
    "StoreUnavailableError",
    "StoredMessage",
    "ViewCopies",
    "budget_reservations",
    "budgets",
    "check_collections",
    "check_rating",
    "check_runs",
    "compare_runs",
    "compare_votes",
    "conversations",
    "create_store_engine",
    "current_schema_version",
    "database_url",
    "experiment_outcomes",
    "experiment_reviews",
    "experiment_runs",
    "experiments",
    "generate",
    "mcp_sign_ins",
    "messages",
    "reply_reviews",
    "review_assignments",
    "review_reveals",
    "saved_prompts",
    "seed_demo",
    "setup_presets",
    "usage",
    "usage_conversation_hourly",
    "usage_hourly",
    "usage_per_conversation",
    "usage_row",
    "view_copies",
    "visible_experiments",
]
