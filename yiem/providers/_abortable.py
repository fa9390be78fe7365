"""An httpx client whose in-flight request can be cut from another thread at once.

Closing an httpx response from another thread does not wake a thread blocked in `recv()`;
shutting the socket down does. The sockets are tracked by `yiem._netstream` (shared with the
MCP POSTs), so an abort reaches the request even while it waits for the response headers.
"""

from __future__ import annotations

import typing
from typing import Any

import httpcore
import httpx

from yiem._netstream import NoDelayBackend, StreamRegistry, TrackedStream, shutdown_stream


class _TrackingBackend(NoDelayBackend):
    """httpx's own backend, its sockets tracked; set on the client's pool once."""

    def __init__(self, inner: httpcore.NetworkBackend, registry: StreamRegistry) -> None:
        super().__init__(inner, lambda stream: TrackedStream(stream, registry))


class AbortableClient:
    """An `httpx.Client` plus `interrupt(thread_id)`, which cuts that thread's request now."""

    def __init__(self, client: httpx.Client) -> None:
        self.http = client
        self._registry = StreamRegistry()
        transports: list[Any] = [getattr(client, "_transport", None)]
        transports += list(typing.cast(dict[Any, Any], getattr(client, "_mounts", {})).values())
        for transport in transports:
            pool = getattr(transport, "_pool", None)
            backend = getattr(pool, "_network_backend", None)
            # httpx keeps its pool private; if a future version moves it, aborts still work
            # once the response headers are in (see interrupt_response).
            if backend is not None and not isinstance(backend, _TrackingBackend):
                pool._network_backend = _TrackingBackend(backend, self._registry)  # type: ignore[union-attr]

    def interrupt(self, thread_id: int, response: httpx.Response | None = None) -> None:
        """Cut the request running in `thread_id` (and `response`'s connection, when known)."""
        if response is not None:
            shutdown_stream(response.extensions.get("network_stream"))
        self._registry.interrupt(thread_id)

    def reset(self, thread_id: int) -> None:
        """Forget an earlier interrupt of `thread_id`, before it starts a new request."""
        self._registry.reset(thread_id)

    def close(self) -> None:
        """Close the underlying client and its connections."""
        self.http.close()
