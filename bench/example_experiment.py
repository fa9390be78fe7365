"""The example experiment's first Run (issue 28: "a finished matrix, a comparison and a cost line in
under a minute"), timed on the embedded model by the page's own path.

Each round is what a click on Run does: `BackgroundRun.start` on the example as "Start from an
example" creates it (`example_experiment()`), stored in a fresh SQLite store, with the person's
spending limits checked; timed from the click to the run's end. The embedded llama-server (two
slots, as the app starts it) is started once before the rounds and its start timed apart: the app
starts it when a page first needs it, and a first Run on a cold server adds that start. The load
average is printed with each figure, as it decides them on a shared machine.

    .venv/bin/python bench/example_experiment.py --rounds 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from yiem.experiments import BackgroundRun, ExperimentResult, ExperimentStore, example_experiment
from yiem.model_setup import local_model
from yiem.store import create_store_engine


def load() -> str:
    """`uptime`'s line: when, and the load averages over 1, 5 and 15 minutes."""
    return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()


def one_run(folder: Path, round_number: int) -> tuple[float, ExperimentResult]:
    """One click on Run: the seconds until the run ended, and its result."""
    engine = create_store_engine(f"sqlite:///{folder / f'round-{round_number}.db'}")
    store = ExperimentStore(engine)
    draft = example_experiment()
    experiment_id = store.save_experiment(draft.name, draft.model_dump(mode="json", exclude={"name"}))
    started = time.perf_counter()
    run = BackgroundRun.start(store, draft.spec(), experiment_id)
    while run.running:
        time.sleep(0.05)
    took = time.perf_counter() - started
    engine.dispose()
    if run.result is None:
        raise SystemExit(f"round {round_number}: the run failed: {run.error}")
    return took, run.result


def describe(result: ExperimentResult) -> str:
    cost = result.cost()
    passed = {
        variant: sum(o.passed for o in result.outcomes if o.variant == variant)
        for variant in dict.fromkeys(o.variant for o in result.outcomes)
    }
    return (
        f"{result.status}, {len(result.outcomes)} outcomes, {cost.input_tokens} tokens in and "
        f"{cost.output_tokens} out (judges included), passed per variant {passed}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="runs of the example (median reported)")
    args = parser.parse_args()

    print(f"cores: {os.cpu_count()}")
    print(f"before: {load()}")
    started = time.perf_counter()
    local_model()  # the process-wide server the page's runs use
    print(f"llama-server start (two slots): {time.perf_counter() - started:.1f} s")
    seconds: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        for number in range(1, args.rounds + 1):
            took, result = one_run(Path(folder), number)
            seconds.append(took)
            print(f"round {number}: {took:.1f} s ({describe(result)}); {load()}")
    each = ", ".join(f"{s:.1f}" for s in seconds)
    print(f"median of {args.rounds}: {statistics.median(seconds):.1f} s (each: {each})")
    print(f"after: {load()}")


if __name__ == "__main__":
    main()
