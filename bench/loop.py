"""Benchmark of the agent loop: its own cost per turn, and parallel against sequential tools.

Run: `.venv/bin/python bench/loop.py` (or `make bench`). Prints a Markdown table for docs/benchmarks.md.

1. µs per turn over 1,000 turns with ScriptedLlm and a no-op tool, next to the peer: the same
   ScriptedLlm streams consumed and the same tool called directly, without the loop. The
   difference is the loop's own cost (events, validation, hooks, the worker-thread hand-off).
2. 8 tools that each sleep 200 ms, parallel against sequential, in the same run.
3. The spans of the run timeline (issue 15): the same 1,000 turns with span recording swapped for
   no-ops, interleaved with the runs of 1, so both see the same load.
"""

from __future__ import annotations

import statistics
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from time import perf_counter, process_time
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import yiem._tool_runner
import yiem.loop
from yiem import (
    AbortSignal,
    AgentContext,
    AgentLoopConfig,
    AgentTool,
    LlmModel,
    ScriptedLlm,
    TextContent,
    UserMessage,
    run_agent_loop,
)

TURNS = 1_000
REPEATS = 5
SPAN_PAIRS = 16
MODEL = LlmModel(id="bench", provider="bench")


def noop(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal) -> str:
    return "ok"


NOOP = AgentTool(
    name="noop",
    description="does nothing",
    input_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    execute=noop,
)


def _responses(turns: int) -> list[Any]:
    calls = [
        {"content": [{"type": "tool_call", "id": f"c{n}", "name": "noop", "arguments": {"n": n}}]}
        for n in range(turns)
    ]
    return [*calls, "done"]


def _context(*tools: AgentTool) -> AgentContext:
    return AgentContext(
        system_prompt="bench",
        messages=[UserMessage(content=[TextContent(text="go")])],
        tools={tool.name: tool for tool in tools},
    )


def loop_turns() -> tuple[float, float]:
    """Wall and CPU seconds (all threads) for TURNS tool-call turns through run_agent_loop."""
    llm = ScriptedLlm(_responses(TURNS))
    config = AgentLoopConfig(max_turns=TURNS + 1)
    started, cpu = perf_counter(), process_time()
    for event in run_agent_loop(_context(NOOP), llm, MODEL, config):
        if event.type == "agent_end":
            assert event.stop_reason == "end_turn", event.error_message
    return perf_counter() - started, process_time() - cpu


def span_work_us(rounds: int = 100_000) -> float:
    """CPU µs of what one tool-call turn records, alone: the reply's span and timeline, the call's."""
    from yiem.timeline import Span, Timeline, with_span

    started = process_time()
    for _ in range(rounds):
        sent = perf_counter()
        with_span(None, "run", Span("llm", "bench", sent, perf_counter(), first_token=sent))
        began = perf_counter()
        Timeline("run", [Span("tool", "noop", began, perf_counter(), call_id="c0", server=None)])
    return (process_time() - started) / rounds * 1e6


@contextmanager
def spans_off() -> Iterator[None]:
    """Span recording replaced by no-ops: what the loop costs without its timeline."""

    def nothing(*args: Any, **kwargs: Any) -> None:
        return None

    saved = (yiem.loop.Span, yiem.loop.with_span, yiem._tool_runner.Span, yiem._tool_runner.Timeline)
    yiem.loop.Span = yiem.loop.with_span = yiem._tool_runner.Span = yiem._tool_runner.Timeline = nothing  # type: ignore[assignment,misc]
    try:
        yield
    finally:
        yiem.loop.Span, yiem.loop.with_span, yiem._tool_runner.Span, yiem._tool_runner.Timeline = saved  # type: ignore[misc]


def peer_turns() -> tuple[float, float]:
    """The same streams and tool calls without the loop: what the loop's cost is measured against."""
    llm = ScriptedLlm(_responses(TURNS))
    context = _context(NOOP)
    signal = AbortSignal()
    started, cpu = perf_counter(), process_time()
    for _ in range(TURNS + 1):
        for event in llm.stream(MODEL, context, signal):
            if event.type == "done":
                for call in getattr(event.message, "tool_calls", []):
                    NOOP.execute(call.id, call.arguments, signal)
    return perf_counter() - started, process_time() - cpu


