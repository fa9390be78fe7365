"""MCP POSTs sent straight through httpcore, the engine under httpx, without httpx.Client's per-request work.

`httpx.Client.send` spends about 0.2 ms a request on a loopback server (building and merging the
request, cookies, auth and redirect machinery, hooks, the transport's conversions): more than a
fast server's own time. An MCP POST needs none of it but the auth flow, which runs here when signed in.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterable, Iterator
from typing import Any

import httpcore
import httpx

from yiem._netstream import NoDelayBackend, StreamRegistry, TrackedStream

# httpcore's errors as the httpx ones the transport catches and words (the two share their names).
_ERRORS: dict[type[Exception], type[httpx.TransportError]] = {
    httpcore.ConnectTimeout: httpx.ConnectTimeout,
    httpcore.ReadTimeout: httpx.ReadTimeout,
    httpcore.WriteTimeout: httpx.WriteTimeout,
    httpcore.PoolTimeout: httpx.PoolTimeout,
    httpcore.ConnectError: httpx.ConnectError,
    httpcore.ReadError: httpx.ReadError,
    httpcore.WriteError: httpx.WriteError,
    httpcore.RemoteProtocolError: httpx.RemoteProtocolError,
    httpcore.LocalProtocolError: httpx.LocalProtocolError,
    httpcore.ProxyError: httpx.ProxyError,
    httpcore.UnsupportedProtocol: httpx.UnsupportedProtocol,
}
_CORE_ERRORS = tuple(_ERRORS)


def as_httpx_error(exc: Exception) -> httpx.TransportError:
    """The httpx error for an httpcore one (its message kept), so callers catch one family."""
    for core_type, httpx_type in _ERRORS.items():
        if isinstance(exc, core_type):
            return httpx_type(str(exc))
    return httpx.TransportError(str(exc))


class Poster:
    """POSTs bodies to one URL over a pool of kept-alive connections; replies are httpx responses."""

    def __init__(
        self, url: str, defaults: httpx.Headers, *, max_connections: int, auth: httpx.Auth | None
    ) -> None:
        self.url = url
        self._core_url = httpcore.URL(url)
        parsed = httpx.URL(url)
        host = parsed.netloc.decode("ascii")
        self._auth = auth
        # httpx's own defaults (User-Agent, Accept-Encoding...) so servers see what they saw before.
        self._defaults = [(name, value) for name, value in defaults.raw if name.lower() != b"accept"]
        self._host = (b"Host", host.encode("ascii"))
        self._kept_defaults: dict[tuple[str, ...], list[tuple[bytes, bytes]]] = {}
        # Which thread uses which socket: a POST its own caller makes is cut through it (`interrupt`).
        self._streams = StreamRegistry()
        self._pool = httpcore.ConnectionPool(
            # Certificates are loaded only for https (loading them costs tens of milliseconds).
            ssl_context=httpx.create_ssl_context() if parsed.scheme == "https" else None,
            max_connections=max_connections,
            max_keepalive_connections=max_connections,
            keepalive_expiry=5.0,
            network_backend=NoDelayBackend(wrap=self._wrap),
        )

    def post(self, body: bytes, headers: dict[str, str], timeout: dict[str, float | None]) -> httpx.Response:
        """Send one POST and return once its status and headers are in; the body is streamed."""
        names = tuple(headers)
        defaults = self._kept_defaults.get(names)
        if defaults is None:
            # Which defaults a POST's header names leave in place: the same for every call of a kind.
            given = {name.lower().encode() for name in names}
            defaults = [(name, value) for name, value in self._defaults if name.lower() not in given]
            if len(self._kept_defaults) >= 64:
                self._kept_defaults.clear()
            self._kept_defaults[names] = defaults
        if self._auth is not None:
            merged = {name.decode(): value.decode() for name, value in defaults} | headers
            return self._post_signed(body, merged, timeout)
        raw = [self._host, *defaults]
        raw += [(name.encode("ascii"), value.encode("ascii")) for name, value in headers.items()]
        raw.append((b"Content-Length", str(len(body)).encode()))
        return self._send(raw, body, timeout)

    def interrupt(self, thread_id: int) -> None:
        """Cut the POST `thread_id` is making (or about to make), even before its reply's headers."""
        self._streams.interrupt(thread_id)

    def reset(self, thread_id: int) -> None:
        """Forget an earlier `interrupt` of `thread_id`, so its next POST goes through."""
        self._streams.reset(thread_id)

    def close(self) -> None:
        self._pool.close()

    def _wrap(self, stream: httpcore.NetworkStream) -> httpcore.NetworkStream:
        return _OneWriteStream(TrackedStream(stream, self._streams))

    def _post_signed(
        self, body: bytes, headers: dict[str, str], timeout: dict[str, float | None]
    ) -> httpx.Response:
        """The auth flow httpx.Client runs: sign, send, and again when the server asks (a DPoP nonce)."""
        assert self._auth is not None
        request = httpx.Request("POST", self.url, headers=headers, content=body)
        flow = self._auth.sync_auth_flow(request)
        request = next(flow)
        while True:
            response = self._send(request.headers.raw, body, timeout)
            try:
                request = flow.send(response)
            except StopIteration:
                return response
            response.close()

    def _send(
        self, raw: list[tuple[bytes, bytes]], body: bytes, timeout: dict[str, float | None]
    ) -> httpx.Response:
        request = httpcore.Request(
            b"POST", self._core_url, headers=raw, content=body, extensions={"timeout": timeout}
        )
        try:
            reply = self._pool.handle_request(request)
        except _CORE_ERRORS as exc:
            raise as_httpx_error(exc) from exc
        return httpx.Response(
            reply.status, headers=reply.headers, stream=_Body(reply), extensions=reply.extensions
        )


def body_chunks(response: httpx.Response) -> Iterable[bytes]:
    """A reply's body bytes: straight from httpcore when the body is not encoded (httpx's decoder,
    chunker and context managers cost more than reading a small reply), else as httpx decodes it."""
    stream = response.stream
    if isinstance(stream, _Body) and "content-encoding" not in response.headers:
        return stream
    return response.iter_bytes()


class _Body(httpx.SyncByteStream):
    """A reply's body as httpx reads it, httpcore's errors turned into httpx's."""

    def __init__(self, reply: httpcore.Response) -> None:
        self._reply = reply

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self._reply.iter_stream()
        except _CORE_ERRORS as exc:
            raise as_httpx_error(exc) from exc

    def close(self) -> None:
        self._reply.close()


class _OneWriteStream(httpcore.NetworkStream):
    """Holds httpcore's writes (headers, then body) until the reply is read, to send them as one."""

    # Two writes cost two wake-ups of the server, and with Nagle's algorithm the body can wait
    # for the server's delayed ACK of the headers.

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner
        self._held: list[bytes] = []
        self._timeout: float | None = None

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._held.append(buffer)
        self._timeout = timeout

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self._held:
            data, self._held = b"".join(self._held), []
            self._inner.write(data, self._timeout)
        return self._inner.read(max_bytes, timeout)

    def close(self) -> None:
        self._held = []
        self._inner.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        return _OneWriteStream(self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)
