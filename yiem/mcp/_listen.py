"""`subscriptions/listen` (2026-07-28): one long request whose reply stream carries the server's events.

It replaces 2025-11-25's GET stream and `resources/subscribe`: the request names what the client
wants (list changes, updates of given resources); the server acknowledges, then sends those
notifications on the reply. A changed wish restarts the request; a stream that dies is opened
again after a short wait, and the event sink hears that it broke (`LISTEN_BROKEN`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from yiem.mcp.errors import McpCancelledError, McpError
from yiem.mcp.models import McpNotification
from yiem.types import AbortSignal

logger = logging.getLogger(__name__)
LISTEN_BROKEN = "yiem/subscriptions/broken"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
# The stream is silent for as long as nothing changes: a day of silence is not a failure.
LISTEN_IDLE_S = 86_400.0
RETRY_FIRST_S = 0.5
RETRY_MAX_S = 30.0


# `McpClient.request`: (method, params, *, timeout, max_timeout, signal) -> result.
Request = Callable[..., dict[str, Any]]


class ListenStream:
    """Keeps one `subscriptions/listen` open with the current wish; restarts it when the wish changes."""

    def __init__(self, request: Request, emit: Callable[[McpNotification], None], label: str) -> None:
        self._request = request
        self._emit = emit
        self._label = label
        self.lists: set[str] = set()
        self.uris: set[str] = set()
        self.breaks = 0
        self._lock = threading.Lock()
        self._signal: AbortSignal | None = None
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def want(
        self, *, lists: set[str] | None = None, add: str | None = None, remove: str | None = None
    ) -> None:
        """Change what is listened for (`lists`: tools, prompts, resources); starts or restarts the stream."""
        with self._lock:
            if lists is not None:
                self.lists = set(lists)
            if add is not None:
                self.uris.add(add)
            if remove is not None:
                self.uris.discard(remove)
            signal = self._signal
            if self._thread is None and (self.lists or self.uris):
                self._thread = threading.Thread(
                    target=self._run, name=f"mcp-listen-{self._label}", daemon=True
                )
                self._thread.start()
        if signal is not None:
            signal.abort("the subscriptions changed")

    def stop(self) -> None:
        """End the stream for good (the client closes)."""
        self._stopped.set()
        with self._lock:
            signal = self._signal
        if signal is not None:
            signal.abort("the client closed")

    def wish(self) -> dict[str, Any]:
        """The `notifications` filter of the request."""
        with self._lock:
            wish: dict[str, Any] = {f"{kind}ListChanged": True for kind in sorted(self.lists)}
            if self.uris:
                wish["resourceSubscriptions"] = sorted(self.uris)
        return wish

    def _run(self) -> None:
        delay = RETRY_FIRST_S
        while not self._stopped.is_set():
            signal = AbortSignal()
            with self._lock:
                self._signal = signal
            wish = self.wish()
            try:
                self._request(
                    "subscriptions/listen",
                    {"notifications": wish},
                    timeout=LISTEN_IDLE_S,
                    max_timeout=LISTEN_IDLE_S,
                    signal=signal,
                )
                delay = RETRY_FIRST_S  # the server ended it in good order: listen again at once
                continue
            except McpCancelledError:
                if signal.aborted:
                    continue  # our own restart (or stop): no wait, no alarm
                error: McpError | None = None
            except McpError as exc:
                error = exc
            if self._stopped.is_set():
                return
            self.breaks += 1
            why = error.message if error is not None else "it was cancelled"
            self._emit(
                McpNotification(
                    method=LISTEN_BROKEN,
                    params={
                        "message": f"the subscription stream broke ({why}); listening again in {delay:g} s"
                    },
                )
            )
            logger.info("subscriptions/listen of %s broke: %s", self._label, why)
            self._stopped.wait(delay)
            delay = min(delay * 2, RETRY_MAX_S)
