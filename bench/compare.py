"""Compare fan-out: six columns streaming at once against one column alone, over a loopback server.

Every reply is 100 text chunks 10 ms apart from tests/scripted_http.py's server (about 1 s each),
run in its own process so its threads do not share this process's GIL with the columns.
The peer is one `Agent` streaming the same reply alone in this thread; the fan-out is the page's
`Comparison` of 6 columns. Target: six at once take the slowest column's time plus under 10%.
Then the issue's concurrency case: three columns whose server answers each after 1 s take under
1.5 s in total, not 3 (the test checks the overlap without a clock; the time is measured here).

    .venv/bin/python bench/compare.py --rounds 5
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import sys
import time
from multiprocessing.synchronize import Event
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.scripted_http import Reply, ScriptedServer, openai_text_stream
from yiem import Agent
from yiem.compare import Comparison, connect_column
from yiem.model_setup import ModelSetup

CHUNKS = 100
DELAY_S = 0.01


def reply() -> Reply:
    parts = [f"w{n} " for n in range(CHUNKS)]
    usage = {"prompt_tokens": 10, "completion_tokens": CHUNKS}
    stream = openai_text_stream(*parts, usage=usage)
    return Reply(headers={"Content-Type": "text/event-stream"}, chunks=stream, delay=DELAY_S)


def slow_reply() -> Reply:
    """The whole answer 1 s after the request."""
    stream = openai_text_stream("done", usage={"prompt_tokens": 10, "completion_tokens": 1})
    return Reply(headers={"Content-Type": "text/event-stream"}, chunks=stream, delay_headers=1.0)


def serve(
    replies: int,
    slow: int,
    ready: multiprocessing.Queue[str],
    stop: Event,
) -> None:
    server = ScriptedServer()
    server.script(*(reply() for _ in range(replies)), *(slow_reply() for _ in range(slow)))
    ready.put(server.url)
    stop.wait()
    server.close()


def spec(url: str) -> ModelSetup:
    return ModelSetup(provider="llamacpp", base_url=f"{url}/v1", model_id="scripted")


def one_alone(url: str) -> float:
    llm, model = connect_column(spec(url))
    agent = Agent(llm, model)
    started = time.perf_counter()
    for _ in agent.prompt("go"):
        pass
    return time.perf_counter() - started


def six_at_once(url: str) -> tuple[float, float]:
    """The fan-out's wall time, and its slowest column's own total time."""
    comparison = Comparison([spec(url) for _ in range(6)])
    started = time.perf_counter()
    comparison.start("go")
    comparison.wait()
    wall = time.perf_counter() - started
    assert all(c.status == "done" and c.figures.output_tokens == CHUNKS for c in comparison.columns)
    slowest = max((c.figures.total_ms or 0.0) / 1000 for c in comparison.columns)
    return wall, slowest


def three_after_one_second(url: str) -> float:
    """The wall time of three columns whose answers each come 1 s after the request."""
    comparison = Comparison([spec(url) for _ in range(3)])
    started = time.perf_counter()
    comparison.start("go")
    comparison.wait()
    wall = time.perf_counter() - started
    assert all(c.status == "done" for c in comparison.columns), [c.error for c in comparison.columns]
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    ready: multiprocessing.Queue[str] = multiprocessing.Queue()
    stop = multiprocessing.Event()
    replies = (1 + 7 * args.rounds, 3 * args.rounds, ready, stop)
    child = multiprocessing.Process(target=serve, args=replies, daemon=True)
    child.start()
    url = ready.get(timeout=30)
    try:
        one_alone(url)  # warm-up: imports, connection set-up
        alone = [one_alone(url) for _ in range(args.rounds)]
        fan_out = [six_at_once(url) for _ in range(args.rounds)]
        three = [three_after_one_second(url) for _ in range(args.rounds)]
    finally:
        stop.set()
        child.join(10)
    alone_s = statistics.median(alone)
    six_s = statistics.median(wall for wall, _ in fan_out)
    slowest_s = statistics.median(slowest for _, slowest in fan_out)
    print(
        json.dumps(
            {
                "one_alone_s": round(alone_s, 3),
                "six_at_once_s": round(six_s, 3),
                "six_slowest_column_s": round(slowest_s, 3),
                "six_over_one": round(six_s / alone_s, 3),
                "six_over_slowest_column": round(six_s / slowest_s, 3),
                "three_answered_after_1s_s": round(statistics.median(three), 3),
                "three_answered_after_1s_max_s": round(max(three), 3),
                "rounds": args.rounds,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
