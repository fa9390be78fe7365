"""The `add` tool on the official MCP Python SDK 2.3's low-level server (`mcp.server.lowlevel.Server`).

A benchmark server, not a test one: the same protocol and transports as `tests/mcp_servers/sdk_stateless.py`
(2026-07-28 stateless, and 2025-11-25 through the SDK's handshake era), but without `MCPServer`'s
per-call machinery (argument models, context injection, result conversion), so less of each round trip
is the server's own time and more is the client's. `bench/mcp.py` runs both servers and says which row
used which.

    python bench/sdk_lowlevel_server.py stdio
    python bench/sdk_lowlevel_server.py http PORT    # stateless Streamable HTTP on 127.0.0.1:PORT/mcp
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

# Run as a script, this folder comes first on sys.path, and its mcp.py would shadow the SDK.
_HERE = Path(__file__).resolve().parent
sys.path = [entry for entry in sys.path if Path(entry or ".").resolve() != _HERE]

import anyio  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp.server.context import ServerRequestContext  # noqa: E402
from mcp.server.lowlevel import Server  # noqa: E402
from mcp.server.stdio import stdio_server  # noqa: E402

ADD = types.Tool(
    name="add",
    description="Add two numbers.",
    input_schema={
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)


async def list_tools(
    ctx: ServerRequestContext[object], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[ADD])


async def call_tool(
    ctx: ServerRequestContext[object], params: types.CallToolRequestParams
) -> types.CallToolResult:
    if params.name != "add":
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=f"no tool {params.name}")], is_error=True
        )
    arguments = params.arguments or {}
    total = int(arguments.get("a", 0)) + int(arguments.get("b", 0))
    return types.CallToolResult(content=[types.TextContent(type="text", text=str(total))])


server: Server[object] = Server(
    "yiem-bench-lowlevel", version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool
)


async def serve_stdio() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve_http(port: int) -> None:
    import uvicorn

    app = server.streamable_http_app(stateless_http=True, host="127.0.0.1")
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def _stop_with_parent() -> None:
    parent = os.getppid()
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)


def main() -> None:
    threading.Thread(target=_stop_with_parent, daemon=True).start()
    if sys.argv[1:2] == ["http"]:
        serve_http(int(sys.argv[2]))
    else:
        anyio.run(serve_stdio)


if __name__ == "__main__":
    main()
