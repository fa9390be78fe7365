"""A small scripted HTTP server on 127.0.0.1 for the exact error paths a real provider rarely shows.

Each request gets the next `Reply` of the script; every request is recorded.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted answer: status, headers, body chunks (sent chunked, `delay` s apart).

    `drop` cuts the connection after the chunks without ending the body; `repeat_forever`
    keeps sending the last chunk until the client goes away.
    """

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)
    delay: float = 0.0
    drop: bool = False
    repeat_forever: bool = False
    delay_headers: float = 0.0


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: Any


def sse(data: Any, event: str | None = None) -> bytes:
    """One server-sent event with JSON (or raw string) data."""
    text = data if isinstance(data, str) else json.dumps(data)
    prefix = f"event: {event}\n" if event else ""
    return f"{prefix}data: {text}\n\n".encode()


def json_reply(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    """A plain JSON answer."""
    return Reply(
        status=status,
        headers={"Content-Type": "application/json", **(headers or {})},
        chunks=[json.dumps(data).encode()],
    )


def sse_reply(events: list[bytes], **kwargs: Any) -> Reply:
    """An event-stream answer."""
    return Reply(headers={"Content-Type": "text/event-stream"}, chunks=events, **kwargs)


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients hanging up on a kept-alive connection is normal; anything else is printed.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class ScriptedServer:
    """Serves the scripted replies in order; `client_gone` is set when a client hung up mid-body."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[RecordedRequest] = []
        self.client_gone = threading.Event()
        self.lock = threading.Lock()
        # Requests being answered now, and the most there ever were at once (to show overlap).
        self.in_flight = 0
        self.peak_in_flight = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # as uvicorn and llama.cpp do

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._answer(None)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw
                self._answer(body)

            def _answer(self, body: Any) -> None:
                with server.lock:
                    server.requests.append(RecordedRequest(self.path, dict(self.headers), body))
                    reply = server.replies.pop(0) if server.replies else Reply(status=599)
                    server.in_flight += 1
                    server.peak_in_flight = max(server.peak_in_flight, server.in_flight)
                try:
                    self._reply(reply)
                finally:
                    with server.lock:
                        server.in_flight -= 1

            def _reply(self, reply: Reply) -> None:
                time.sleep(reply.delay_headers)
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    self._body(reply)
                except (BrokenPipeError, ConnectionResetError):
                    server.client_gone.set()
                    self.close_connection = True

            def _body(self, reply: Reply) -> None:
                chunks = list(reply.chunks)
                index = 0
                while index < len(chunks) or (reply.repeat_forever and chunks):
                    chunk = chunks[min(index, len(chunks) - 1)]
                    self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                    self.wfile.flush()
                    index += 1
                    if reply.delay:
                        time.sleep(reply.delay)
                if reply.drop:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

        self.httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def script(self, *replies: Reply) -> None:
        """Queue replies for the next requests."""
        with self.lock:
            self.replies.extend(replies)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def openai_chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> bytes:
    """One chat.completion.chunk event."""
    choice = {"index": 0, "delta": delta or {}, "finish_reason": finish}
    return sse({"object": "chat.completion.chunk", "model": "scripted", "choices": [choice], **extra})


def openai_text_stream(*parts: str, usage: dict[str, Any] | None = None, done: bool = True) -> list[bytes]:
    """Text deltas, a `stop` finish, an optional usage chunk and `[DONE]`."""
    events = [openai_chunk({"role": "assistant", "content": ""})]
    events += [openai_chunk({"content": part}) for part in parts]
    events.append(openai_chunk({}, "stop"))
    if usage is not None:
        events.append(sse({"object": "chat.completion.chunk", "choices": [], "usage": usage}))
    if done:
        events.append(sse("[DONE]"))
    return events


def openai_text_reply(text: str, prompt_tokens: int = 12, completion_tokens: int = 1) -> Reply:
    """A whole streamed OpenAI-style answer of `text`, with its usage."""
    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
    return sse_reply(openai_text_stream(text, usage=usage))


def anthropic_event(kind: str, **data: Any) -> bytes:
    """One Anthropic stream event (the SSE event name and the data `type` agree)."""
    return sse({"type": kind, **data}, event=kind)
