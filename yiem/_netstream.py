"""httpcore network streams both HTTP clients use: TCP_NODELAY, and a request cut from another thread.

The providers' client and the MCP POSTs each wrap httpcore's sockets; the wrapping lives here, once.
Closing an httpx or httpcore response from another thread does not wake a thread blocked in `recv()`;
shutting the socket down does. Each connection's socket is tracked by the thread that last used it,
so a request can be cut even while it waits for the response headers.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
from collections.abc import Callable, Iterable
from typing import Any

import httpcore
import httpx

WrapStream = Callable[[httpcore.NetworkStream], httpcore.NetworkStream]
# Nagle's algorithm can hold a request's body (or a small write) for the server's delayed ACK
# of the one before it: up to 40 ms on Linux.
NO_DELAY = (socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class NoDelayBackend(httpcore.NetworkBackend):
    """A network backend whose TCP sockets send at once (TCP_NODELAY), each stream wrapped by `wrap`."""

    def __init__(self, inner: httpcore.NetworkBackend | None = None, wrap: WrapStream | None = None) -> None:
        self._inner = inner or httpcore.SyncBackend()
        self._wrap: WrapStream = wrap or (lambda stream: stream)

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        options = [*(socket_options or ()), NO_DELAY]
        return self._wrap(self._inner.connect_tcp(host, port, timeout, local_address, options))

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        return self._wrap(self._inner.connect_unix_socket(path, timeout, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class TrackedStream(httpcore.NetworkStream):
    """A stream that tells `registry` which thread uses it, so that thread's request can be cut."""

    def __init__(self, inner: httpcore.NetworkStream, registry: StreamRegistry) -> None:
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
        return TrackedStream(self._inner.start_tls(ssl_context, server_hostname, timeout), self._registry)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class StreamRegistry:
    """Which stream each thread used last; `interrupt(thread_id)` shuts that thread's socket down."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_thread: dict[int, TrackedStream] = {}
        # Threads whose request was cut before it had a socket: the socket is cut on first use.
        self._cut: set[int] = set()

    def claim(self, stream: TrackedStream) -> None:
        thread_id = threading.get_ident()
        self._by_thread[thread_id] = stream
        if thread_id in self._cut:
            shutdown_stream(stream)

    def reset(self, thread_id: int) -> None:
        """Forget an earlier interrupt of `thread_id`, before it starts a new request."""
        with self._lock:
            self._cut.discard(thread_id)

    def release(self, stream: TrackedStream) -> None:
        with self._lock:
            for thread_id, owned in list(self._by_thread.items()):
                if owned is stream:
                    del self._by_thread[thread_id]

    def interrupt(self, thread_id: int) -> None:
        """Cut the request `thread_id` is making now, or the one it is about to make."""
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


def interrupt_response(response: httpx.Response) -> None:
    """End a response another thread is reading; closing alone does not wake a blocked read."""
    shutdown_stream(response.extensions.get("network_stream"))
    response.close()
