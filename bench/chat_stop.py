"""Benchmark of reading a run through `BackgroundEvents` (what the Chat page does for Stop).

Run: `.venv/bin/python bench/chat_stop.py`. Prints a Markdown table for docs/benchmarks.md.

1. Hand-off cost: µs per event of a 300-turn run (ScriptedLlm, a no-op tool) read through
   `BackgroundEvents`, next to the peer: the same run read directly.
2. Stop latency with a tool that is silent for 2 s: a Stop is asked for 0.5-0.7 s into the tool;
   the reader aborts the agent at its next wake-up and reads the run to its end. The peer reads the
   events directly, so it wakes only when the tool returns.
3. The same on the real Chat page under Streamlit's AppTest (press, as the browser's Stop button
   does, to the end of the script run); no peer, the page before this change waited for the tool.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from time import perf_counter
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from yiem.agent import Agent  # noqa: E402
from yiem.chat import BackgroundEvents, Quiet  # noqa: E402
from yiem.scripted_llm import ScriptedLlm  # noqa: E402
from yiem.types import AbortSignal, AgentTool, LlmModel  # noqa: E402

MODEL = LlmModel(id="bench", provider="bench")
TURNS = 300
REPEATS = 5
TOOL_SECONDS = 2.0
PRESS_AFTER = 0.5


def _noop(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal | None = None) -> str:
    return "ok"


def _long_run() -> Agent:
    script: list[Any] = [
        {"toolCalls": [{"id": f"c{turn}", "name": "noop", "arguments": {}}]} for turn in range(TURNS - 1)
    ]
    script.append("done")
    return Agent(ScriptedLlm(script, chunk_size=64), MODEL, tools=[AgentTool(name="noop", execute=_noop)])


def _per_event(read: Callable[[Iterator[Any]], Iterator[Any]]) -> float:
    agent = _long_run()
    started = perf_counter()
    count = sum(1 for item in read(agent.prompt("go")) if not isinstance(item, Quiet))
    return (perf_counter() - started) / count * 1e6


def _stop_latency(read: Callable[[Iterator[Any]], Iterator[Any]], after: float) -> float:
    pressed: dict[str, float] = {}

    def silent(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal | None = None) -> str:
        assert signal is not None
        signal.wait(after)
        pressed["at"] = perf_counter()
        signal.wait(TOOL_SECONDS - after)
        return "finished"

    llm = ScriptedLlm([{"toolCalls": [{"id": "c", "name": "silent", "arguments": {}}]}, "ok"])
    agent = Agent(llm, MODEL, tools=[AgentTool(name="silent", execute=silent)])
    for _item in read(agent.prompt("go")):
        if "at" in pressed:  # the reader is awake and sees the Stop: abort, then read to the end
            agent.abort("Stopped by the user")
    return perf_counter() - pressed["at"]


def _direct(events: Iterator[Any]) -> Iterator[Any]:
    return events


def _background(events: Iterator[Any]) -> Iterator[Any]:
    return BackgroundEvents(events, interval=0.25)


def _page_stop_latency(runs: int) -> list[float]:
    folder = tempfile.mkdtemp()
    os.environ["YIEM_DATABASE_URL"] = f"sqlite:///{folder}/bench.db"
    os.environ["YIEM_MCP_CONFIG"] = f"{folder}/no-mcp.json"
    os.chdir(ROOT)
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx
    from streamlit.testing.v1 import AppTest

    from ui.chat import agent as chat_agent
    from yiem.tool_registry import ToolRegistry

    run: dict[str, Any] = {}
    prepare = chat_agent.prepare

    def remember_the_run() -> Any:
        ctx = get_script_run_ctx()
        assert ctx is not None
        run["requests"] = ctx.script_requests
        return prepare()

    chat_agent.prepare = remember_the_run  # type: ignore[assignment]
    latencies: list[float] = []
    for index in range(runs):
        pressed: dict[str, float] = {}
        # Different phases of the page's 0.25 s tick.
        registry = ToolRegistry()
        registry.add_tool(
            AgentTool(name="silent", execute=_pressing_tool(PRESS_AFTER + 0.07 * index, run, pressed))
        )
        llm = ScriptedLlm([{"toolCalls": [{"id": "c", "name": "silent", "arguments": {}}]}])
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
        at.session_state["llm_override"] = (llm, MODEL)
        at.session_state["tool_registry"] = registry
        at.session_state["mcp_clients"] = {}
        at.session_state["mcp_errors"] = {}
        at.session_state["enabled_tools"] = {"silent"}
        at.run()
        at.chat_input[0].set_value("go").run()
        latencies.append(perf_counter() - pressed["at"])
    return latencies


def _pressing_tool(after: float, run: dict[str, Any], pressed: dict[str, float]) -> Callable[..., str]:
    def silent(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal | None = None) -> str:
        assert signal is not None
        signal.wait(after)
        pressed["at"] = perf_counter()
        run["requests"].request_stop()  # what the browser's Stop button asks for
        signal.wait(120)
        return "finished"

    return silent


def _median(measure: Callable[[int], float]) -> float:
    return statistics.median(measure(repeat) for repeat in range(REPEATS))


def main() -> None:
    handoff = _median(lambda _: _per_event(_background))
    handoff_peer = _median(lambda _: _per_event(_direct))
    # The Stop lands at a different phase of the 0.25 s wake-up in each repeat.
    stop = _median(lambda repeat: _stop_latency(_background, PRESS_AFTER + 0.05 * repeat))
    stop_peer = _median(lambda repeat: _stop_latency(_direct, PRESS_AFTER + 0.05 * repeat))
    page = statistics.median(_page_stop_latency(REPEATS * 2))
    print("| measure | BackgroundEvents | peer: direct read | ratio |")
    print("|---|---|---|---|")
    ratio = handoff / handoff_peer
    print(f"| µs per event, {TURNS}-turn run | {handoff:.1f} | {handoff_peer:.1f} | {ratio:.2f} |")
    print(
        f"| s from Stop to the run's end, tool silent for {TOOL_SECONDS:g} s | {stop:.3f} | "
        f"{stop_peer:.3f} | {stop / stop_peer:.2g} |"
    )
    print(f"| s from Stop to the end of the Chat page's run (AppTest) | {page:.3f} | (waits for the tool) ||")
    print(f"\nmedians of {REPEATS} runs ({REPEATS * 2} for the page)")


if __name__ == "__main__":
    threading.current_thread().name = "bench"
    main()
