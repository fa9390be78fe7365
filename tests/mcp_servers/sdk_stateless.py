"""A 2026-07-28 server written with the official MCP Python SDK 2.3 (PyPI `mcp`), stateless.

`python tests/mcp_servers/sdk_stateless.py stdio` serves it over stdio;
`python tests/mcp_servers/sdk_stateless.py http PORT` over stateless Streamable HTTP on
127.0.0.1:PORT/mcp. Tools: `add`, `greet` (asks the person's name: an elicitation), `ask_model`
(asks the client's model: sampling) and `set_note`, which changes the resource `note://today`
and tells its `subscriptions/listen` subscribers. `tools/list` may be cached for 60 s.
The server stops when its parent process (the test) ends.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Annotated

from mcp.server.caching import CacheHint
from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve, Sample
from mcp_types import CreateMessageResult, SamplingMessage, TextContent
from pydantic import BaseModel

NOTE_URI = "note://today"
TOOLS_TTL_MS = 60_000

server = MCPServer(
    "yiem-sdk-stateless",
    version="1.0.0",
    instructions="A test server of yiem's, on the official SDK.",
    cache_hints={"tools/list": CacheHint(ttl_ms=TOOLS_TTL_MS)},
)
_note = ["nothing yet"]


class Name(BaseModel):
    full_name: str


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


def ask_for_words() -> Sample:
    question = SamplingMessage(
        role="user", content=TextContent(type="text", text="Say hello in three words.")
    )
    return Sample([question], max_tokens=50)


@server.tool()
def add(a: int, b: int) -> str:
    """Add two numbers."""
    return str(a + b)


@server.tool()
def greet(name: Annotated[Name, Resolve(ask_name)]) -> str:
    """Greet the person, asking their name first."""
    return f"Hello, {name.full_name}!"


@server.tool()
def ask_model(reply: Annotated[CreateMessageResult, Resolve(ask_for_words)]) -> str:
    """Ask the client's model for three words."""
    text = reply.content.text if isinstance(reply.content, TextContent) else str(reply.content)
    return f"The model said: {text}"


@server.tool()
async def set_note(text: str, ctx: Context) -> str:
    """Change today's note; subscribers hear of it."""
    _note[0] = text
    await ctx.notify_resource_updated(NOTE_URI)
    return "noted"


@server.resource(NOTE_URI)
def note() -> str:
    """Today's note."""
    return _note[0]


def _stop_with_parent() -> None:
    parent = os.getppid()
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(0)


def main() -> None:
    threading.Thread(target=_stop_with_parent, daemon=True).start()
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]), stateless_http=True)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
