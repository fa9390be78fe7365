"""The store's exceptions: each message says what happened and what to do."""

from __future__ import annotations

from yiem.errors import YiemError


class StoreError(YiemError):
    """The store could not do what was asked; the message says why."""


class ConversationNotFoundError(StoreError):
    """No conversation has this id (deleted, or a stale link)."""


class StoreUnavailableError(StoreError):
    """The database cannot be reached or opened (bad URL, server down, wrong password)."""


class SchemaTooNewError(StoreError):
    """The database was written by a newer yiem than this one."""
