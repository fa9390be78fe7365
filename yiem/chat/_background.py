"""A run's events read in a worker thread, so whoever draws them wakes at a steady pace.

While a tool runs or a model thinks, the agent loop yields nothing for a long time. A UI that
can only notice a Stop (or redraw a clock) when it gets control again reads the events through
`BackgroundEvents`: the same items in the same order, plus a `Quiet` marker after every
`interval` seconds without one.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from time import monotonic
from typing import Generic, Literal, TypeVar

from yiem.errors import YiemError

T = TypeVar("T")

_Entry = tuple[Literal["item"], T] | tuple[Literal["error"], BaseException] | tuple[Literal["end"], None]


@dataclass(frozen=True)
class Quiet:
    """Nothing arrived for `seconds` (since the last item, or since reading began)."""

    seconds: float


class BackgroundEventsError(YiemError, ValueError):
    """BackgroundEvents set up wrongly (a silence interval that is not positive)."""


class BackgroundEvents(Generic[T]):
    """Iterates `source` in a daemon thread; yields its items in order and a `Quiet` after each silence.

    An exception raised by `source` is raised to the reader, after the items before it. Nothing
    runs until the first `next()`, as with a generator.
    """

    def __init__(self, source: Iterator[T], interval: float = 0.25) -> None:
        if interval <= 0:
            raise BackgroundEventsError(f"interval must be positive, not {interval!r}")
        self._source = source
        self._interval = interval
        self._inbox: queue.SimpleQueue[_Entry[T]] = queue.SimpleQueue()
        self._closing = threading.Event()
        self._thread: threading.Thread | None = None
        self._done = False
        self._last = monotonic()

    def __iter__(self) -> Iterator[T | Quiet]:
        return self

    def __next__(self) -> T | Quiet:
        if self._done:
            raise StopIteration
        if self._thread is None:
            self._last = monotonic()
            self._thread = threading.Thread(target=self._pump, name="yiem-events", daemon=True)
            self._thread.start()
        try:
            entry = self._inbox.get(timeout=self._interval)
        except queue.Empty:
            return Quiet(monotonic() - self._last)
        if entry[0] == "item":
            self._last = monotonic()
            return entry[1]
        self._done = True
        if entry[0] == "error":
            raise entry[1]
        raise StopIteration

    def close(self) -> None:
        """Stop reading `source`: the worker closes it after the item it is waiting for, if any."""
        self._closing.set()
        if self._thread is None:
            self._done = True
            _close(self._source)

    def _pump(self) -> None:
        try:
            for item in self._source:
                self._inbox.put(("item", item))
                if self._closing.is_set():
                    _close(self._source)  # in this thread: a running generator cannot be closed from another
                    break
        except BaseException as error:  # handed to the reader, whose thread decides what it means
            self._inbox.put(("error", error))
        self._inbox.put(("end", None))


def _close(source: Iterator[object]) -> None:
    close = getattr(source, "close", None)
    if close is not None:
        close()
