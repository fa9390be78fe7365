"""OpenAIChatClient against the official `openai` SDK: streamed completions from one loopback server.

Both clients make the same requests to the same server in the same run, alternating one
request each, so load on the shared machine hits both alike. Reported: the median total time
per completion and the median time to first token, and yiem ÷ SDK for each.

    .venv/bin/python bench/providers.py --requests 200 --chunks 100
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import openai

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from yiem.llm import StreamDone, TextDelta
from yiem.providers import OpenAIChatClient
from yiem.types import AbortSignal, AgentContext, LlmModel, TextContent, UserMessage


def stream_body(chunks: int) -> list[bytes]:
    """The SSE events of one completion: `chunks` text deltas, a finish, a usage chunk, [DONE]."""

    def event(data: Any) -> bytes:
        return f"data: {json.dumps(data) if not isinstance(data, str) else data}\n\n".encode()

    base = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0, "model": "bench"}
    events = [event({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]})]
    events += [
        event({**base, "choices": [{"index": 0, "delta": {"content": f"tok{i} "}, "finish_reason": None}]})
        for i in range(chunks)
    ]
    events.append(event({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
    usage = {"prompt_tokens": 12, "completion_tokens": chunks, "total_tokens": 12 + chunks}
    events.append(event({**base, "choices": [], "usage": usage}))
    events.append(event("[DONE]"))
    return events


def start_server(chunks: int) -> ThreadingHTTPServer:
    """A loopback server that streams the same completion to every POST, one chunk per write."""
    framed = [f"{len(part):x}\r\n".encode() + part + b"\r\n" for part in stream_body(chunks)]

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # as uvicorn and llama.cpp do

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path.endswith("/endless/chat/completions"):
                self._endless()
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for part in framed:
                self.wfile.write(part)
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def _endless(self) -> None:
            # A reply that never ends (a chunk every 10 ms) until the client hangs up.
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            try:
                while True:
                    self.wfile.write(framed[1])
                    self.wfile.flush()
                    time.sleep(0.01)
            except OSError:
                self.close_connection = True

    class Server(ThreadingHTTPServer):
        daemon_threads = True

        def handle_error(self, request: Any, client_address: Any) -> None:
            # The SDK drops its connection after each stream (a reset on the next read); not an error.
            if not isinstance(sys.exc_info()[1], ConnectionError):
                super().handle_error(request, client_address)

    server = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


Sample = tuple[float, float]  # (total seconds, seconds to first token)


def yiem_runner(base_url: str) -> Callable[[], Sample]:
    client = OpenAIChatClient(base_url, api_key="bench")
    model = LlmModel(id="bench", provider="bench")
    context = AgentContext(messages=[UserMessage(content=[TextContent(text="Count to one hundred.")])])

    def run() -> Sample:
        started = time.perf_counter()
        first = 0.0
        text = 0
        for event in client.stream(model, context):
            if isinstance(event, TextDelta):
                if not first:
                    first = time.perf_counter()
                text += 1
            elif isinstance(event, StreamDone):
                assert event.message.error_message is None, event.message.error_message
        assert text > 0
        return time.perf_counter() - started, first - started

    return run


def sdk_runner(base_url: str) -> Callable[[], Sample]:
    client = openai.OpenAI(base_url=base_url, api_key="bench", max_retries=2)

    def run() -> Sample:
        started = time.perf_counter()
        first = 0.0
        text = 0
        stream = client.chat.completions.create(
            model="bench",
            messages=[{"role": "user", "content": [{"type": "text", "text": "Count to one hundred."}]}],
            stream=True,
            stream_options={"include_usage": True},
        )
        for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                if not first:
                    first = time.perf_counter()
                text += 1
        assert text > 0
        return time.perf_counter() - started, first - started

    return run


def abort_latency(base_url: str) -> float:
    """Seconds from `abort()` in another thread to the StreamDone of a stream that never ends."""
    client = OpenAIChatClient(base_url + "/endless", api_key="bench")
    model = LlmModel(id="bench", provider="bench")
    context = AgentContext(messages=[UserMessage(content=[TextContent(text="Go on forever.")])])
    signal = AbortSignal()
    aborted_at: list[float] = []

    def abort() -> None:
        aborted_at.append(time.perf_counter())
        signal.abort("bench")

    deltas = 0
    done = 0.0
    for event in client.stream(model, context, signal):
        if isinstance(event, TextDelta):
            deltas += 1
            if deltas == 5:
                # Fire between two chunks, while the reader is blocked waiting for the next one.
                threading.Timer(0.005, abort).start()
        elif isinstance(event, StreamDone):
            assert event.message.stop_reason == "aborted"
            done = time.perf_counter()
    client.close()
    return done - aborted_at[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--chunks", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--aborts", type=int, default=20)
    args = parser.parse_args()

    server = start_server(args.chunks)
    base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    runners = {"yiem": yiem_runner(base_url), "openai": sdk_runner(base_url)}
    for _ in range(args.warmup):
        for run in runners.values():
            run()
    samples: dict[str, list[Sample]] = {name: [] for name in runners}
    for index in range(args.requests):
        # Alternate which goes first, so neither always follows the other.
        order = list(runners) if index % 2 == 0 else list(reversed(runners))
        for name in order:
            samples[name].append(runners[name]())
    aborts = [abort_latency(base_url) * 1000 for _ in range(args.aborts)]
    server.shutdown()

    def median_ms(name: str, part: int) -> float:
        return statistics.median(sample[part] for sample in samples[name]) * 1000

    print(f"{args.requests} streamed completions of {args.chunks} chunks each, openai {openai.__version__}")
    print("| measure | yiem | openai SDK | yiem ÷ SDK |")
    print("|---|---|---|---|")
    for label, part in (("total per completion (median)", 0), ("time to first token (median)", 1)):
        ours, theirs = median_ms("yiem", part), median_ms("openai", part)
        print(f"| {label} | {ours:.2f} ms | {theirs:.2f} ms | {ours / theirs:.2f} |")
    if aborts:
        print(
            f"abort to StreamDone, {len(aborts)} streams: median {statistics.median(aborts):.2f} ms, "
            f"max {max(aborts):.2f} ms"
        )


if __name__ == "__main__":
    main()
