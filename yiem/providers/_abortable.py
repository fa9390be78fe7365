"""An httpx client whose in-flight request can be cut from another thread at once.

Closing an httpx response from another thread does not wake a thread blocked in `recv()`;
shutting the socket down does. Each connection's socket is tracked by the thread that last
used it, so an abort reaches the request even while it waits for the response headers.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
import typing
from collections.abc import Iterable
from typing import Any

import httpcore
import httpx


class _TrackedStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream, registry: _StreamRegistry) -> None:
        self._inner = inner
        self._registry = registry

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self._registry.claim(self)
        return self._inner.read(max_bytes, timeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._registry.claim(self)
        self._inner.write(buffer, timeout)

    def close(self) -> None:
        self._registry.release(self)
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        return _TrackedStream(self._inner.start_tls(ssl_context, server_hostname, timeout), self._registry)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _TrackingBackend(httpcore.NetworkBackend):
    def __init__(self, inner: httpcore.NetworkBackend, registry: _StreamRegistry) -> None:
        self._inner = inner
        self._registry = registry

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        # A request leaves as two writes (headers, body); with Nagle's algorithm on, the body
        # can wait for the server's delayed ACK of the headers (up to 40 ms on Linux).
        options = [*(socket_options or ()), (socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
        stream = self._inner.connect_tcp(host, port, timeout, local_address, options)
        return _TrackedStream(stream, self._registry)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        return _TrackedStream(self._inner.connect_unix_socket(path, timeout, socket_options), self._registry)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _StreamRegistry:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_thread: dict[int, _TrackedStream] = {}
        # Threads whose request was cut before it had a socket: the socket is cut on first use.
        self._cut: set[int] = set()

    def claim(self, stream: _TrackedStream) -> None:
        thread_id = threading.get_ident()
        self._by_thread[thread_id] = stream
        if thread_id in self._cut:
            shutdown_stream(stream)

    def reset(self, thread_id: int) -> None:
        with self._lock:
            self._cut.discard(thread_id)

    def release(self, stream: _TrackedStream) -> None:
        with self._lock:
            for thread_id, owned in list(self._by_thread.items()):
                if owned is stream:
                    del self._by_thread[thread_id]

    def interrupt(self, thread_id: int) -> None:
        with self._lock:
            self._cut.add(thread_id)
            stream = self._by_thread.get(thread_id)
        if stream is not None:
            shutdown_stream(stream)


def shutdown_stream(stream: Any) -> None:
    """Shut the socket under an httpcore network stream down, waking any thread reading it."""
    sock = stream.get_extra_info("socket") if stream is not None else None
    if isinstance(sock, socket.socket):
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


class AbortableClient:
    """An `httpx.Client` plus `interrupt(thread_id)`, which cuts that thread's request now."""

    def __init__(self, client: httpx.Client) -> None:
        self.http = client
        self._registry = _StreamRegistry()
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
