"""What an MCP server says on its own (log messages, list changes, progress), kept for people to read."""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable
from datetime import datetime
from typing import Any

from yiem.mcp import LISTEN_BROKEN, McpClient, McpNotification
from yiem.types import utc_now

MAX_EVENTS = 200


class ServerEvents:
    """The latest notifications of one client, newest last; attached without losing the sink before it."""

    def __init__(self, max_events: int = MAX_EVENTS) -> None:
        self._events: deque[tuple[datetime, McpNotification]] = deque(maxlen=max_events)
        self._lock = threading.Lock()
        self.client: McpClient | None = None

    def attach(self, client: McpClient, on_tools_changed: Callable[[], None] | None = None) -> None:
        """Listen to `client` (once); `on_tools_changed` runs when the server says its tools changed."""
        if self.client is client:
            return
        self.client = client
        previous = client.event_sink

        def sink(notification: McpNotification) -> None:
            if previous is not None:
                previous(notification)
            with self._lock:
                self._events.append((utc_now(), notification))
            if notification.method == "notifications/tools/list_changed" and on_tools_changed is not None:
                on_tools_changed()

        client.event_sink = sink

    def recent(self, count: int = 50) -> list[tuple[datetime, McpNotification]]:
        """The last `count` notifications, newest first."""
        with self._lock:
            return list(reversed(self._events))[:count]

    def __len__(self) -> int:
        with self._lock:
            return len(self._events)


def notification_words(notification: McpNotification) -> str:
    """A notification as a line a person can read."""
    params = notification.params
    method = notification.method
    if method == "notifications/message":
        data = params.get("data")
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        source = f" ({params['logger']})" if isinstance(params.get("logger"), str) else ""
        return f"{str(params.get('level', 'info')).upper()}{source}: {text}"
    if method == "notifications/progress":
        total = params.get("total")
        amount = f"{params.get('progress')} of {total}" if total else f"{params.get('progress')}"
        message = params.get("message")
        return f"Progress {amount}" + (f" — {message}" if message else "")
    if method.endswith("/list_changed"):
        what = method.removeprefix("notifications/").removesuffix("/list_changed")
        return f"The server's {what} changed."
    if method == "notifications/resources/updated":
        return f"Resource {params.get('uri')} was updated."
    if method == "notifications/subscriptions/acknowledged":
        raw = params.get("notifications")
        wish: dict[str, Any] = raw if isinstance(raw, dict) else {}
        kinds = [
            key.removesuffix("ListChanged") for key, on in wish.items() if key.endswith("ListChanged") and on
        ]
        uris = wish.get("resourceSubscriptions") or []
        wanted = [f"{kind} list changes" for kind in kinds] + [f"updates of {uri}" for uri in uris]
        return "Listening for " + (", ".join(wanted) if wanted else "nothing") + "."
    if method == LISTEN_BROKEN:
        return str(params.get("message", "the subscription stream broke")).capitalize()
    return f"{method} {json.dumps(params, ensure_ascii=False)}" if params else method


LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def log_level_of(notification: McpNotification) -> str | None:
    """The level of a log message (`notifications/message`); None for other notifications."""
    if notification.method != "notifications/message":
        return None
    level = str(notification.params.get("level", "info")).lower()
    return level if level in LOG_LEVELS else "info"


def filter_events(
    events: list[tuple[datetime, McpNotification]],
    min_level: str = "debug",
    contains: str = "",
    logs_only: bool = False,
) -> list[tuple[datetime, McpNotification]]:
    """Events at `min_level` or above (other notifications pass unless `logs_only`) whose words
    contain `contains` (case-insensitive)."""
    floor = LOG_LEVELS.index(min_level) if min_level in LOG_LEVELS else 0
    needle = contains.lower().strip()
    kept = []
    for when, event in events:
        level = log_level_of(event)
        if level is None and logs_only:
            continue
        if level is not None and LOG_LEVELS.index(level) < floor:
            continue
        if needle and needle not in notification_words(event).lower():
            continue
        kept.append((when, event))
    return kept
