"""yiem's saved-checks runner against the official `mcp` SDK client in a loop, same server, same run.

A collection of 1,000 saved calls to mcp-server-time (`get_current_time` and `convert_time`, each
with three assertions: not an error, matches the tool's output schema, a JSONPath exists) runs
through `run_collection`, connect and close included; the SDK client opens a session to the same
server and makes the same 1,000 calls in a loop, checking only `is_error`. Rounds alternate;
reports each round's pair, the median of each and their ratio (the goal: the runner at most 1.2x the
SDK loop), and the median and range of the per-round ratios.

    .venv/bin/python bench/checks.py [--calls 1000] [--rounds 5] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path = [entry for entry in sys.path if Path(entry or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT))

import anyio.from_thread  # noqa: E402
import mcp  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from tests.fixtures.mcp import time_server_command  # noqa: E402
from yiem.checks import Assertion, AssertionKind, Collection, SavedCall, run_collection  # noqa: E402

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get_current_time", {"timezone": "Europe/Oslo"}),
    ("convert_time", {"source_timezone": "Asia/Bangkok", "time": "12:30", "target_timezone": "America/Lima"}),
]


def collection(count: int, command: str) -> Collection:
    """`count` saved calls, alternating the server's two tools, each with two assertions."""
    calls = []
    for index in range(count):
        tool, arguments = CALLS[index % len(CALLS)]
        calls.append(
            SavedCall(
                name=f"{tool}-{index}",
                server="time",
                tool=tool,
                arguments=arguments,
                assertions=[
                    Assertion(kind=AssertionKind.NOT_ERROR),
                    Assertion(kind=AssertionKind.MATCHES_OUTPUT_SCHEMA),
                    Assertion(kind=AssertionKind.JSONPATH_EXISTS, path="$.content[0].text"),
                ],
            )
        )
    return Collection(name="time-bench", servers={"time": {"command": command, "args": []}}, calls=calls)


def run_yiem(checks: Collection) -> float:
    started = time.perf_counter()
    run = run_collection(checks)
    elapsed = time.perf_counter() - started
    assert run.failed == 0, [o.failures for o in run.outcomes if not o.passed][:3]
    return elapsed


def run_sdk(checks: Collection, command: str) -> float:
    started = time.perf_counter()
    with open(os.devnull, "w") as devnull, anyio.from_thread.start_blocking_portal() as portal:
        params = mcp.StdioServerParameters(command=command, args=[])
        client = mcp.Client(stdio_client(params, errlog=devnull), mode="legacy")
        with portal.wrap_async_context_manager(client):
            portal.call(client.list_tools)
            for call in checks.calls:
                result = portal.call(client.call_tool, call.tool, dict(call.arguments))
                assert not result.is_error
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="cProfile one yiem run (top 25, cumulative)")
    args = parser.parse_args()
    command = time_server_command()
    checks = collection(args.calls, command)
    if args.profile:
        profile = cProfile.Profile()
        profile.runcall(run_collection, checks)
        pstats.Stats(profile).sort_stats("cumulative").print_stats(25)
        return
    yiem_s: list[float] = []
    sdk_s: list[float] = []
    run_yiem(collection(20, command))  # warm both: imports, the server's first start
    run_sdk(collection(20, command), command)
    for index in range(args.rounds):
        yiem_s.append(run_yiem(checks))
        sdk_s.append(run_sdk(checks, command))
        # Each round's pair, so a load that moved between rounds shows (the SDK's median once moved
        # 7.3 -> 13.9 s between two runs minutes apart, on a shared 2-core machine).
        ratio = yiem_s[-1] / sdk_s[-1]
        print(f"  round {index + 1}: yiem {yiem_s[-1]:7.3f} s  SDK {sdk_s[-1]:7.3f} s  {ratio:.2f}x")
    yiem_median, sdk_median = statistics.median(yiem_s), statistics.median(sdk_s)
    paired = sorted(y / s for y, s in zip(yiem_s, sdk_s, strict=True))
    print(f"{args.calls} saved calls to mcp-server-time over stdio, {args.rounds} rounds each, medians:")
    print(f"  yiem checks runner   {yiem_median:7.3f} s  ({yiem_median / args.calls * 1000:.3f} ms/call)")
    print(f"  mcp SDK client loop  {sdk_median:7.3f} s  ({sdk_median / args.calls * 1000:.3f} ms/call)")
    print(f"  ratio yiem/SDK       {yiem_median / sdk_median:7.2f}x  (goal <= 1.2x)")
    spread = f"{paired[0]:.2f}-{paired[-1]:.2f}x"
    print(f"  per-round ratios     {statistics.median(paired):7.2f}x median, {spread} range")


if __name__ == "__main__":
    main()
