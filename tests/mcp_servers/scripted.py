"""A small scripted MCP server for what real servers do not do on demand.

Paginated `tools/list` (three pages, or a cursor that repeats), `-32601`, a slow tool with
progress, a tool that never answers, a crash in the middle of a call, a server request to the
client, `list_changed`, a protocol version and a title of our choosing. `ScriptedServer` holds the logic;
`python -m tests.mcp_servers.scripted` serves it over stdio and `ScriptedHttpServer` over
Streamable HTTP on 127.0.0.1 (with session loss on demand). `--hostile` adds tools whose input
schemas a form cannot draw or check naively (`HOSTILE_TOOLS`); each answers with its arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Message = dict[str, Any]
Send = Callable[[Message], None]

# A 1x1 PNG as a data: URL: an icon a client may show without fetching anything.
ICON = {
    "src": "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAE"
    "hQGAhKmMIQAAAABJRU5ErkJggg==",
    "mimeType": "image/png",
    "sizes": ["1x1"],
}
BASE_TOOLS = [
    {"name": "fail", "description": "Always an error result.", "inputSchema": {"type": "object"}},
    {"name": "stuck", "description": "Ignores cancellation for 30 s.", "inputSchema": {"type": "object"}},
    {
        "name": "add",
        "description": "Add a and b.",
        "icons": [ICON, {"src": "http://plain.example/add.png"}],
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
    },
    {
        "name": "slow",
        "description": "Report progress `steps` times, `delay` s apart.",
        "inputSchema": {
            "type": "object",
            "properties": {"steps": {"type": "integer"}, "delay": {"type": "number"}},
        },
    },
    {"name": "hang", "description": "Never answers until cancelled.", "inputSchema": {"type": "object"}},
    {
        "name": "crash",
        "description": "The server dies in the middle of the call.",
        "inputSchema": {"type": "object"},
    },
    {
        "name": "ask_client",
        "description": "Sends a sampling request to the client.",
        "inputSchema": {"type": "object"},
    },
    {
        "name": "log_then_answer",
        "description": "A log notification, then the answer.",
        "inputSchema": {"type": "object"},
    },
    {"name": "change_tools", "description": "Adds a tool and says so.", "inputSchema": {"type": "object"}},
]
PAGE_SIZE = 3
# A 3,000-step `$ref` chain: deeper than Python's recursion limit if followed one call per step.
REF_CHAIN_STEPS = 3000
BACKTRACKING_PATTERN = "^(a+)+$"  # exponential in a backtracking regex engine on "aaa…a!"
HOSTILE_TOOLS = [
    {
        "name": "properties_list",
        "description": "`properties` given as a list.",
        "inputSchema": {"type": "object", "properties": [{"name": "a", "type": "string"}]},
    },
    {
        "name": "required_number",
        "description": "`required` given as a number.",
        "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}, "required": 5},
    },
    {
        "name": "ref_chain",
        "description": "A property behind a 3,000-step `$ref` chain.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/step0"}},
            "$defs": {
                **{f"step{i}": {"$ref": f"#/$defs/step{i + 1}"} for i in range(REF_CHAIN_STEPS)},
                f"step{REF_CHAIN_STEPS}": {"type": "string"},
            },
        },
    },
    {
        "name": "nested_ref_chain",
        "description": "The chain inside an array's items, where the form draws a JSON field.",
        "inputSchema": {
            "type": "object",
            "properties": {"list": {"type": "array", "items": {"$ref": "#/$defs/step0"}}},
            "$defs": {
                **{f"step{i}": {"$ref": f"#/$defs/step{i + 1}"} for i in range(REF_CHAIN_STEPS)},
                f"step{REF_CHAIN_STEPS}": {"type": "string"},
            },
        },
    },
    {
        "name": "backtracking_pattern",
        "description": "A pattern that backtracks exponentially.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "word": {"type": "string", "pattern": BACKTRACKING_PATTERN},
                "words": {"type": "array", "items": {"type": "string", "pattern": BACKTRACKING_PATTERN}},
            },
            "required": ["word"],
        },
    },
]


class ScriptedServer:
    """The server's logic: answers one message, sending replies and notifications through `send`."""

    def __init__(
        self,
        protocol_version: str | None = None,
        repeat_cursor: bool = False,
        hostile: bool = False,
        title: str | None = None,
    ) -> None:
        self.protocol_version = protocol_version
        self.title = title
        self.repeat_cursor = repeat_cursor
        self.tools = [dict(tool) for tool in BASE_TOOLS + (HOSTILE_TOOLS if hostile else [])]
        self.cancelled: set[Any] = set()
        self.received: list[Message] = []
        self._released, self._answered = threading.Event(), threading.Event()
        self.on_crash: Callable[[], None] = lambda: os._exit(3)
        self._server_requests: dict[Any, threading.Event] = {}
        self._server_replies: dict[Any, Message] = {}
        self._lock = threading.Lock()

    def handle(self, message: Message, send: Send) -> None:
        """Handle one incoming message; requests may block (run them in a thread)."""
        with self._lock:
            self.received.append(message)
        method = message.get("method")
        if method is None:  # a reply to a request we sent
            with self._lock:
                self._server_replies[message.get("id")] = message
                event = self._server_requests.get(message.get("id"))
            if event:
                event.set()
            return
        if "id" not in message:
            if method == "notifications/cancelled":
                self.cancelled.add((message.get("params") or {}).get("requestId"))
            return
        request_id, params = message["id"], message.get("params") or {}
        try:
            result = self._answer(method, params, request_id, send)
        except LookupError as exc:
            send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": str(exc)}})
            return
        except Exception as exc:
            send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32603, "message": repr(exc)}})
            return
        if result is not None:
            send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def _answer(
        self, method: str, params: dict[str, Any], request_id: Any, send: Send
    ) -> dict[str, Any] | None:
        if method == "initialize":
            version = self.protocol_version or params.get("protocolVersion")
            return {
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {
                    "name": "scripted",
                    "version": "1.0",
                    "icons": [ICON],
                    **({"title": self.title} if self.title is not None else {}),
                },
                "instructions": "A scripted test server.",
            }
        if method == "ping":
            return {}
        if method == "tools/list":
            start = int(params.get("cursor") or 0)
            page = self.tools[start : start + PAGE_SIZE]
            result: dict[str, Any] = {"tools": page}
            if start + PAGE_SIZE < len(self.tools):
                result["nextCursor"] = "0" if self.repeat_cursor else str(start + PAGE_SIZE)
            return result
        if method == "tools/call":
            return self._call(
                str(params.get("name")), params.get("arguments") or {}, params, request_id, send
            )
        raise LookupError(f"Method not found: {method}")

    def _call(
        self, name: str, args: dict[str, Any], params: dict[str, Any], request_id: Any, send: Send
    ) -> dict[str, Any] | None:
        token = (params.get("_meta") or {}).get("progressToken")
        if name == "add":
            return _text(f"{args['a'] + args['b']}")
        if name == "slow":
            steps, delay = int(args.get("steps", 3)), float(args.get("delay", 0.05))
            for step in range(1, steps + 1):
                time.sleep(delay)
                if request_id in self.cancelled:
                    return None  # a cancelled request gets no answer
                if token is not None:
                    send(
                        {
                            "jsonrpc": "2.0",
                            "method": "notifications/progress",
                            "params": {
                                "progressToken": token,
                                "progress": step,
                                "total": steps,
                                "message": f"step {step}",
                            },
                        }
                    )
            return _text(f"done after {steps} steps")
        if name == "hang":
            while request_id not in self.cancelled:
                time.sleep(0.01)
            return None
        if name == "hold_until_released":  # unlisted: an error once "release" is called
            # As a task's tasks/result is answered when its task is cancelled: this error goes out
            # before the answer to "release", so the client reads it first.
            self._released.wait(10)
            send(
                {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32603, "message": "no result stored"}}
            )
            self._answered.set()
            return None
        if name == "release":
            self._released.set()
            self._answered.wait(10)
            return _text("released")
        if name == "fail":
            return {"content": [{"type": "text", "text": "it failed on purpose"}], "isError": True}
        if name == "stuck":
            time.sleep(30)  # ignores cancellation, as some servers do
            return None
        if name == "crash":
            print("scripted: simulated crash in the middle of a call", file=sys.stderr, flush=True)
            self.on_crash()
            return None
        if name == "ask_client":
            reply = self._ask(send, "sampling/createMessage", {"messages": [], "maxTokens": 1})
            return _text(json.dumps(reply.get("error") or reply.get("result")))
        if name == "log_then_answer":
            send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/message",
                    "params": {"level": "info", "logger": "scripted", "data": "about to answer"},
                }
            )
            return _text("answered")
        if name in {tool["name"] for tool in HOSTILE_TOOLS}:
            return _text(f"{name} got {json.dumps(args, sort_keys=True)}")
        if name == "change_tools":
            self.tools.append(
                {"name": "extra", "description": "Added later.", "inputSchema": {"type": "object"}}
            )
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            return _text("added extra")
        return {"content": [{"type": "text", "text": f"Unknown tool: {name}"}], "isError": True}

    def _ask(self, send: Send, method: str, params: dict[str, Any]) -> Message:
        request_id = f"server-{uuid.uuid4().hex[:8]}"
        event = threading.Event()
        with self._lock:
            self._server_requests[request_id] = event
        send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        event.wait(10)
        with self._lock:
            return self._server_replies.get(request_id, {"error": {"message": "no reply"}})


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False}


