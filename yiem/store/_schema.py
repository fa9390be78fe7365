"""The store's tables: conversations, messages, usage rows and the usage rollups."""

from __future__ import annotations

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
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    false,
    text,
)

metadata = MetaData()

# Who a row belongs to (yiem.identity.Owner.id); rows from before version 11 belong to the local user.
OWNER_DEFAULT = "local"


def owner_column() -> Column[str]:
    """The owner column every per-person table has; every query of the store filters on it."""
    return Column("owner", Text, nullable=False, default=OWNER_DEFAULT, server_default=OWNER_DEFAULT)


def fold_title(title: str) -> str:
    """Title search's one case rule: Unicode case folding (`str.casefold`), applied in Python only.

    SQLite's lower() changes ASCII letters only and PostgreSQL's follows the server's locale, so the
    folded title is stored beside the title and search compares folded text with folded text.
    """
    return title.casefold()


def _folded_title(context: Any) -> str:
    # The column default of every insert that gives a title (the store, experiments, demo data).
    return fold_title(context.get_current_parameters().get("title") or "")


# Names that come from servers, users or imports (provider, model, api, stop reason) are TEXT:
# SQLite never enforced the VARCHAR lengths they once had, PostgreSQL refuses a longer value.
# Times are epoch milliseconds (UTC): bucketing by day or hour is then plain integer arithmetic
# that SQLite and PostgreSQL evaluate alike.
conversations = Table(
    "conversations",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("title", Text, nullable=False, default=""),
    Column("title_folded", Text, nullable=False, default=_folded_title, server_default=""),
    Column("provider", Text, nullable=False, default=""),
    Column("model", Text, nullable=False, default=""),
    Column("system_prompt", Text, nullable=False, default=""),
    Column("created_ms", BigInteger, nullable=False),
    Column("updated_ms", BigInteger, nullable=False),
    # An experiment item's transcript: kept out of Chat's list until someone opens it there.
    Column("hidden", Boolean, nullable=False, default=False, server_default=false()),
    # The conversation's setup as JSON (provider, model, base URL, system prompt, temperature, max
    # tokens, tools, tool mode; never a key); NULL for conversations saved before version 10.
    Column("setup", Text, nullable=True),
    owner_column(),
    # The message ending the chosen path (messages form a tree, version 14); NULL while it is empty.
    Column("current_leaf_id", Integer, nullable=True),
    # A fork's origin: the conversation and the message its copied path ended at (NULL otherwise).
    Column("forked_from", String(36), nullable=True),
    Column("forked_from_message", Integer, nullable=True),
    Index("ix_conversations_updated", "updated_ms"),
    Index("ix_conversations_owner_updated", "owner", "updated_ms"),  # each person's sidebar
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
    # The message this one follows (NULL for a first message): siblings are alternatives of one turn.
    # Position stays the order of writing, so siblings sort oldest first.
    Column("parent_id", Integer, nullable=True),
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
# ix_usage_sample holds every this-many-th usage row by id (schema 24). A query must say
# `id % 16 = 0` with the number written out, not as a parameter, for either database to use it.
USAGE_SAMPLE_EVERY = 16
_SAMPLE_CONDITION = f"id % {USAGE_SAMPLE_EVERY} = 0"

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
    # The tokens (and so the cost) are an estimate: the reply was stopped before the provider said.
    Column("estimated", Boolean, nullable=False, default=False, server_default=false()),
    # Set on the rows of experiment runs (the items' replies and the rubric judges'), so the
    # Costs page can filter by experiment.
    Column("experiment_id", String(36), nullable=True),
    Column("run_id", String(36), nullable=True),
    # Which page made the row when it is not Chat (schema 12): "compare" for the Compare page's
    # columns, so the Costs page can show that spend apart; NULL for Chat and experiments.
    Column("source", Text, nullable=True),
    # What the request is charged to beyond its conversation (schema 16): in Chat, the tools whose
    # results it carried to the model ("a, b" for several); for a server's sampling request, that
    # server (source "mcp-sampling"). NULL otherwise.
    Column("tool", Text, nullable=True),
    owner_column(),
    Index("ix_usage_created", "created_ms"),
    Index("ix_usage_owner_created", "owner", "created_ms"),  # one person's first and last request
    Index("ix_usage_experiment", "experiment_id", "run_id"),
    Index("ix_usage_source", "source", "created_ms"),
    Index("ix_usage_tool", "tool", "created_ms"),  # the Costs page's spending per tool call
    # The few estimated rows, in time order: the Costs page counts them without reading the rest.
    Index(
        "ix_usage_estimated",
        "created_ms",
        sqlite_where=text("estimated = 1"),
        postgresql_where=text("estimated"),
    ),
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
        "owner",
    ),
    Index("ix_usage_provider_model", "provider", "model"),
    Index("ix_usage_owner_provider_model", "owner", "provider", "model"),  # one person's filter choices
    # The Costs page's charts: requests in UTC-hour order, then grouped by model and stop reason,
    # so summing them per hour needs no sort (yiem.costs groups the hours into local days).
    Index(
        "ix_usage_hour",
        text(USAGE_HOUR_EXPRESSION),
        "provider",
        "model",
        "stop_reason",
        "owner",
        "created_ms",
        *_USAGE_COUNT_COLUMNS,
    ),
    # The Costs page's median sample above 16 x 20,000 requests (every k-th request by id, k a
    # multiple of 16, see yiem.costs.medians): one person's range of it, read from this index alone,
    # is a sixteenth of the range's rows. Only those rows are in it, so inserts barely pay for it.
    Index(
        "ix_usage_sample",
        "owner",
        "created_ms",
        "provider",
        "model",
        "latency_ms",
        "ttft_ms",
        "id",
        sqlite_where=text(_SAMPLE_CONDITION),
        postgresql_where=text(_SAMPLE_CONDITION),
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
        "owner",
        *_USAGE_COUNT_COLUMNS,
    ),
)
# Made again by migration 11, which added the owner to the columns they hold.
OWNER_WIDENED_INDEXES = ("ix_usage_dashboard", "ix_usage_hour", "ix_usage_conversation_totals")

