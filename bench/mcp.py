"""yiem's McpClient against the official `mcp` SDK client, same servers, same run.

Round trips of server-everything's `get-sum` over stdio and Streamable HTTP (protocol 2025-11-25,
which yiem reaches after its 2026-07-28 probe is refused), of the stateless SDK 2.3 test server's
`add` (protocol 2026-07-28, the SDK client in `mode="auto"`), connect time (process start or HTTP
session plus the negotiation), and import time. The SDK is
async only, so it is driven from sync code through an anyio blocking portal, as a sync
program would have to. Reports medians and yiem/SDK ratios (below 1 means yiem is faster).

    .venv/bin/python bench/mcp.py [--calls 500] [--connects 5]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# This file is named mcp.py: its folder must not shadow the SDK package of the same name.
sys.path = [entry for entry in sys.path if Path(entry or ".").resolve() != ROOT / "bench"]
sys.path.insert(0, str(ROOT))

import anyio.from_thread  # noqa: E402
import httpx  # noqa: E402
import mcp  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from tests.fixtures.mcp import NODE_BIN, free_port, loopback_node_env, stop_process, wait_for_port  # noqa: E402
from yiem.mcp import McpClient  # noqa: E402

EVERYTHING = str(NODE_BIN / "mcp-server-everything")
SDK_SERVER = str(ROOT / "tests" / "mcp_servers" / "sdk_stateless.py")
ARGS = {"a": 2, "b": 3}
Call = Callable[[], Any]


@dataclass(frozen=True)
class Target:
    """A server to call: how to start it over stdio, its HTTP URL, its sum tool, the SDK's mode."""

    revision: str
    command: list[str]
    tool: str
    answer: str
    sdk_mode: str
    url: str = ""


@contextmanager
def yiem_session(target: Target, transport: str) -> Iterator[Call]:
    if transport == "stdio":
        client = McpClient.stdio(target.command[0], target.command[1:], init_timeout=60)
    else:
        client = McpClient.http(target.url)
    with client:
        assert client.protocol_version == target.revision, client.protocol_version
        yield lambda: client.call_tool(target.tool, ARGS)


@contextmanager
def sdk_session(target: Target, transport: str) -> Iterator[Call]:
    with open(os.devnull, "w") as devnull, anyio.from_thread.start_blocking_portal() as portal:
        server: Any = target.url
        if transport == "stdio":
            # Like yiem, the server's stderr is kept out of the terminal.
            params = mcp.StdioServerParameters(command=target.command[0], args=target.command[1:])
            server = stdio_client(params, errlog=devnull)
        client = mcp.Client(server, mode=target.sdk_mode)
        with portal.wrap_async_context_manager(client):
            yield lambda: portal.call(client.call_tool, target.tool, ARGS)


_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