# --- stdio -------------------------------------------------------------------------------


def serve_stdio(server: ScriptedServer, noise: bool) -> None:
    """One JSON message per line; each request in its own thread so cancellation can arrive."""
    lock = threading.Lock()

    def send(message: Message) -> None:
        with lock:
            sys.stdout.write(json.dumps(message) + "\n")
            sys.stdout.flush()

    if noise:
        sys.stdout.write("this line is not JSON\n")
        sys.stdout.flush()
    for line in sys.stdin:
        if line.strip():
            threading.Thread(target=server.handle, args=(json.loads(line), send), daemon=True).start()


# --- Streamable HTTP ---------------------------------------------------------------------


class ScriptedHttpServer:
    """Streamable HTTP on 127.0.0.1 and a free port; `lose_sessions(404 or 400)` forgets every session."""

    def __init__(self, sse: bool = True) -> None:
        self.sse = sse
        self.core = ScriptedServer()
        self.sessions: set[str] = set()
        self.lost_status: int | None = None
        self.requests: list[dict[str, Any]] = []  # method, headers of each POST
        self.deleted: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._reply(405, b"")

            def do_DELETE(self) -> None:
                outer.deleted.append(self.headers.get("Mcp-Session-Id", ""))
                outer.sessions.discard(self.headers.get("Mcp-Session-Id", ""))
                self._reply(200, b"")

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                message = json.loads(body)
                outer.requests.append({"method": message.get("method"), "headers": dict(self.headers)})
                session = self.headers.get("Mcp-Session-Id")
                if message.get("method") == "initialize":
                    session = uuid.uuid4().hex
                    outer.sessions.add(session)
                elif session not in outer.sessions:
                    status = outer.lost_status or 404
                    error = {
                        "jsonrpc": "2.0",
                        "id": message.get("id"),
                        "error": {"code": -32000, "message": "Bad Request: No valid session ID provided"},
                    }
                    self._reply(status, json.dumps(error).encode())
                    return
                if "id" not in message or "method" not in message:
                    outer.core.handle(message, lambda _m: None)
                    self._reply(202, b"")
                    return
                params = message.get("params") or {}
                if message.get("method") == "tools/call" and params.get("name") == "crash":
                    self._start_sse(session)
                    self.wfile.write(b"id: 1\ndata: \n\n")
                    self.wfile.flush()
                    return  # the connection closes with no answer
                if outer.sse:
                    self._start_sse(session)
                    self.wfile.write(b"id: prime\ndata: \n\n")  # the empty priming event

                    def send(reply: Message) -> None:
                        self.wfile.write(f"event: message\ndata: {json.dumps(reply)}\n\n".encode())
                        self.wfile.flush()

                    outer.core.handle(message, send)
                else:
                    replies: list[Message] = []
                    outer.core.handle(message, replies.append)
                    answer = next(r for r in replies if r.get("id") == message["id"] and "method" not in r)
                    self._reply(200, json.dumps(answer).encode(), session, "application/json")

            def _start_sse(self, session: str | None) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                if session:
                    self.send_header("Mcp-Session-Id", session)
                self.end_headers()
                self.close_connection = True

            def _reply(
                self, status: int, body: bytes, session: str | None = None, kind: str = "application/json"
            ) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                if session:
                    self.send_header("Mcp-Session-Id", session)
                self.end_headers()
                self.wfile.write(body)

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._http.server_address[1]}/mcp"
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    def lose_sessions(self, status: int) -> None:
        """Forget every session; the next request gets `status` (404, or 400 with a session message)."""
        self.sessions.clear()
        self.lost_status = status

    def __enter__(self) -> ScriptedHttpServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--protocol", help="answer initialize with this protocol version")
    parser.add_argument("--repeat-cursor", action="store_true", help="tools/list repeats its cursor")
    parser.add_argument("--noise", action="store_true", help="write a line that is not JSON first")
    parser.add_argument("--hostile", action="store_true", help="add the tools of HOSTILE_TOOLS")
    parser.add_argument("--title", help="the server's title in initialize (its own words, Markdown and all)")
    options = parser.parse_args()
    server = ScriptedServer(options.protocol, options.repeat_cursor, options.hostile, options.title)
    serve_stdio(server, options.noise)


if __name__ == "__main__":
    main()
