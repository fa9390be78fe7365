"""Typed reads of fields from JSON a server sent, tolerant of any shape it may have."""

from __future__ import annotations

from typing import Any


def obj(value: Any) -> dict[str, Any]:
    """`value` if it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def text(value: Any) -> str:
    """`value` if it is a string, else ""."""
    return value if isinstance(value, str) else ""


def name(value: Any) -> str | None:
    """`value` if it is a non-empty string, else None."""
    return value if isinstance(value, str) and value else None


def count(value: Any) -> int | None:
    """`value` if it is an integer (not a boolean), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None
