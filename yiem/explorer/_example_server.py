"""The example MCP server offered on an empty Tools page: the mcp-server-time that `make run` installs."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from yiem.mcp.config import StdioServerConfig

# scripts/run_app.sh installs mcp-server-time (cached under ~/.cache/yiem, keyed by version) and names
# its command here; an app started another way offers no example unless this is set.
EXAMPLE_SERVER_VARIABLE = "YIEM_EXAMPLE_MCP_SERVER"


class ExampleServer(BaseModel):
    """A server to try with one click: its name on the page, what it does, and how to start it."""

    model_config = ConfigDict(frozen=True)

    name: str
    package: str
    description: str
    entry: StdioServerConfig


def example_server(environ: Mapping[str, str] | None = None) -> ExampleServer | None:
    """The installed example server, or None when its command is not there (nothing to offer)."""
    command = (os.environ if environ is None else environ).get(EXAMPLE_SERVER_VARIABLE, "").strip()
    if not command or not Path(command).is_file() or not os.access(command, os.X_OK):
        return None
    return ExampleServer(
        name="time",
        package="mcp-server-time",
        description="tells the time in any timezone and converts times between timezones",
        entry=StdioServerConfig(command=command),
    )
