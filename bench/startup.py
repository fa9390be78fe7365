"""Benchmark of start-up: a fresh `python -c "import yiem"` against `python -c "import pydantic"`.

Run: `.venv/bin/python bench/startup.py` (or `make bench`). Prints a Markdown table for
docs/benchmarks.md.

Whole-process wall time of each command, `--runs` times each (default 10), alternating which
goes first so the machine's load falls on both alike; medians and their ratio. pydantic is the
peer because yiem's core is pydantic models: importing pydantic is the floor yiem builds on.
The interpreter's own start-up is in both figures, and both use the bytecode cache
(`PYTHONDONTWRITEBYTECODE` is dropped for them, so the warm-up run writes the .pyc files).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path
from time import perf_counter

ROOT = Path(__file__).resolve().parent.parent
# As a user's process starts: with the bytecode cache (the warm-up run writes the .pyc files).
ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
# `import yiem` loads names on first use; the agent row shows what a script that runs the loop pays.
COMMANDS = {
    "yiem": "import yiem",
    "yiem agent": "from yiem import Agent, UserMessage, run_agent_loop",
    "pydantic": "import pydantic",
    "python": "pass",
}


def _once(code: str) -> tuple[float, float]:
    """Wall and CPU (user + system) milliseconds of one whole `python -c code` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = perf_counter()
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, env=ENV)
    wall = (perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return wall, cpu


def measure(runs: int) -> dict[str, list[tuple[float, float]]]:
    """(wall, CPU) milliseconds per run of each command; the order rotates every run."""
    names = list(COMMANDS)
    for name in names:  # warm the file cache and the .pyc files first
        _once(COMMANDS[name])
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in names}
    for run in range(runs):
        for name in names[run % len(names) :] + names[: run % len(names)]:
            times[name].append(_once(COMMANDS[name]))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    times = measure(args.runs)
    load_after = os.getloadavg()[0]
    wall = {name: statistics.median(w for w, _ in values) for name, values in times.items()}
    cpu = {name: statistics.median(c for _, c in values) for name, values in times.items()}
    print(f"load average {load_before:.1f} before, {load_after:.1f} after; {args.runs} runs each\n")
    print("| command | wall ms, median (min–max) | ÷ pydantic | CPU ms, median | ÷ pydantic |")
    print("|---|---|---|---|---|")
    for name, code in COMMANDS.items():
        walls = [w for w, _ in times[name]]
        print(
            f'| `python -c "{code}"` | {wall[name]:.0f} ({min(walls):.0f}–{max(walls):.0f}) '
            f"| {wall[name] / wall['pydantic']:.2f} × | {cpu[name]:.0f} "
            f"| {cpu[name] / cpu['pydantic']:.2f} × |"
        )
    print(
        f"\n`import yiem` on top of `import pydantic`: {wall['yiem'] - wall['pydantic']:.0f} ms wall, "
        f"{cpu['yiem'] - cpu['pydantic']:.0f} ms CPU (target: `import yiem` under 150 ms); "
        f"the agent loaded on top of pydantic: {wall['yiem agent'] - wall['pydantic']:.0f} ms wall"
    )


if __name__ == "__main__":
    main()
