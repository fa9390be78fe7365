"""Experiments on a real local Ray cluster (tests/fixtures/ray.py): the same results as the thread
pool, and a worker killed mid-item retried, not lost. The model is a loopback OpenAI-compatible
server whose reply depends only on the prompt, so both executors must agree item by item."""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.ray import RayCluster
from yiem.experiments import Dataset, RunSpec, Variant, run_spec, scorers
from yiem.experiments._ray import RayExecutor


def _client_pid(port: int) -> int | None:
    """The process whose TCP socket on 127.0.0.1 has local port `port` (from /proc/net/tcp)."""
    inode = None
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if int(fields[1].split(":")[1], 16) == port:
            inode = fields[9]
            break
    if inode is None:
        return None
    target = f"socket:[{inode}]"
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if any(os.readlink(fd) == target for fd in (entry / "fd").iterdir()):
                return int(entry.name)
        except OSError:
            continue
    return None


class Model:
    """Answers `You said: <prompt>` (upper-cased if the system prompt asks to shout; a lone surrogate
    added to an odd prompt)."""

    def __init__(self, cluster: RayCluster | None) -> None:
        self.cluster = cluster
        self.requests: list[str] = []
        self.keys: dict[str, str] = {}  # prompt -> the Authorization header it came with
        self.killed: list[int] = []
        self.kill_senders: list[int | None] = []  # the process behind each request to be killed
        self.lock = threading.Lock()


@pytest.fixture
def model_server(ray_cluster: RayCluster) -> Iterator[tuple[str, Model]]:
    model = Model(ray_cluster)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            messages = body["messages"]
            prompt = next(m["content"] for m in messages if m["role"] == "user")
            prompt = prompt if isinstance(prompt, str) else prompt[0]["text"]
            system = next((m["content"] for m in messages if m["role"] == "system"), "")
            with model.lock:
                model.requests.append(prompt)
                model.keys[prompt] = self.headers.get("Authorization", "")
                first_kill = "kill" in prompt and not model.killed
            if "kill" in prompt:
                sender = _client_pid(self.client_address[1])
                with model.lock:
                    model.kill_senders.append(sender)
            if first_kill:
                # A worker dies mid-item: kill the Ray worker process holding this connection.
                assert sender is not None and model.cluster is not None and model.cluster.owns(sender), sender
                model.killed.append(sender)
                os.kill(sender, signal.SIGKILL)
                return
            text = f"You said: {prompt}"
            if "shout" in str(system):
                text = text.upper()
            if "odd" in prompt:
                text += " \ud800"  # sent as the escape `\ud800`: JSON a client parses to a lone surrogate
            chunk = {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": "stop"}]}
            usage = {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 4}}
            payload = f"data: {json.dumps(chunk)}\n\ndata: {json.dumps(usage)}\n\ndata: [DONE]\n\n".encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    class Server(ThreadingHTTPServer):
        daemon_threads = True

        def handle_error(self, request: Any, client_address: Any) -> None:
            pass  # the killed worker's connection

    server = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", model
    server.shutdown()


def _spec(base_url: str, inputs: list[str]) -> RunSpec:
    variants = [
        Variant(name="plain", provider="vllm", base_url=base_url, model_id="echo", api_key="test"),
        Variant(
            name="loud",
            provider="vllm",
            base_url=base_url,
            model_id="echo",
            api_key="test",
            system_prompt="Please shout.",
        ),
    ]
    data = Dataset.from_records(
        [{"id": f"i{n}", "input": text, "expected": "said"} for n, text in enumerate(inputs)]
    )
    return RunSpec(
        dataset=data,
        variants=variants,
        scorers=[scorers.contains(), scorers.regex("[A-Z]{4}")],
        concurrency={"*": 2},
    )


def _view(result: Any) -> list[tuple[Any, ...]]:
    return [
        (o.item_id, o.variant, o.output, o.passed, [(s.scorer, s.score) for s in o.scores])
        for o in result.outcomes
    ]


def test_ray_gives_the_same_results_as_threads(
    ray_cluster: RayCluster, model_server: tuple[str, Model]
) -> None:
    base_url, _model = model_server
    inputs = [f"item number {n}" for n in range(6)]
    threads = run_spec(_spec(base_url, inputs), executor="threads")
    spec = _spec(base_url, inputs)
    on_ray = run_spec(spec, executor=RayExecutor(spec, ray_cluster.address))
    assert on_ray.status == threads.status == "finished"
    assert _view(on_ray) == _view(threads)
    assert len(on_ray.outcomes) == 12
    assert {o.output for o in on_ray.outcomes if o.variant == "loud"} == {
        f"YOU SAID: ITEM NUMBER {n}" for n in range(6)
    }


def test_a_killed_worker_is_retried(ray_cluster: RayCluster, model_server: tuple[str, Model]) -> None:
    base_url, model = model_server
    spec = _spec(base_url, ["first", "please kill this worker", "third"])
    spec.variants = spec.variants[:1]
    result = run_spec(spec, executor=RayExecutor(spec, ray_cluster.address))
    assert result.status == "finished"
    assert len(model.killed) == 1
    # The first attempt died with its worker; Ray ran the item once more, in one other worker. That
    # worker may send more than once (seen under load: its HTTP retries), never the killed one.
    first, *retried = model.kill_senders
    assert first == model.killed[0] and retried, model.kill_senders
    assert len(set(retried)) == 1 and first not in retried, model.kill_senders
    assert [o.output for o in result.outcomes] == [
        "You said: first",
        "You said: please kill this worker",
        "You said: third",
    ]


def test_lone_surrogates_cross_the_cluster_replaced(
    ray_cluster: RayCluster, model_server: tuple[str, Model]
) -> None:
    """Issue 12: JSON's "\\ud800" in an item's input or the model's output made the JSON between
    the driver and the workers raise."""
    base_url, _model = model_server
    spec = _spec(base_url, ["odd \ud800"])
    spec.variants = spec.variants[:1]
    result = run_spec(spec, executor=RayExecutor(spec, ray_cluster.address))
    assert result.status == "finished"
    assert [(o.output, o.error) for o in result.outcomes] == [("You said: odd \ufffd \ufffd", None)]


def test_two_runs_on_the_same_workers_each_read_their_own_spec(
    ray_cluster: RayCluster, model_server: tuple[str, Model]
) -> None:
    """A worker reads a run's spec once (on its first task of that run) and keeps it by run id, so
    the next run on the same workers, with other items and another key, never sees the first's."""
    base_url, model = model_server
    first = _spec(base_url, ["alpha", "beta"])
    run_spec(first, executor=RayExecutor(first, ray_cluster.address))
    second = _spec(base_url, ["gamma", "delta", "epsilon"])
    for variant in second.variants:
        variant.api_key = "another"
    result = run_spec(second, executor=RayExecutor(second, ray_cluster.address))
    assert result.status == "finished"
    assert {(o.item_id, o.output) for o in result.outcomes if o.variant == "plain"} == {
        ("i0", "You said: gamma"),
        ("i1", "You said: delta"),
        ("i2", "You said: epsilon"),
    }
    assert model.requests.count("gamma") == 2  # once per variant: each task got its run's items
    assert (model.keys["alpha"], model.keys["gamma"]) == ("Bearer test", "Bearer another")
