"""yiem's McpClient against the official `mcp` SDK client, same servers, same run.

Round trips of server-everything's `get-sum` over stdio and Streamable HTTP (protocol 2025-11-25,
which yiem reaches after its 2026-07-28 probe is refused), and of an `add` tool at protocol
2026-07-28 (the SDK client in `mode="auto"`) on two servers of the SDK 2.3: the stateless test server
on its high-level `MCPServer` (tests/mcp_servers/sdk_stateless.py) and the same tool on its
low-level `Server` (bench/sdk_lowlevel_server.py), whose own time per call is smaller; the low-level
server and the official TypeScript SDK 2.0's `McpServer` on Node (bench/sdk_ts_server.mjs) serve
2025-11-25 as well (both clients held to the handshake there), for a lighter 2025 server. Every row
also sends the same request with no client in between (a bare pipe write and line read, or a bare
`httpx` POST; at 2025-11-25 after its own handshake): the server's own time, which bounds the
ratio any client can reach; over HTTP also the same POST on bare httpcore, the engine under httpx,
which yiem's POSTs use: the floor for a client inside httpx's family. Connect time (process start
or HTTP session plus the negotiation) and import time too. The SDK is async only, so it is driven
from sync code through an anyio blocking portal, as a sync program would have to. Reports medians
and yiem/SDK ratios (below 1 means yiem is faster), with the lowest and highest ratio of the rounds.

    .venv/bin/python bench/mcp.py [--calls 500] [--rounds 5] [--connects 5] [--only TEXT]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
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
import httpcore  # noqa: E402
import httpx  # noqa: E402
import mcp  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from tests.fixtures.mcp import NODE_BIN, loopback_node_env, stop_process, wait_for_port  # noqa: E402
from tests.fixtures.ports import free_ports  # noqa: E402
from yiem.mcp import McpClient  # noqa: E402
from yiem.mcp.http import HttpTransport  # noqa: E402
from yiem.mcp.stdio import StdioTransport  # noqa: E402

EVERYTHING = str(NODE_BIN / "mcp-server-everything")
SDK_SERVER = str(ROOT / "tests" / "mcp_servers" / "sdk_stateless.py")
LOWLEVEL_SERVER = str(ROOT / "bench" / "sdk_lowlevel_server.py")
TS_SERVER = [shutil.which("node") or "node", str(ROOT / "bench" / "sdk_ts_server.mjs"), str(NODE_BIN.parent)]
EVERYTHING_NAME = "server-everything (Node)"
TS_NAME = "TypeScript SDK McpServer (Node)"
ARGS = {"a": 2, "b": 3}
Call = Callable[[], Any]


@dataclass(frozen=True)
class Target:
    """A server to call: how to start it over stdio, its HTTP URL, its sum tool, the SDK's mode."""

    revision: str
    server: str  # how the tables name it
    command: list[str]
    tool: str
    answer: str
    sdk_mode: str
    url: str = ""
    # A server that speaks both revisions, held to 2025-11-25 for both clients.
    handshake_only: bool = False

    @property
    def stateless(self) -> bool:
        return self.revision == "2026-07-28"


@contextmanager
def yiem_session(target: Target, transport: str) -> Iterator[Call]:
    if target.handshake_only:
        # Held to the handshake as the SDK's mode="legacy" is: the transport skips the
        # 2026-07-28 probe, as yiem's HTTP+SSE transport always does.
        carrier: StdioTransport | HttpTransport = (
            StdioTransport(target.command[0], target.command[1:])
            if transport == "stdio"
            else HttpTransport(target.url)
        )
        carrier.stateless_capable = False
        client = McpClient(carrier, init_timeout=60).connect()
    elif transport == "stdio":
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
_INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "bench", "version": "1"},
}