@contextmanager
def bare_session(target: Target, transport: str) -> Iterator[Call]:
    """The same 2026-07-28 request written and read with nothing in between: the server's own time.

    No client can be faster than this, so it bounds the ratio any client can reach against the SDK."""
    body = {"name": target.tool, "arguments": ARGS, "_meta": _META}
    if transport == "http":
        headers = {
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/call",
            "Mcp-Name": target.tool,
        }
        with httpx.Client(headers=headers) as http:
            message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": body}
            yield lambda: http.post(target.url, json=message).text
        return
    server = subprocess.Popen(
        target.command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    assert server.stdin is not None and server.stdout is not None
    ids = iter(range(1, 1 << 30))

    def call() -> str:
        assert server.stdin is not None and server.stdout is not None
        message = {"jsonrpc": "2.0", "id": next(ids), "method": "tools/call", "params": body}
        server.stdin.write(json.dumps(message).encode() + b"\n")
        server.stdin.flush()
        return server.stdout.readline().decode()

    try:
        yield call
    finally:
        stop_process(server)


def measure_connect(
    session: Callable[[Target, str], AbstractContextManager[Call]], target: Target, transport: str
) -> float:
    started = time.perf_counter()
    with session(target, transport) as call:
        call()  # connected and answering
        elapsed = time.perf_counter() - started
    return elapsed


def measure_calls(target: Target, transport: str, calls: int, block: int = 25) -> dict[str, list[float]]:
    """The clients open at once, calling in alternating blocks, so load on the machine hits them alike."""
    sessions = {"yiem": yiem_session, "sdk": sdk_session}
    if target.revision == "2026-07-28":  # stateless: a bare request needs no handshake
        sessions["bare"] = bare_session
    times: dict[str, list[float]] = {name: [] for name in sessions}
    with contextlib.ExitStack() as stack:
        callers = {
            name: stack.enter_context(open_session(target, transport))
            for name, open_session in sessions.items()
        }
        for call in callers.values():
            for _ in range(20):  # warm-up: node's JIT, connection pools
                call()
        for start in range(0, calls, block):
            for name, call in callers.items():
                for _ in range(min(block, calls - start)):
                    started = time.perf_counter()
                    result = call()
                    times[name].append(time.perf_counter() - started)
                    assert target.answer in str(result), result
    return times


def import_time(module: str, runs: int) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", f"import {module}"], check=True, cwd=ROOT)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--connects", type=int, default=5)
    options = parser.parse_args()
    if not Path(EVERYTHING).exists():
        sys.exit(f"{EVERYTHING} is missing: run `make setup-test` first")

    port, sdk_port = free_port(), free_port()
    server = subprocess.Popen(
        [EVERYTHING, "streamableHttp"],
        env={**os.environ, **loopback_node_env(), "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    sdk_server = subprocess.Popen(
        [sys.executable, SDK_SERVER, "http", str(sdk_port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    targets = [
        Target(
            "2025-11-25", [EVERYTHING, "stdio"], "get-sum", "is 5", "legacy", f"http://127.0.0.1:{port}/mcp"
        ),
        Target(
            "2026-07-28",
            [sys.executable, SDK_SERVER, "stdio"],
            "add",
            "5",
            "auto",
            f"http://127.0.0.1:{sdk_port}/mcp",
        ),
    ]
    rows = []
    try:
        wait_for_port(port, server)
        wait_for_port(sdk_port, sdk_server, timeout=60)
        for target, transport in [(t, tr) for t in targets for tr in ("stdio", "http")]:
            connect: dict[str, list[float]] = {"yiem": [], "sdk": []}
            for _ in range(options.connects):  # alternated, so drift hits both alike
                connect["yiem"].append(measure_connect(yiem_session, target, transport))
                connect["sdk"].append(measure_connect(sdk_session, target, transport))
            latency = {
                name: statistics.median(samples)
                for name, samples in measure_calls(target, transport, options.calls).items()
            }
            rows.append(
                (
                    f"{target.revision} {transport}",
                    latency["yiem"],
                    latency["sdk"],
                    statistics.median(connect["yiem"]),
                    statistics.median(connect["sdk"]),
                    latency.get("bare"),
                )
            )
    finally:
        stop_process(server)
        stop_process(sdk_server)

    print(f"{options.calls} tools/call round trips, {options.connects} connects; medians")
    print("| revision and transport | yiem call | SDK call | ratio | yiem connect | SDK connect | ratio |")
    print("|---|---|---|---|---|---|---|")
    for transport, lat_y, lat_s, con_y, con_s, _ in rows:
        print(
            f"| {transport} | {lat_y * 1e3:.3f} ms | {lat_s * 1e3:.3f} ms | {lat_y / lat_s:.2f} "
            f"| {con_y * 1e3:.1f} ms | {con_s * 1e3:.1f} ms | {con_y / con_s:.2f} |"
        )
    print("\nThe server's own time: the same request with no client in between (bare pipe or POST)")
    print("| revision and transport | bare call | bare ÷ SDK | yiem ÷ bare |")
    print("|---|---|---|---|")
    for transport, lat_y, lat_s, _, _, lat_b in rows:
        if lat_b is not None:
            print(f"| {transport} | {lat_b * 1e3:.3f} ms | {lat_b / lat_s:.2f} | {lat_y / lat_b:.2f} |")
    bare = import_time("sys", options.connects)
    imp_y, imp_s = import_time("yiem.mcp", options.connects), import_time("mcp", options.connects)
    print(
        f"\nimport (python -c, {options.connects} runs, median; bare interpreter {bare * 1e3:.0f} ms): "
        f"yiem.mcp {imp_y * 1e3:.0f} ms, mcp {imp_s * 1e3:.0f} ms, ratio {imp_y / imp_s:.2f}; "
        f"without the interpreter: {(imp_y - bare) * 1e3:.0f} ms vs {(imp_s - bare) * 1e3:.0f} ms, "
        f"ratio {(imp_y - bare) / (imp_s - bare):.2f}"
    )


if __name__ == "__main__":
    main()
