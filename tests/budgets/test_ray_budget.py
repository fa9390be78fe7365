"""Spending limits hold on a real local Ray cluster (tests/fixtures/ray.py) as on the thread pool:
each worker reserves its requests in the app's database, the run stops at the limit keeping what
was done, and a run over the limit sends nothing at all."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.ray import RayCluster
from yiem.budgets import Budget, BudgetGuard, BudgetStore
from yiem.costs import UsageFilter, counts
from yiem.experiments import RAY_ADDRESS_ENV, Dataset, ExperimentStore, Variant, run_experiment
from yiem.identity import LOCAL_OWNER
from yiem.store import create_store_engine

# gpt-4o-mini at the catalogue's $0.15 / $0.60 per million: a reply of 100 in and 1,000 out costs
# $0.000615, and a request with max tokens 1,000 may cost about $0.0006. Three replies fit $0.002;
# a fourth request would cross it.
REPLY_COST = 0.000615
LIMIT = 0.002


@pytest.fixture
def priced_server() -> Iterator[tuple[str, list[str]]]:
    """An OpenAI-compatible loopback server answering every prompt with 100 in / 1,000 out tokens."""
    prompts: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
            prompts.append(prompt if isinstance(prompt, str) else prompt[0]["text"])
            chunk = {"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}
            usage = {"choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 1000}}
            payload = f"data: {json.dumps(chunk)}\n\ndata: {json.dumps(usage)}\n\ndata: [DONE]\n\n".encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", prompts
    server.shutdown()


def test_a_ray_run_stops_at_the_limit_and_a_run_over_it_sends_nothing(
    ray_cluster: RayCluster,
    priced_server: tuple[str, list[str]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(RAY_ADDRESS_ENV, ray_cluster.address)
    base_url, prompts = priced_server
    engine = create_store_engine(f"sqlite:///{tmp_path / 'ray.db'}")
    BudgetStore(engine).set(LOCAL_OWNER, Budget(scope="person", period="day", limit_usd=LIMIT))
    variant = Variant(
        name="v",
        provider="openai",
        base_url=base_url,
        model_id="gpt-4o-mini",
        api_key="test",
        max_tokens=1000,
    )

    def run(name: str) -> Any:
        return run_experiment(
            Dataset.from_records([{"id": f"q{n}", "input": f"{name} {n}"} for n in range(6)]),
            [variant],
            concurrency=1,  # one request at a time, so exactly three fit
            name=name,
            executor="ray",
            store=ExperimentStore(engine),
            budget=BudgetGuard(engine, LOCAL_OWNER.id),
        )

    first = run("first")
    assert first.status == "budget"
    assert [o.item_id for o in first.outcomes] == ["q0", "q1", "q2"]
    assert prompts == ["first 0", "first 1", "first 2"]  # the fourth request was never sent
    assert first.stop_reason and "daily limit of $0.0020" in first.stop_reason
    assert abs(counts(engine, UsageFilter()).cost_total - 3 * REPLY_COST) < 1e-9

    second = run("second")  # over the limit already: refused before any request
    assert (second.status, second.outcomes) == ("budget", [])
    assert second.stop_reason and "daily limit of $0.0020" in second.stop_reason
    assert len(prompts) == 3
