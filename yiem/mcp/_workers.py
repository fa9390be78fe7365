"""Worker threads for the HTTP transport that never hold the process open at exit."""

from __future__ import annotations

import functools
import logging
import queue
import threading
from collections.abc import Callable

from yiem.mcp.errors import McpConnectionError

logger = logging.getLogger(__name__)


class DaemonWorkers:
    """Runs submitted calls on up to `size` daemon threads, each started when no idle one is left.

    `concurrent.futures` joins its workers at interpreter exit, so a worker reading a stream that
    lasts for hours (`subscriptions/listen`) kept a stopped app alive until it was killed."""

    def __init__(self, size: int, name: str, closed_words: str) -> None:
        self._size = size
        self._name = name
        self._closed_words = closed_words
        self._jobs: queue.SimpleQueue[Callable[[], object] | None] = queue.SimpleQueue()
        self._idle = threading.Semaphore(0)
        self._lock = threading.Lock()
        self._started = 0
        self._closed = False

    def submit(self, fn: Callable[..., object], *args: object) -> None:
        """Run `fn(*args)` on a worker; `McpConnectionError` (`closed_words`) once `shutdown` was called."""
        with self._lock:
            if self._closed:
                raise McpConnectionError(self._closed_words)
            self._jobs.put(functools.partial(fn, *args))
            if not self._idle.acquire(blocking=False) and self._started < self._size:
                self._started += 1
                name = f"{self._name}_{self._started}"
                threading.Thread(target=self._work, name=name, daemon=True).start()

    def shutdown(self) -> None:
        """Drop the work not started yet and let each worker end once its call returns."""
        with self._lock:
            self._closed = True
            while True:
                try:
                    self._jobs.get_nowait()
                except queue.Empty:
                    break
            self._jobs.put(None)

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                self._jobs.put(None)  # the next worker ends too
                return
            try:
                job()
            except Exception:  # the transport's calls report their own failures; this is a last guard
                logger.exception("%s: a worker's call failed", self._name)
            del job  # not held while idle: it may hold a response
            self._idle.release()
