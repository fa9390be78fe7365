"""SP-022: the abort signal shared by the loop, the providers and the tools."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable


class AbortSignal:
    """SP-022: a thread-safe, one-way abort flag that code can poll, wait on or subscribe to."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._reason: str | None = None
        self._callbacks: list[Callable[[str | None], None]] = []

    @property
    def aborted(self) -> bool:
        return self._event.is_set()

    @property
    def reason(self) -> str | None:
        return self._reason

    def abort(self, reason: str | None = None) -> None:
        """Set the flag once; later calls do nothing."""
        with self._lock:
            if self._event.is_set():
                return
            self._reason = reason
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            try:
                callback(reason)
            except Exception:
                # A broken listener must not stop the abort reaching the others.
                logging.getLogger(__name__).exception("abort callback failed")

    def wait(self, timeout: float | None = None) -> bool:
        """Block until aborted or `timeout` seconds pass; True when aborted."""
        return self._event.wait(timeout)

    def on_abort(self, callback: Callable[[str | None], None]) -> Callable[[], None]:
        """Call `callback(reason)` on abort (at once if already aborted); returns an unsubscribe function."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)

                def unsubscribe() -> None:
                    with self._lock:
                        if callback in self._callbacks:
                            self._callbacks.remove(callback)

                return unsubscribe
        callback(self._reason)
        return lambda: None

    def __repr__(self) -> str:
        return f"AbortSignal(aborted={self.aborted}, reason={self._reason!r})"
