"""The root of every exception yiem raises, so callers can catch a whole family at once."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from json import JSONDecodeError


class YiemError(Exception):
    """Base class of every error raised by yiem; its message is written for the person using the app."""


def json_error_words(error: JSONDecodeError) -> str:
    """What is wrong with some JSON text and where, for a message: `Expecting value (line 1, column 7)`."""
    return f"{error.msg} (line {error.lineno}, column {error.colno})"