def _rpc(request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


@contextmanager
def bare_session(target: Target, transport: str) -> Iterator[Call]:
    """The same request written and read with nothing in between: the server's own time.

    No client can be faster than this, so it bounds the ratio any client can reach against the SDK.
    At 2025-11-25 the handshake comes first, as for the clients."""
    body: dict[str, Any] = {"name": target.tool, "arguments": ARGS}
    if target.stateless:
        body["_meta"] = _META
    ids = iter(range(1, 1 << 30))
    if transport == "http":
        with bare_http(target, body, ids) as call:
            yield call
        return
    server = subprocess.Popen(
        target.command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    assert server.stdin is not None and server.stdout is not None
    stdin, stdout = server.stdin, server.stdout

    def exchange(message: dict[str, Any]) -> bytes:
        stdin.write(json.dumps(message).encode() + b"\n")
        stdin.flush()
        while True:  # a stateful server may send a notification first
            line = stdout.readline()
            if not line or json.loads(line).get("id") == message.get("id"):
                return line

    try:
        if not target.stateless:
            exchange(_rpc(next(ids), "initialize", _INITIALIZE))
            stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
            stdin.flush()
        yield lambda: exchange(_rpc(next(ids), "tools/call", body)).decode()
    finally:
        stop_process(server)


@contextmanager
def bare_http(target: Target, body: dict[str, Any], ids: Iterator[int]) -> Iterator[Call]:
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": target.revision}
    if target.stateless:
        headers |= {"Mcp-Method": "tools/call", "Mcp-Name": target.tool}
    with httpx.Client(headers=headers) as http:
        if not target.stateless:
            reply = http.post(target.url, json=_rpc(next(ids), "initialize", _INITIALIZE))
            session = reply.headers.get("mcp-session-id")
            if session:
                http.headers["Mcp-Session-Id"] = session
            http.post(target.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        yield lambda: http.post(target.url, json=_rpc(next(ids), "tools/call", body)).text


@contextmanager
def core_session(target: Target, transport: str) -> Iterator[Call]:
    """The bare POST on httpcore (httpx's engine), headers prebuilt: the floor inside httpx's family."""
    assert transport == "http"
    url = httpcore.URL(target.url)
    host = (b"Host", url.host + (f":{url.port}".encode() if url.port else b""))
    headers = [
        host,
        (b"Accept", b"application/json, text/event-stream"),
        (b"Content-Type", b"application/json"),
    ]
    headers.append((b"MCP-Protocol-Version", target.revision.encode()))
    if target.stateless:
        headers += [(b"Mcp-Method", b"tools/call"), (b"Mcp-Name", target.tool.encode())]
    body: dict[str, Any] = {"name": target.tool, "arguments": ARGS}
    if target.stateless:
        body["_meta"] = _META
    ids = iter(range(1, 1 << 30))
    with httpcore.ConnectionPool() as pool:

        def post(message: dict[str, Any]) -> httpcore.Response:
            content = json.dumps(message).encode()
            length = (b"Content-Length", str(len(content)).encode())
            return pool.request("POST", url, headers=[*headers, length], content=content)

        if not target.stateless:
            session = post(_rpc(next(ids), "initialize", _INITIALIZE)).headers
            for name, value in session:
                if name.lower() == b"mcp-session-id":
                    headers.append((b"Mcp-Session-Id", value))
            post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        yield lambda: post(_rpc(next(ids), "tools/call", body)).content.decode()


def measure_connect(
    session: Callable[[Target, str], AbstractContextManager[Call]], target: Target, transport: str
) -> float:
    started = time.perf_counter()
    with session(target, transport) as call:
        call()  # connected and answering
        elapsed = time.perf_counter() - started
    return elapsed


def measure_calls(
    target: Target, transport: str, calls: int, rounds: int, block: int = 25
) -> dict[str, list[list[float]]]:
    """The clients open at once, calling in alternating blocks, so load on the machine hits them alike.

    Each of `rounds` opens fresh sessions (over stdio, fresh server processes): on a loaded machine
    one process can stay unlucky for its whole life (its CPU, its threads' placement), and a new
    one per round spreads that luck over all the clients. Returns each client's times, by round."""
    sessions = {"yiem": yiem_session, "sdk": sdk_session, "bare": bare_session}
    if transport == "http":
        sessions["core"] = core_session
    times: dict[str, list[list[float]]] = {name: [] for name in sessions}
    per_round = -(-calls // rounds)
    for turn, first in enumerate(range(0, calls, per_round)):
        for samples in times.values():
            samples.append([])
        # Who goes first turns too, so no client always follows the same one.
        names = list(sessions)[turn % len(sessions) :] + list(sessions)[: turn % len(sessions)]
        with contextlib.ExitStack() as stack:
            callers = {name: stack.enter_context(sessions[name](target, transport)) for name in names}
            for call in callers.values():
                for _ in range(20):  # warm-up: node's JIT, connection pools
                    call()
            last = min(first + per_round, calls)
            for start in range(first, last, block):
                for name, call in callers.items():
                    for _ in range(min(block, last - start)):
                        started = time.perf_counter()
                        result = call()
                        times[name][-1].append(time.perf_counter() - started)
                        assert target.answer in str(result), result
    return times


def import_time(module: str, runs: int) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", f"import {module}"], check=True, cwd=ROOT)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def start_http(command: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--connects", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=5, help="fresh sessions this many times per row")
    parser.add_argument("--only", default="", help="run the rows whose name holds this text")
    options = parser.parse_args()
    if not Path(EVERYTHING).exists():
        sys.exit(f"{EVERYTHING} is missing: run `make setup-test` first")

    names = ("everything", "sdk", "lowlevel", "ts")
    ports = dict(zip(names, free_ports(len(names)), strict=True))
    servers = {
        "everything": start_http(
            [EVERYTHING, "streamableHttp"],
            {**os.environ, **loopback_node_env(), "PORT": str(ports["everything"])},
        ),
        "sdk": start_http([sys.executable, SDK_SERVER, "http", str(ports["sdk"])]),
        "lowlevel": start_http([sys.executable, LOWLEVEL_SERVER, "http", str(ports["lowlevel"])]),
        "ts": start_http([*TS_SERVER, "http", str(ports["ts"])]),
    }
    targets = [
        Target(
            "2025-11-25",
            EVERYTHING_NAME,
            [EVERYTHING, "stdio"],
            "get-sum",
            "is 5",
            "legacy",
            f"http://127.0.0.1:{ports['everything']}/mcp",
        ),
        Target(
            "2026-07-28",
            "SDK MCPServer",
            [sys.executable, SDK_SERVER, "stdio"],
            "add",
            "5",
            "auto",
            f"http://127.0.0.1:{ports['sdk']}/mcp",
        ),
        Target(
            "2025-11-25",
            "SDK low-level Server",
            [sys.executable, LOWLEVEL_SERVER, "stdio"],
            "add",
            "5",
            "legacy",
            f"http://127.0.0.1:{ports['lowlevel']}/mcp",
            handshake_only=True,
        ),
        Target(
            "2026-07-28",
            "SDK low-level Server",
            [sys.executable, LOWLEVEL_SERVER, "stdio"],
            "add",
            "5",
            "auto",
            f"http://127.0.0.1:{ports['lowlevel']}/mcp",
        ),
        Target(
            "2025-11-25",
            TS_NAME,
            [*TS_SERVER, "stdio"],
            "add",
            "5",
            "legacy",
            f"http://127.0.0.1:{ports['ts']}/mcp",
            handshake_only=True,
        ),
        Target(
            "2026-07-28",
            TS_NAME,
            [*TS_SERVER, "stdio"],
            "add",
            "5",
            "auto",
            f"http://127.0.0.1:{ports['ts']}/mcp",
        ),
    ]
    rows = []
    try:
        for name, process in servers.items():
            wait_for_port(ports[name], process, timeout=60)
        for target, transport in [(t, tr) for t in targets for tr in ("stdio", "http")]:
            label = f"{target.revision} {transport}, {target.server}"
            if options.only not in label:
                continue
            connect: dict[str, list[float]] = {"yiem": [], "sdk": []}
            for _ in range(options.connects):  # alternated, so drift hits both alike
                connect["yiem"].append(measure_connect(yiem_session, target, transport))
                connect["sdk"].append(measure_connect(sdk_session, target, transport))
            by_round = measure_calls(target, transport, options.calls, options.rounds)
            latency = {
                name: statistics.median(sample for each in rounds for sample in each)
                for name, rounds in by_round.items()
            }
            # The same ratio within each round of fresh sessions: how far one run's figure can stray.
            spread = [
                statistics.median(mine) / statistics.median(theirs)
                for mine, theirs in zip(by_round["yiem"], by_round["sdk"], strict=True)
            ]
            rows.append(
                (
                    label,
                    latency["yiem"],
                    latency["sdk"],
                    statistics.median(connect["yiem"]),
                    statistics.median(connect["sdk"]),
                    latency["bare"],
                    latency.get("core"),
                    (min(spread), max(spread)),
                )
            )
            print(f"({label} done, load average {os.getloadavg()[0]:.1f})", file=sys.stderr)
    finally:
        for process in servers.values():
            stop_process(process)

    print(
        f"{options.calls} tools/call round trips in {options.rounds} rounds of fresh sessions, "
        f"{options.connects} connects; medians"
    )
    print(
        "| revision, transport, server | yiem call | SDK call | ratio | ratio by round "
        "| yiem connect | SDK connect | ratio |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for label, lat_y, lat_s, con_y, con_s, _, _, (low, high) in rows:
        print(
            f"| {label} | {lat_y * 1e3:.3f} ms | {lat_s * 1e3:.3f} ms | {lat_y / lat_s:.2f} "
            f"| {low:.2f}–{high:.2f} | {con_y * 1e3:.1f} ms | {con_s * 1e3:.1f} ms | {con_y / con_s:.2f} |"
        )
    print("\nThe server's own time: the same request with no client in between (bare pipe or POST)")
    print(
        "| revision, transport, server | bare call | bare ÷ SDK | yiem ÷ bare "
        "| httpcore call | httpcore ÷ SDK | yiem ÷ httpcore |"
    )
    print("|---|---|---|---|---|---|---|")
    for label, lat_y, lat_s, _, _, lat_b, lat_c, _ in rows:
        core = f"{lat_c * 1e3:.3f} ms | {lat_c / lat_s:.2f} | {lat_y / lat_c:.2f}" if lat_c else "– | – | –"
        print(f"| {label} | {lat_b * 1e3:.3f} ms | {lat_b / lat_s:.2f} | {lat_y / lat_b:.2f} | {core} |")
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