def sleeping_tools(mode: str) -> float:
    """Wall seconds for one assistant message calling 8 tools that each sleep 200 ms."""

    def sleep(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal) -> str:
        threading.Event().wait(0.2)
        return "slept"

    tool = AgentTool(name="sleep", execute=sleep)
    calls = [{"type": "tool_call", "id": f"s{n}", "name": "sleep", "arguments": {}} for n in range(8)]
    llm = ScriptedLlm([{"content": calls}, "done"])
    config = AgentLoopConfig(tool_execution="parallel" if mode == "parallel" else "sequential")
    started = perf_counter()
    for _ in run_agent_loop(_context(tool), llm, MODEL, config):
        pass
    return perf_counter() - started


def main() -> None:
    loop_turns()  # warm-up: imports, validator cache, thread start
    loop_runs, peer_runs = [], []
    for _ in range(REPEATS):
        loop_runs.append(loop_turns())
        peer_runs.append(peer_turns())
    # With and without spans in pairs, the order swapped each time, so load drifts hit both alike.
    with_runs, bare_runs = [], []
    for pair in range(SPAN_PAIRS):
        for spans in (True, False) if pair % 2 else (False, True):
            if spans:
                with_runs.append(loop_turns())
            else:
                with spans_off():
                    bare_runs.append(loop_turns())

    def per_turn(runs: list[tuple[float, float]], which: int) -> float:
        return statistics.median(run[which] for run in runs) / TURNS * 1e6

    loop_us, peer_us = per_turn(loop_runs, 0), per_turn(peer_runs, 0)
    loop_cpu, peer_cpu = per_turn(loop_runs, 1), per_turn(peer_runs, 1)
    parallel = statistics.median(sleeping_tools("parallel") for _ in range(3))
    sequential = statistics.median(sleeping_tools("sequential") for _ in range(3))
    print("| measure | yiem | peer | ratio |\n|---|---|---|---|")
    print(
        f"| wall µs per turn, {TURNS:,} turns, no-op tool (median of {REPEATS}) | {loop_us:.0f} | "
        f"{peer_us:.0f} | {loop_us / peer_us:.2f} × |"
    )
    print(
        f"| CPU µs per turn, all threads (median of {REPEATS}) | {loop_cpu:.0f} | "
        f"{peer_cpu:.0f} | {loop_cpu / peer_cpu:.2f} × |"
    )
    own = f"{loop_us - peer_us:.0f} / {loop_cpu - peer_cpu:.0f} µs"
    print(f"| loop's own cost per turn (yiem − peer), wall / CPU | {own} | | |")
    with_cpu, bare_cpu = per_turn(with_runs, 1), per_turn(bare_runs, 1)
    spans_cpu = with_cpu - bare_cpu
    print(
        f"| CPU µs per turn with spans / without (median of {SPAN_PAIRS}) | {with_cpu:.0f} | "
        f"{bare_cpu:.0f} | "
        f"{with_cpu / bare_cpu:.3f} × |"
    )
    share = spans_cpu / (bare_cpu - peer_cpu) * 100
    print(f"| spans' share of the loop's own CPU cost per turn | {spans_cpu:.1f} µs | | {share:.1f} % |")
    alone = statistics.median(span_work_us() for _ in range(5))
    own = loop_cpu - peer_cpu
    print(
        f"| one turn's span recording alone, CPU µs ÷ loop's own | {alone:.1f} | {own:.0f} | "
        f"{alone / own * 100:.1f} % |"
    )
    print(
        f"| 8 tools × 200 ms, wall (median of 3) | parallel {parallel * 1000:.0f} ms | "
        f"sequential {sequential * 1000:.0f} ms | {sequential / parallel:.2f} × |"
    )
    print(
        f"| ÷ one tool (200 ms) | parallel {parallel / 0.2:.2f} × | sequential {sequential / 0.2:.2f} × | |"
    )


if __name__ == "__main__":
    main()
