"""Full-text search of message text: SQLite FTS5, PostgreSQL's text search (see docs/store.md).

Both index only the text of a message's `text` fields (prompts, replies, tool results), never its
JSON keys, and both are kept by the database itself, so every writer's messages are found.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sqlalchemy import Connection, TextClause, bindparam, text

# Marks a matching word in a snippet; control characters never appear in shown text.
MATCH_START = "\x02"
MATCH_END = "\x03"
_SNIPPET_WORDS = 12

_SQLITE_TEXT = (
    "(SELECT coalesce(group_concat(value, ' '), '') FROM json_tree({row}.data) "
    "WHERE key = 'text' AND type = 'text')"
)
_SQLITE_DDL = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS message_search USING fts5("
    "body, conversation_id UNINDEXED, tokenize = 'unicode61 remove_diacritics 2')",
    "CREATE TRIGGER IF NOT EXISTS message_search_insert AFTER INSERT ON messages BEGIN "
    "INSERT INTO message_search (rowid, body, conversation_id) "
    f"VALUES (new.id, {_SQLITE_TEXT.format(row='new')}, new.conversation_id); END",
    "CREATE TRIGGER IF NOT EXISTS message_search_delete AFTER DELETE ON messages BEGIN "
    "DELETE FROM message_search WHERE rowid = old.id; END",
    "CREATE TRIGGER IF NOT EXISTS message_search_update AFTER UPDATE OF data ON messages BEGIN "
    "UPDATE message_search SET body = "
    f"{_SQLITE_TEXT.format(row='new')} WHERE rowid = new.id; END",
)
_SQLITE_BACKFILL = (
    "INSERT INTO message_search (rowid, body, conversation_id) "
    f"SELECT m.id, {_SQLITE_TEXT.format(row='m')}, m.conversation_id FROM messages m "
    "WHERE m.id NOT IN (SELECT rowid FROM message_search)"
)

# PostgreSQL indexes an expression over messages.data, so the index fills itself (existing rows
# included) and follows every insert, update and delete. The function must be IMMUTABLE to be
# indexed; a row whose JSON PostgreSQL refuses (a \u0000 escape) is indexed as empty, not refused.
_POSTGRES_FUNCTION = r"""
CREATE OR REPLACE FUNCTION yiem_message_text(data TEXT) RETURNS TEXT
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    RETURN coalesce((
        SELECT string_agg(piece #>> '{}', ' ')
        FROM jsonb_path_query(
            data::jsonb, 'strict $.**.text ? (@.type() == "string")', '{}', true
        ) AS piece
    ), '');
EXCEPTION WHEN others THEN
    RETURN '';
END
$$
"""
_POSTGRES_VECTOR = "to_tsvector('simple', yiem_message_text({row}.data))"
_POSTGRES_INDEX = (
    "CREATE INDEX IF NOT EXISTS ix_messages_search ON messages "
    "USING gin (to_tsvector('simple', yiem_message_text(data)))"
)


def install_message_search(conn: Connection) -> None:
    """Create the search index of message text and fill it from the messages already stored."""
    if conn.dialect.name == "postgresql":
        conn.execute(text(_POSTGRES_FUNCTION))
        conn.execute(text(_POSTGRES_INDEX))
        return
    for statement in _SQLITE_DDL:
        conn.execute(text(statement))
    conn.execute(text(_SQLITE_BACKFILL))


def search_words(search: str) -> list[str]:
    """The words of a search, each matched as a word prefix ("quok" finds "quokka")."""
    return [word for word in re.split(r"[\W_]+", search) if word]


def _sqlite_match(words: Sequence[str]) -> str:
    return " ".join(f'"{word}"*' for word in words)


def _postgres_query(words: Sequence[str]) -> str:
    return " & ".join(f"'{word}':*" for word in words)


def matching_conversations(dialect: str, words: Sequence[str]) -> TextClause:
    """SQL selecting the ids of conversations with a message holding every word (for `IN`)."""
    if dialect == "postgresql":
        return text(
            f"SELECT m.conversation_id FROM messages m WHERE {_POSTGRES_VECTOR.format(row='m')} "
            "@@ to_tsquery('simple', :search_query)"
        ).bindparams(search_query=_postgres_query(words))
    return text(
        "SELECT conversation_id FROM message_search WHERE message_search MATCH :search_query"
    ).bindparams(search_query=_sqlite_match(words))


def snippets(conn: Connection, words: Sequence[str], conversation_ids: Sequence[str]) -> dict[str, str]:
    """For each of these conversations with a matching message, a snippet of its latest one.

    Matching words are wrapped in `MATCH_START` and `MATCH_END`.
    """
    if not conversation_ids or not words:
        return {}
    if conn.dialect.name == "postgresql":
        query = text(
            "SELECT m.conversation_id, ts_headline('simple', yiem_message_text(m.data), "
            "to_tsquery('simple', :search_query), :options) AS snippet "
            f"FROM messages m WHERE m.conversation_id IN :ids AND {_POSTGRES_VECTOR.format(row='m')} "
            "@@ to_tsquery('simple', :search_query) ORDER BY m.position"
        ).bindparams(
            bindparam("ids", expanding=True),
            search_query=_postgres_query(words),
            options=f"StartSel={MATCH_START}, StopSel={MATCH_END}, MaxWords={_SNIPPET_WORDS}, "
            f"MinWords={_SNIPPET_WORDS // 2}, ShortWord=0",
        )
    else:
        query = text(
            f"SELECT conversation_id, snippet(message_search, 0, '{MATCH_START}', '{MATCH_END}', '…', "
            f"{_SNIPPET_WORDS}) AS snippet FROM message_search WHERE message_search MATCH :search_query "
            "AND conversation_id IN :ids ORDER BY rowid"
        ).bindparams(bindparam("ids", expanding=True), search_query=_sqlite_match(words))
    found: dict[str, str] = {}
    for row in conn.execute(query, {"ids": list(conversation_ids)}):
        found[row.conversation_id] = row.snippet  # in writing order: the latest match stays
    return found
