"""The embedded model's reply time with one llama.cpp thread against two, interleaved in one run.

`--busy N` starts N busy loops beside the servers for the run, as a shared 2-core machine (a test
suite, a second user) would be: `python bench/llama_threads.py --busy 0` and `--busy 3`.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from yiem.providers.local_llm import LocalLlmServer

SHORT = "Write a short story about a cat."
LONG = "The quick brown fox jumps over the lazy dog. " * 150 + "Summarize this."


def _reply_seconds(threads: int, prompt: str, requests: int) -> list[float]:
    """Wall seconds of each chat reply (64 tokens at most), the server started with `threads`."""
    seconds = []
    with LocalLlmServer(threads=threads, progress=None) as server:
        for n in range(requests):
            body = {
                "messages": [{"role": "user", "content": f"{prompt} ({n})"}],
                "max_tokens": 64,
                "temperature": 0,
            }
            start = time.monotonic()
            url = f"{server.openai_base_url}/chat/completions"
            httpx.post(url, json=body, timeout=600).raise_for_status()
            seconds.append(time.monotonic() - start)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--busy", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--requests", type=int, default=3)
    args = parser.parse_args()
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    try:
        for name, prompt in (("short prompt", SHORT), ("1,500-token prompt", LONG)):
            found: dict[int, list[float]] = {1: [], 2: []}
            for _ in range(args.rounds):  # interleaved, so the load falls on both alike
                for threads in found:
                    found[threads] += _reply_seconds(threads, prompt, args.requests)
            one, two = (statistics.median(found[threads]) for threads in (1, 2))
            print(f"{name}, {args.busy} busy loops: 1 thread {one:.2f} s, 2 threads {two:.2f} s", end="")
            print(f" ({two / one:.1f}x)")
    finally:
        for loop in loops:
            loop.kill()


if __name__ == "__main__":
    main()
