"""Experiments runner: its own cost per item, and its wall time against the ideal at concurrency 16.

1. Overhead: 10,000 items through `run_experiment` on `ScriptedLlm` (one short reply, no tools, one
   `contains` scorer), against the peer doing the same agent runs without the runner: the same
   `run_agent_loop` over the same items in one thread. Both in the same run; median of 3. Then
   `--store-items` of them with the store (SQLite in a temporary folder), as the page runs them.
2. Throughput: 1,000 items × 2 variants against a loopback OpenAI-compatible server whose every
   reply takes 50 ms, at concurrency 16: wall time against the ideal 2,000 × 50 ms ÷ 16. Beside it,
   the floors without the runner on 16 threads: `run_item` called directly, and bare httpx requests.
3. The peer: Inspect AI (pinned, in its own venv, see bench/inspect_peer.py) running the same
   2,000 samples against the same server at `max_connections` 16, generate and a text scorer only;
   yiem and Inspect take turns, `--peer-repeat` rounds, and the ratio is of their medians.
4. With `--ray`: the same 2,000 through a local Ray head (127.0.0.1, 2 CPUs, the tests' recipe),
   against the thread pool at the concurrency Ray has (2 tasks at once on 2 CPUs).

    .venv/bin/python bench/experiments.py --items 10000 --http-items 1000 --peer-repeat 1 --ray
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.inspect_peer import INSPECT_VERSION, run_peer
from tests.fixtures.ray import local_ray_cluster
from yiem import AgentContext, AgentLoopConfig, LlmModel, ScriptedLlm, TextContent, UserMessage
from yiem.events import AgentEndEvent
from yiem.experiments import (
    RAY_ADDRESS_ENV,
    Dataset,
    DatasetItem,
    ExperimentStore,
    Variant,
    run_experiment,
    run_item,
    scorers,
)
from yiem.loop import run_agent_loop
from yiem.store import create_store_engine
from yiem.types import AbortSignal

REPLY = {"content": "The answer is 42.", "usage": {"inputTokens": 12, "outputTokens": 6}}


def dataset(n: int) -> Dataset:
    return Dataset.from_records(
        [{"id": f"i{k}", "input": f"question {k}", "expected": "42"} for k in range(n)]
    )


def runner_seconds(items: int, concurrency: int, store: ExperimentStore | None = None) -> float:
    data = dataset(items)
    variant = Variant(name="v", llm=ScriptedLlm([REPLY] * items, chunk_size=64))
    started = time.perf_counter()
    result = run_experiment(data, [variant], [scorers.contains()], concurrency=concurrency, store=store)
    elapsed = time.perf_counter() - started
    assert result.status == "finished" and len(result.outcomes) == items
    assert all(o.passed for o in result.outcomes)
    return elapsed


def bare_loop_seconds(items: int) -> float:
    llm = ScriptedLlm([REPLY] * items, chunk_size=64)
    model = LlmModel(id="v", provider="custom")
    config = AgentLoopConfig(max_turns=10)
    contexts = [
        AgentContext(messages=[UserMessage(content=[TextContent(text=f"question {k}")])])
        for k in range(items)
    ]
    started = time.perf_counter()
    for context in contexts:
        for event in run_agent_loop(context, llm, model, config):
            if isinstance(event, AgentEndEvent):
                assert "42" in event.messages[-1].text  # type: ignore[union-attr]
    return time.perf_counter() - started


def start_slow_server(delay: float) -> ThreadingHTTPServer:
    """An OpenAI-compatible chat completions server: every streamed reply takes `delay` seconds."""

    def event(data: Any) -> bytes:
        text = data if isinstance(data, str) else json.dumps(data)
        body = f"data: {text}\n\n".encode()
        return f"{len(body):x}\r\n".encode() + body + b"\r\n"

    base = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "slow"}
    chunks = [
        event({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "The answer "}}]}),
        event({**base, "choices": [{"index": 0, "delta": {"content": "is 42."}, "finish_reason": "stop"}]}),
        event({**base, "choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 6}}),
        event("[DONE]"),
    ]

    whole = {
        **base,
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "The answer is 42."},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 6, "total_tokens": 18},
    }

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            time.sleep(delay)
            if not request.get("stream"):  # Inspect asks without streaming: the same reply, whole
                body = json.dumps(whole).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                self.wfile.flush()
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.write(b"".join(chunks) + b"0\r\n\r\n")
            self.wfile.flush()

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 128

    server = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _serve(delay: float, ports: Any) -> None:
    server = start_slow_server(delay)
    ports.put(server.server_address[1])
    threading.Event().wait()  # until the parent ends this process


def serve_in_own_process(delay: float) -> tuple[multiprocessing.Process, int]:
    """The slow server in a process of its own, so its threads do not share the runner's GIL."""
    ports: Any = multiprocessing.Queue()
    process = multiprocessing.Process(target=_serve, args=(delay, ports), daemon=True)
    process.start()
    return process, int(ports.get(timeout=30))


