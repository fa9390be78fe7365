"""Fixtures of the experiments tests: a tool registry on the real mcp-server-time."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fixtures.mcp import StdioServer
from yiem.mcp import McpClient
from yiem.tool_registry import ToolRegistry


@pytest.fixture
def time_registry(time_stdio: StdioServer) -> Iterator[ToolRegistry]:
    client = McpClient.stdio(time_stdio.command, time_stdio.args)
    registry = ToolRegistry()
    registry.add_mcp_server("time", client)
    try:
        yield registry
    finally:
        client.close()
