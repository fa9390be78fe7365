"""The store's exceptions: each message says what happened and what to do."""

from __future__ import annotations

from yiem.errors import YiemError


class StoreError(YiemError):
    """The store could not do what was asked; the message says why."""


class ConversationNotFoundError(StoreError):
    """No conversation has this id (deleted, or a stale link)."""


def missing_conversation(conversation_id: str, consequence: str = "") -> ConversationNotFoundError:
    """The one sentence for a conversation that is gone or someone else's (never told apart)."""
    # As a person who deleted it in another tab would understand it; another person's rows are never
    # read to tell the two cases apart.
    return ConversationNotFoundError(
        "This conversation no longer exists or is not yours (it was deleted, perhaps in another tab "
        f"or window, or it belongs to someone else; id {conversation_id})." + consequence
    )


class StoreUnavailableError(StoreError):
    """The database cannot be reached or opened (bad URL, server down, wrong password)."""


class SchemaTooNewError(StoreError):
    """The database was written by a newer yiem than this one."""


class StoreBusyError(StoreUnavailableError):
    """Another program held the database locked for longer than the store waits (the busy timeout)."""


class StoreCorruptError(StoreUnavailableError):
    """The database file is not a database, or is damaged."""


# SQLite's result codes (sqlite3's `sqlite_errorname`) for a lock held too long and a damaged file.
_SQLITE_BUSY = {"SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_BUSY_SNAPSHOT", "SQLITE_BUSY_RECOVERY"}
_SQLITE_CORRUPT = {"SQLITE_NOTADB", "SQLITE_CORRUPT"}


def translate_sqlite_error(error: BaseException, where: str, busy_seconds: float) -> StoreError | None:
    """The `StoreError` that says in words what a sqlite3 error means, or None to keep it as it is."""
    name = getattr(error, "sqlite_errorname", "")
    if name in _SQLITE_BUSY or name.startswith("SQLITE_BUSY"):
        return StoreBusyError(
            f"The conversation database ({where}) is in use by another program, which has kept it "
            f"locked for more than {busy_seconds:g} seconds. Nothing was saved. Try again in a "
            "moment; if it stays locked, close the other program using that file."
        )
    if name in _SQLITE_CORRUPT or name.startswith("SQLITE_CORRUPT"):
        return StoreCorruptError(
            f"The conversation database ({where}) is damaged or is not a database file "
            f"({str(error).strip()}). Move that file aside (or restore a backup) and reload the page: "
            "yiem then starts a new, empty database there."
        )
    return None