def http_variants(base_url: str) -> list[Variant]:
    return [
        Variant(
            name=name,
            provider="vllm",
            base_url=base_url,
            model_id="slow",
            api_key="bench",
            system_prompt=prompt,
        )
        for name, prompt in (("plain", ""), ("terse", "Be terse."))
    ]


def http_seconds(
    items: int, concurrency: int, base_url: str, executor: Literal["threads", "ray"] = "threads"
) -> tuple[float, float]:
    data = dataset(items)
    variants = http_variants(base_url)
    started, cpu = time.perf_counter(), time.process_time()
    result = run_experiment(data, variants, [scorers.contains()], concurrency=concurrency, executor=executor)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert result.status == "finished" and len(result.outcomes) == 2 * items, result.status
    errors = [o.error for o in result.outcomes if o.error]
    assert not errors, errors[:3]
    return elapsed, cpu


def floor_seconds(items: int, concurrency: int, base_url: str) -> tuple[float, float]:
    """The same 2 × `items` without the runner, on `concurrency` threads: `run_item` called directly
    (the agent run and its scoring), and bare httpx streaming requests (one client per variant)."""
    variants, data = http_variants(base_url), dataset(items)
    connected = [variant.connect() for variant in variants]
    contains, signal = [scorers.contains()], AbortSignal()

    def agent_run(task: tuple[DatasetItem, int]) -> bool:
        item, k = task
        llm, model = connected[k]
        outcome = run_item(variants[k], item, 0, llm, model, [], contains, signal)
        return outcome is not None and outcome.passed

    clients = [httpx.Client(timeout=60), httpx.Client(timeout=60)]
    url = f"{base_url}/chat/completions"

    def request(task: tuple[DatasetItem, int]) -> bool:
        item, k = task
        body = {"model": "slow", "stream": True, "messages": [{"role": "user", "content": item.input}]}
        with clients[k].stream("POST", url, json=body, headers={"Authorization": "Bearer bench"}) as response:
            chunks = [json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: {")]
        return len(chunks) == 3

    tasks = [(item, k) for item in data.items for k in range(2)]
    walls = []
    for work in (agent_run, request):
        with ThreadPoolExecutor(concurrency) as pool:
            started = time.perf_counter()
            assert all(pool.map(work, tasks))
            walls.append(time.perf_counter() - started)
    for client in clients:
        client.close()
    return walls[0], walls[1]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--store-items", type=int, default=2_000, help="items run with the store; 0: none")
    parser.add_argument("--http-items", type=int, default=1_000)
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--peer-repeat", type=int, default=3, help="rounds against Inspect AI; 0: none")
    parser.add_argument("--ray", action="store_true", help="also through a local Ray head")
    args = parser.parse_args()

    runner_seconds(200, 4)  # warm-up: imports, pydantic schemas, thread pool
    bare, runner = [], []
    for _ in range(args.repeat):
        bare.append(bare_loop_seconds(args.items))
        runner.append(runner_seconds(args.items, 4))
    per_bare = statistics.median(bare) / args.items * 1e6
    per_runner = statistics.median(runner) / args.items * 1e6
    print(f"1. {args.items:,} items on ScriptedLlm, median of {args.repeat}")
    print(f"   run_experiment (concurrency 4): {per_runner:8.1f} µs per item")
    print(f"   bare run_agent_loop, one thread: {per_bare:8.1f} µs per item")
    print(f"   runner's own cost (difference):  {per_runner - per_bare:8.1f} µs per item")
    if args.store_items:
        with tempfile.TemporaryDirectory() as folder:
            store = ExperimentStore(create_store_engine(f"sqlite:///{folder}/bench.db"))
            stored = [runner_seconds(args.store_items, 4, store) for _ in range(args.repeat)]
        per_stored = statistics.median(stored) / args.store_items * 1e6
        print(f"   with the store (SQLite), {args.store_items:,} items: {per_stored:8.1f} µs per item")

    if args.http_items:
        process, port = serve_in_own_process(args.delay)
        base_url = f"http://127.0.0.1:{port}/v1"
        try:
            http_seconds(20, args.concurrency, base_url)  # warm-up: connections
            wall, cpu = http_seconds(args.http_items, args.concurrency, base_url)
            direct, bare_http = floor_seconds(args.http_items, args.concurrency, base_url)
            yiem_walls, peer_walls = [wall], []
            for round_ in range(args.peer_repeat):
                if round_:
                    yiem_walls.append(http_seconds(args.http_items, args.concurrency, base_url)[0])
                peer_walls.append(run_peer(base_url, args.http_items, args.concurrency))
            ray_figures = ray_seconds(args.http_items, base_url) if args.ray else None
        finally:
            process.kill()
            process.join()
        total = 2 * args.http_items
        ideal = total * args.delay / args.concurrency
        print(
            f"2. {args.http_items:,} items × 2 variants, {args.delay * 1000:.0f} ms per reply, "
            f"concurrency {args.concurrency}"
        )
        print(
            f"   wall {wall:.2f} s, ideal {ideal:.2f} s ({total:,} × {args.delay * 1000:.0f} ms ÷ "
            f"{args.concurrency}): {wall / ideal:.2f} ×"
        )
        print(f"   runner CPU {cpu:.2f} s, {cpu / total * 1000:.2f} ms per item (all its threads)")
        print(
            f"   without the runner, {args.concurrency} threads: run_item called directly {direct:.2f} s = "
            f"{direct / ideal:.2f} ×; bare httpx requests {bare_http:.2f} s = {bare_http / ideal:.2f} ×"
        )
        if peer_walls:
            ours, theirs = statistics.median(yiem_walls), statistics.median(peer_walls)
            print(
                f"3. the same {total:,} against Inspect AI {INSPECT_VERSION} (max_connections "
                f"{args.concurrency}), median of {len(peer_walls)}"
            )
            print(f"   yiem {_runs(yiem_walls)}; Inspect {_runs(peer_walls)}")
            print(f"   yiem ÷ Inspect: {ours / theirs:.2f}")
        if ray_figures is not None:
            threads, ray = ray_figures
            print(f"4. the same {total:,} on a local Ray head (2 CPUs: 2 tasks at once)")
            print(f"   thread pool at concurrency 2: {threads:.2f} s; Ray: {ray:.2f} s")
            print(
                f"   Ray ÷ threads: {ray / threads:.2f} × "
                f"({(ray - threads) / total * 2 * 1000:+.1f} ms per item on each of its 2 slots)"
            )


def _runs(walls: list[float]) -> str:
    return ", ".join(f"{wall:.2f}" for wall in walls) + " s"


def ray_seconds(items: int, base_url: str) -> tuple[float, float]:
    """The same items through the thread pool at 2 and through a 2-CPU Ray head (one task a CPU)."""
    threads = http_seconds(items, 2, base_url)[0]
    with local_ray_cluster() as cluster:
        os.environ[RAY_ADDRESS_ENV] = cluster.address
        try:
            http_seconds(20, 2, base_url, executor="ray")  # warm-up: workers and their clients
            ray = http_seconds(items, 2, base_url, executor="ray")[0]
        finally:
            del os.environ[RAY_ADDRESS_ENV]
            import ray as ray_module

            ray_module.shutdown()
    return threads, ray


if __name__ == "__main__":
    main()
