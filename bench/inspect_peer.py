"""The Inspect AI peer of bench/experiments.py: the same samples against the same loopback server.

Inspect AI lives in a venv of its own, `~/.cache/yiem/bench-inspect-<version>`, made once per pinned
version (PyPI only, about a minute), so the bench never touches the project's `.venv`.
`ensure_venv()` makes it; this file, run with that venv's Python, times one Inspect eval:

    ~/.cache/yiem/bench-inspect-0.3.285/bin/python bench/inspect_peer.py --base-url URL --samples 1000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

INSPECT_VERSION = "0.3.285"
OPENAI_VERSION = "3.57.0"  # Inspect's OpenAI-compatible provider needs the openai client
VENV = Path.home() / ".cache" / "yiem" / f"bench-inspect-{INSPECT_VERSION}"


def ensure_venv() -> Path:
    """The venv's Python, made and filled on first use; a half-made one is made again."""
    python = VENV / "bin" / "python"
    stamp = VENV / ".installed"
    if stamp.exists():
        return python
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True)
    subprocess.run(
        [
            str(VENV / "bin" / "pip"),
            "install",
            "--quiet",
            f"inspect-ai=={INSPECT_VERSION}",
            f"openai=={OPENAI_VERSION}",
        ],
        check=True,
    )
    stamp.write_text(f"inspect-ai=={INSPECT_VERSION} openai=={OPENAI_VERSION}\n")
    return python


def run_peer(base_url: str, items: int, concurrency: int) -> float:
    """Seconds Inspect's eval took (after a warm-up eval) for `items` × 2 system prompts."""
    completed = subprocess.run(
        [
            str(ensure_venv()),
            __file__,
            "--base-url",
            base_url,
            "--samples",
            str(items),
            "--concurrency",
            str(concurrency),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"the Inspect peer failed:\n{completed.stderr[-3000:]}")
    return float(json.loads(completed.stdout.strip().splitlines()[-1])["seconds"])


def _eval(base_url: str, items: int, concurrency: int) -> float:
    _eval_once(base_url, 10, concurrency)  # warm-up, as the yiem side has: lazy imports, model data
    return _eval_once(base_url, items, concurrency)


def _eval_once(base_url: str, items: int, concurrency: int) -> float:
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate

    # As the yiem side: 1,000 items under two variants, one without and one with a system prompt.
    samples = [Sample(id=f"plain-{k}", input=f"question {k}", target="42") for k in range(items)]
    samples += [
        Sample(
            id=f"terse-{k}",
            input=[ChatMessageSystem(content="Be terse."), ChatMessageUser(content=f"question {k}")],
            target="42",
        )
        for k in range(items)
    ]
    os.environ["BENCH_API_KEY"] = "bench"
    os.environ["BENCH_BASE_URL"] = base_url
    task = Task(dataset=samples, solver=generate(), scorer=includes())  # a text check, no model call
    with tempfile.TemporaryDirectory() as log_dir:
        started = time.perf_counter()
        logs = eval(
            task,
            model="openai-api/bench/slow",
            max_connections=concurrency,
            max_samples=concurrency,
            log_dir=log_dir,
            display="none",
            max_retries=0,
            log_realtime=False,  # no live sample buffer: the yiem side keeps no store either
        )
        elapsed = time.perf_counter() - started
    log = logs[0]
    if log.status != "success" or log.results is None or log.results.completed_samples != 2 * items:
        raise SystemExit(f"Inspect did not finish every sample: {log.status} {log.error}")
    accuracy = log.results.scores[0].metrics["accuracy"].value
    if accuracy != 1.0:
        raise SystemExit(f"Inspect scored {accuracy}, not 1.0: the server's reply was not read")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--samples", type=int, default=1_000, help="items; each is run under 2 prompts")
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    print(json.dumps({"seconds": _eval(args.base_url, args.samples, args.concurrency)}))


if __name__ == "__main__":
    main()
