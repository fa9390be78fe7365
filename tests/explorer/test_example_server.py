"""The example server offered on an empty Tools page: there only when `make run` installed it."""

from __future__ import annotations

from pathlib import Path

from tests.fixtures.mcp import time_server_command
from yiem.explorer import EXAMPLE_SERVER_VARIABLE, example_server
from yiem.mcp import McpClient
from yiem.mcp.config import connect_server


def test_no_example_is_offered_unless_its_command_is_installed(tmp_path: Path) -> None:
    assert example_server({}) is None
    assert example_server({EXAMPLE_SERVER_VARIABLE: str(tmp_path / "missing")}) is None
    not_executable = tmp_path / "mcp-server-time"
    not_executable.write_text("#!/bin/sh\n")
    assert example_server({EXAMPLE_SERVER_VARIABLE: str(not_executable)}) is None


def test_the_installed_example_connects_and_tells_the_time() -> None:
    example = example_server({EXAMPLE_SERVER_VARIABLE: time_server_command()})
    assert example is not None and example.name == "time" and example.package == "mcp-server-time"
    client: McpClient = connect_server(example.name, example.entry)
    with client:
        assert "get_current_time" in [tool.name for tool in client.list_tools()]
        answer = client.call_tool("get_current_time", {"timezone": "UTC"})
        assert not answer.is_error and '"timezone": "UTC"' in answer.text
