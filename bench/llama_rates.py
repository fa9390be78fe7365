"""Token rates of llama-server builds on the cached SmolLM2, interleaved in one run.

Used to check that scripts/llama_compile.sh's -O1 (everything but ggml's kernels) keeps the
rates of a plain -O3 build: `python bench/llama_rates.py OLD/llama-server NEW/llama-server`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from yiem.providers.local_llm import LocalLlmServer

PROMPT = "Write a long story about a lighthouse keeper and the sea. " * 20


def _rates(binary: str, threads: int, requests: int) -> list[tuple[float, float]]:
    """(prompt tokens/s, generated tokens/s) of each request, from llama-server's own timings."""
    rates = []
    with LocalLlmServer(binary=Path(binary), threads=threads, progress=None) as server:
        for n in range(requests):
            body = {"prompt": f"{PROMPT}{n}", "n_predict": 200, "temperature": 0, "ignore_eos": True}
            body["cache_prompt"] = False
            reply = httpx.post(f"{server.base_url}/completion", json=body, timeout=300).json()
            timings = reply["timings"]
            rates.append((timings["prompt_per_second"], timings["predicted_per_second"]))
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("binaries", nargs="+")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    found: dict[str, list[tuple[float, float]]] = {binary: [] for binary in args.binaries}
    for _ in range(args.rounds):  # interleaved, so the machine's load falls on every build alike
        for binary in args.binaries:
            found[binary] += _rates(binary, args.threads, args.requests)
    base_prompt = base_gen = 0.0
    for binary, rates in found.items():
        prompt = statistics.median(rate[0] for rate in rates)
        generated = statistics.median(rate[1] for rate in rates)
        base_prompt, base_gen = base_prompt or prompt, base_gen or generated
        print(
            f"{binary}: prompt {prompt:.0f} tok/s ({prompt / base_prompt:.2f}), "
            f"generated {generated:.1f} tok/s ({generated / base_gen:.2f}), medians of {len(rates)}"
        )


if __name__ == "__main__":
    main()
