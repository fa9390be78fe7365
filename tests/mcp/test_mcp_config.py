"""mcp.json: the `mcpServers` format, `${VAR}` expansion, errors naming entry and field, saving back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.mcp import StdioServer
from yiem.mcp import (
    HttpServerConfig,
    McpConfig,
    McpConfigError,
    StdioServerConfig,
    connect_server,
    literal_entry,
    load_mcp_config,
    parse_mcp_config,
    parse_server_entry,
    resolve_server,
    save_mcp_config,
)
from yiem.mcp.config import expand_vars

CLAUDE_DESKTOP = {
    "mcpServers": {
        "everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]},
        "github": {
            "type": "http",
            "url": "https://api.example.com/mcp",
            "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"},
        },
        "memory": {"command": "mcp-server-memory", "env": {"MEMORY_FILE_PATH": "${HOME}/memory.jsonl"}},
        "legacy": {"type": "streamable-http", "url": "http://127.0.0.1:3001/mcp", "disabled": True},
    }
}


def test_reads_the_claude_desktop_format(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(CLAUDE_DESKTOP))
    config = load_mcp_config(path)
    assert list(config.servers) == ["everything", "github", "memory", "legacy"]
    everything = config.servers["everything"]
    assert isinstance(everything, StdioServerConfig)
    assert everything.args == ["-y", "@modelcontextprotocol/server-everything"]
    github = config.servers["github"]
    assert isinstance(github, HttpServerConfig)
    assert github.headers["Authorization"] == "Bearer ${GITHUB_TOKEN}"  # expanded only on use
    assert config.servers["legacy"].type == "streamable-http"
    assert config.allow_stdio_from_ui is False


def test_missing_file_is_empty(tmp_path: Path) -> None:
    assert load_mcp_config(tmp_path / "nope.json").servers == {}


def test_vars_are_expanded_from_the_environment() -> None:
    config = parse_mcp_config(CLAUDE_DESKTOP)
    github = resolve_server("github", config.servers["github"], {"GITHUB_TOKEN": "t0k"})
    assert isinstance(github, HttpServerConfig)
    assert github.headers == {"Authorization": "Bearer t0k"}
    memory = resolve_server("memory", config.servers["memory"], {"HOME": "/home/ada"})
    assert isinstance(memory, StdioServerConfig)
    assert memory.env == {"MEMORY_FILE_PATH": "/home/ada/memory.jsonl"}


def test_var_default() -> None:
    entry = parse_mcp_config({"mcpServers": {"x": {"url": "http://127.0.0.1:${PORT:-3001}/mcp"}}}).servers[
        "x"
    ]
    resolved = resolve_server("x", entry, {})
    assert isinstance(resolved, HttpServerConfig)
    assert resolved.url == "http://127.0.0.1:3001/mcp"


def test_unset_var_names_entry_field_and_variable() -> None:
    config = parse_mcp_config(CLAUDE_DESKTOP)
    with pytest.raises(McpConfigError) as caught:
        resolve_server("github", config.servers["github"], {})
    message = str(caught.value)
    assert "'github'" in message and "headers.Authorization" in message and "GITHUB_TOKEN" in message


@pytest.mark.parametrize(
    ("servers", "expected"),
    [
        ({"a": {"command": "x", "args": "not-a-list"}}, ["'a'", "'args'"]),
        ({"b": {"url": "ftp://nope"}}, ["'b'", "'url'"]),
        ({"c": {"args": ["x"]}}, ["'c'", "'command'", "'url'"]),
        ({"e": {"type": "websocket", "url": "ws://x"}}, ["'e'", "'type'"]),
        ({"f": {"command": "x", "env": {"A": 1}}}, ["'f'", "env.A"]),
        ({"g": "npx"}, ["'g'"]),
    ],
)
def test_bad_entries_name_entry_and_field(servers: dict[str, object], expected: list[str]) -> None:
    with pytest.raises(McpConfigError) as caught:
        parse_mcp_config({"mcpServers": servers}, "mcp.json")
    for part in expected:
        assert part in str(caught.value)


def test_bad_json_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{"mcpServers": {')
    with pytest.raises(McpConfigError, match=r"mcp\.json is not valid JSON"):
        load_mcp_config(path)


def test_save_round_trips_and_keeps_unknown_fields(tmp_path: Path) -> None:
    source = {**CLAUDE_DESKTOP, "otherTool": {"keep": True}}
    config = parse_mcp_config(source)
    path = tmp_path / "sub" / "mcp.json"
    save_mcp_config(path, config)
    saved = json.loads(path.read_text())
    assert saved["otherTool"] == {"keep": True}
    assert saved["mcpServers"]["github"]["headers"]["Authorization"] == "Bearer ${GITHUB_TOKEN}"
    assert saved["mcpServers"]["legacy"]["disabled"] is True
    assert load_mcp_config(path) == config
    assert list(tmp_path.joinpath("sub").iterdir()) == [path]  # no temp file left behind


def test_save_added_entry_and_flag(tmp_path: Path) -> None:
    config = McpConfig(allow_stdio_from_ui=True)
    config.servers["time"] = StdioServerConfig(command="mcp-server-time", args=["--local-timezone", "UTC"])
    config.servers["remote"] = HttpServerConfig(url="https://example.com/mcp")
    path = tmp_path / "mcp.json"
    save_mcp_config(path, config)
    assert json.loads(path.read_text()) == {
        "mcpServers": {
            "time": {"command": "mcp-server-time", "args": ["--local-timezone", "UTC"]},
            "remote": {"type": "http", "url": "https://example.com/mcp"},
        },
        "allow_stdio_from_ui": True,
    }
    assert load_mcp_config(path).allow_stdio_from_ui is True


def test_connect_server_from_config(time_stdio: StdioServer, everything_http_url: str) -> None:
    config = parse_mcp_config(
        {
            "mcpServers": {
                "time": {"command": "${TIME_BIN}", "args": list(time_stdio.args)},
                "everything": {"type": "http", "url": "${EVERYTHING_URL}"},
            }
        }
    )
    environ = {"TIME_BIN": time_stdio.command, "EVERYTHING_URL": everything_http_url}
    with connect_server("time", config.servers["time"], environ) as client:
        assert client.server_info.name == "mcp-time"
    with connect_server("everything", config.servers["everything"], environ) as client:
        assert client.call_tool("get-sum", {"a": 1, "b": 1}).text == "The sum of 1 and 1 is 2."


def test_config_errors_are_mcp_errors_under_yiem_error(tmp_path: Path) -> None:
    """One family: a bad mcp.json is caught as McpError and as YiemError, its message without a code."""
    from yiem.errors import YiemError
    from yiem.mcp import McpError

    bad = tmp_path / "mcp.json"
    bad.write_text("{not json")
    with pytest.raises(McpConfigError) as caught:
        load_mcp_config(bad)
    assert isinstance(caught.value, McpError) and isinstance(caught.value, YiemError)
    assert "code" not in str(caught.value) and "not valid JSON" in str(caught.value)


def test_roots_from_mcp_json_reach_the_server(tmp_path: Path, everything_stdio: StdioServer) -> None:
    """An admin's `roots` folders go to the server as file:// roots; none declared means an empty list."""
    reports = tmp_path / "reports"
    reports.mkdir()
    config_file = tmp_path / "mcp.json"
    entry = {"command": everything_stdio.command, "args": list(everything_stdio.args)}
    config_file.write_text(
        json.dumps({"mcpServers": {"with": {**entry, "roots": [str(reports)]}, "without": entry}})
    )
    config = load_mcp_config(config_file)
    with connect_server("with", config.servers["with"]) as client:
        client.list_tools()
        text = client.call_tool("get-roots-list").text
    assert reports.as_uri() in text and "reports" in text
    with connect_server("without", config.servers["without"]) as client:
        client.list_tools()
        assert "no roots are currently configured" in client.call_tool("get-roots-list").text
    save_mcp_config(config_file, config)
    assert json.loads(config_file.read_text())["mcpServers"]["with"]["roots"] == [str(reports)]