# The stop reason of a failed request; the rollups count these as errors.
ERROR_STOP_REASON = "error"


def _count_columns(*extra: Column[Any]) -> list[Column[Any]]:
    names = ["requests", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"]
    names += ["reasoning_tokens", "unpriced_requests"]
    return [
        *(Column(name, BigInteger, nullable=False) for name in names),
        Column("cost_total", Float, nullable=False),
        *extra,
    ]


# Per hour, provider, model, stop reason and owner: the cube, the headline, the previous period.
usage_hourly = Table(
    "usage_hourly",
    metadata,
    Column("hour", BigInteger, nullable=False),  # created_ms // 3_600_000
    Column("provider", Text, nullable=False),
    Column("model", Text, nullable=False),
    Column("stop_reason", Text, nullable=False),
    Column("owner", Text, nullable=False),
    *_count_columns(
        Column("cost_input", Float, nullable=False),
        Column("cost_output", Float, nullable=False),
        Column("cost_cache_read", Float, nullable=False),
        Column("cost_cache_write", Float, nullable=False),
        Column("unpriced_tokens", BigInteger, nullable=False),
    ),
    # In hour order, so the page's range is one seek and its hours come out grouped.
    PrimaryKeyConstraint("hour", "provider", "model", "stop_reason", "owner"),
    sqlite_with_rowid=False,
)

# Per conversation ('' for none), hour, provider, model and owner: the most expensive conversations.
usage_conversation_hourly = Table(
    "usage_conversation_hourly",
    metadata,
    Column("conversation_id", Text, nullable=False),
    Column("hour", BigInteger, nullable=False),
    Column("provider", Text, nullable=False),
    Column("model", Text, nullable=False),
    Column("owner", Text, nullable=False),
    *_count_columns(
        Column("errors", BigInteger, nullable=False),
        Column("last_ms", BigInteger, nullable=False),
    ),
    # In conversation order, so grouping conversations walks it without a sort.
    PrimaryKeyConstraint("conversation_id", "hour", "provider", "model", "owner"),
    sqlite_with_rowid=False,
)

# Per owner and conversation ('' for none), over all time: requests and priced dollars only. No
# range can hold more of a conversation than this, so the Costs page finds a range's most expensive
# conversations among the few most expensive here instead of summing every conversation's hours
# (yiem.costs.top_conversations; schema 24).
usage_per_conversation = Table(
    "usage_per_conversation",
    metadata,
    Column("owner", Text, nullable=False),
    Column("conversation_id", Text, nullable=False),
    Column("requests", BigInteger, nullable=False),
    Column("cost_total", Float, nullable=False),
    PrimaryKeyConstraint("owner", "conversation_id"),
    # One person's conversations, most expensive first (read backwards), more requests first on a tie.
    Index("ix_usage_per_conversation_cost", "owner", "cost_total", "requests"),
    sqlite_with_rowid=False,
)

schema_version = Table(
    "schema_version",
    metadata,
    Column("version", Integer, nullable=False),
)
