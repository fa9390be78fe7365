"""A 2026-07-28 server whose tools run as tasks through the tasks extension (SEP-2663), on FastMCP
with the `fastmcp-tasks` extension (PyPI, in its own cached venv: mcp_servers/pypi-servers.txt).

`python tests/mcp_servers/tasks_extension.py stdio` serves it over stdio; `... http PORT` over
Streamable HTTP on 127.0.0.1:PORT/mcp. Tools: `slow_add` (a task when the client opts in),
`report` (only ever a task), `greet_later` (a task that needs the person's name), `wait_forever`
(a task to cancel) and `fail_later` (a task that fails). The server stops with its parent.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from datetime import timedelta

import mcp_types
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension

# Short poll hints keep the tests quick; the server's default is 5 s.
POLL = timedelta(milliseconds=100)
OPTIONAL = TaskConfig(mode="optional", poll_interval=POLL)
REQUIRED = TaskConfig(mode="required", poll_interval=POLL)

server = FastMCP("yiem-fastmcp-tasks")
server.add_extension(TasksExtension())


@server.tool(task=OPTIONAL)
async def slow_add(a: int, b: int) -> int:
    """Add two numbers, slowly."""
    await asyncio.sleep(0.3)
    return a + b


@server.tool(task=REQUIRED)
async def report() -> str:
    """Write the daily report (runs only in the background)."""
    await asyncio.sleep(0.2)
    return "The report is ready."


@server.tool(task=REQUIRED)
async def greet_later(ctx: Context) -> str | mcp_types.InputRequiredResult:
    """Greet the person, asking their name while the task runs."""
    answers = ctx.input_responses
    if not answers or "name" not in answers:
        return mcp_types.InputRequiredResult.model_validate(
            {
                "resultType": "input_required",
                "inputRequests": {
                    "name": {
                        "method": "elicitation/create",
                        "params": {
                            "mode": "form",
                            "message": "What is your name?",
                            "requestedSchema": {
                                "type": "object",
                                "properties": {"full_name": {"type": "string"}},
                                "required": ["full_name"],
                            },
                        },
                    }
                },
            }
        )
    answer = answers["name"]
    content = answer.get("content") if isinstance(answer, dict) else getattr(answer, "content", None)
    name = (content or {}).get("full_name", "stranger")
    return f"Hello, {name}!"


@server.tool(task=REQUIRED)
async def wait_forever() -> str:
    """Never finishes on its own."""
    await asyncio.sleep(600)
    return "done"


@server.tool(task=REQUIRED)
async def fail_later() -> str:
    """Fails after a moment."""
    await asyncio.sleep(0.1)
    raise ToolError("the job broke")


def _stop_with_parent() -> None:
    parent = os.getppid()
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)


def main() -> None:
    threading.Thread(target=_stop_with_parent, daemon=True).start()
    if sys.argv[1:2] == ["http"]:
        server.run("http", host="127.0.0.1", port=int(sys.argv[2]), show_banner=False)
    else:
        server.run("stdio", show_banner=False)


if __name__ == "__main__":
    main()