def test_an_escaped_variable_stays_literal_and_a_typed_entry_saves_escaped(tmp_path: Path) -> None:
    assert expand_vars("$${HOME} and ${HOME}", "f", {"HOME": "/h"}) == "${HOME} and /h"
    typed = parse_server_entry("t", {"url": "http://x/${TOKEN}", "headers": {"A": "$${B} ${C}"}})
    path = tmp_path / "mcp.json"
    save_mcp_config(path, McpConfig(servers={"t": literal_entry(typed)}))
    resolved: Any = resolve_server(
        "t", load_mcp_config(path).servers["t"], {"TOKEN": "x", "B": "y", "C": "z"}
    )
    assert resolved.url == "http://x/${TOKEN}" and resolved.headers == {"A": "$${B} ${C}"}


def test_a_client_registered_beforehand_for_sign_in_keeps_its_secret_in_the_environment() -> None:
    from yiem.redaction import redact

    config = parse_mcp_config(
        {
            "mcpServers": {
                "hosted": {
                    "url": "https://mcp.example/mcp",
                    "oauth_client_id": "yiem-team",
                    "oauth_client_secret": "${HOSTED_CLIENT_SECRET}",
                }
            }
        }
    )
    entry = config.servers["hosted"]
    resolved = resolve_server("hosted", entry, {"HOSTED_CLIENT_SECRET": "client-secret-0123456789"})
    assert isinstance(resolved, HttpServerConfig)
    assert (resolved.oauth_client_id, resolved.oauth_client_secret) == (
        "yiem-team",
        "client-secret-0123456789",
    )
    assert "client-secret-0123456789" not in redact("it said client-secret-0123456789")
