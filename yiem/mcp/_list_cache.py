"""Cacheable lists (2026-07-28, SEP-2549): a list reply's `ttlMs` says how long it stays fresh.

A list asked for again while fresh is answered from here, and says how old it is; a server's
`list_changed` notification forgets that list at once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from yiem.amounts import elapsed

# The notification that makes each cached list stale.
_CHANGED = {
    "notifications/tools/list_changed": "tools/list",
    "notifications/prompts/list_changed": "prompts/list",
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
}


class ListCache:
    """Method -> (items, fetched at, fresh for); `age` says how old the last answer from the cache was."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lists: dict[str, tuple[list[dict[str, Any]], float, float]] = {}
        self._served_age: dict[str, float | None] = {}
        self._lock = threading.Lock()

    def get(self, method: str) -> list[dict[str, Any]] | None:
        """The cached list while it is fresh (its age is then kept for `age`); None to ask the server."""
        with self._lock:
            entry = self._lists.get(method)
            now = self._clock()
            if entry is None or now - entry[1] >= entry[2]:
                self._lists.pop(method, None)
                self._served_age[method] = None
                return None
            self._served_age[method] = now - entry[1]
            return list(entry[0])

    def put(self, method: str, items: list[dict[str, Any]], ttl_ms: Any) -> None:
        """Keep a whole list for `ttl_ms` (none kept for 0, a missing or a bad value)."""
        if isinstance(ttl_ms, bool) or not isinstance(ttl_ms, int | float) or ttl_ms <= 0:
            return
        with self._lock:
            self._lists[method] = (list(items), self._clock(), ttl_ms / 1000)

    def age(self, method: str) -> float | None:
        """Seconds old the last `method` list was when it came from the cache; None if it came fresh."""
        with self._lock:
            return self._served_age.get(method)

    def changed(self, notification_method: str) -> None:
        """Forget the lists a `list_changed` notification names."""
        stale = _CHANGED.get(notification_method, ())
        with self._lock:
            for method in (stale,) if isinstance(stale, str) else stale:
                self._lists.pop(method, None)


def cache_words(age: float | None) -> str:
    """How a list's freshness reads: "from cache, 40 s old", or "" for a list the server just sent."""
    return "" if age is None else f"from cache, {elapsed(age)} old"
