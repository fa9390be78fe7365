"""The add-server form: typed text to mcp.json entries, and when typed commands may run."""

from __future__ import annotations

import pytest

from yiem.explorer import (
    ServerFormError,
    check_server_name,
    entry_summary,
    http_entry,
    stdio_entry,
    stdio_policy,
)
from yiem.identity import Owner
from yiem.mcp.config import HttpServerConfig, StdioServerConfig, parse_server_entry


@pytest.mark.parametrize("address", ["127.0.0.1", "localhost", "::1", "[::1]", "127.0.0.2"])
def test_typed_commands_run_on_a_loopback_app(address: str) -> None:
    policy = stdio_policy(address, allow_stdio_from_ui=False)
    assert policy.allowed and address in policy.reason


@pytest.mark.parametrize("address", [None, "", "0.0.0.0", "192.168.1.20", "::", "example.org"])
def test_typed_commands_are_refused_on_a_reachable_app(address: str | None) -> None:
    policy = stdio_policy(address, allow_stdio_from_ui=False)
    assert not policy.allowed
    assert "allow_stdio_from_ui: true" in policy.reason and "127.0.0.1" in policy.reason
    if not address:
        assert "every network address" in policy.reason


def test_the_config_flag_allows_typed_commands_anywhere() -> None:
    policy = stdio_policy("0.0.0.0", allow_stdio_from_ui=True)
    assert policy.allowed and "allow_stdio_from_ui" in policy.reason


def test_a_stdio_entry_splits_arguments_like_a_shell() -> None:
    entry = stdio_entry(
        " uvx ",
        "mcp-server-time --local-timezone 'Europe/Zurich' \"a b\"",
        "TZ=UTC\n# note\n\nTOKEN = x=y",
        "/tmp",
    )
    assert entry == {
        "command": "uvx",
        "args": ["mcp-server-time", "--local-timezone", "Europe/Zurich", "a b"],
        "env": {"TZ": "UTC", "TOKEN": "x=y"},
        "cwd": "/tmp",
    }
    assert isinstance(parse_server_entry("time", entry), StdioServerConfig)
    assert entry_summary(entry) == "uvx mcp-server-time --local-timezone Europe/Zurich 'a b'"


def test_an_http_entry_takes_headers() -> None:
    entry = http_entry("https://mcp.example.org/mcp", "Authorization: Bearer abc:def\nX-Team: tools")
    assert entry == {
        "type": "http",
        "url": "https://mcp.example.org/mcp",
        "headers": {"Authorization": "Bearer abc:def", "X-Team": "tools"},
    }
    assert isinstance(parse_server_entry("remote", entry), HttpServerConfig)
    assert entry_summary(entry) == "https://mcp.example.org/mcp"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: stdio_entry("  "), "Command: type the program to start"),
        (lambda: stdio_entry("npx", "'unclosed"), "Arguments: No closing quotation"),
        (
            lambda: stdio_entry("npx", "", "NOT A PAIR"),
            "Environment, line 1: 'NOT A PAIR' is not of the form KEY=value",
        ),
        (lambda: stdio_entry("npx", "", "1X=2"), "Environment, line 1"),
        (lambda: http_entry("ftp://host/x"), "URL: 'ftp://host/x' is not an http:// or https:// address"),
        (lambda: http_entry("http://"), "URL:"),
        (lambda: http_entry("http://h/mcp", "ok: 1\nbad header: 2"), "Headers, line 2"),
        (lambda: check_server_name(""), "Name: give the server a name"),
        (lambda: check_server_name("a/b"), "may hold only letters"),
        (lambda: check_server_name("time", {"time": {}}), "a server called 'time' exists already"),
    ],
)
def test_bad_form_fields_are_named_in_the_error(call: object, message: str) -> None:
    with pytest.raises(ServerFormError, match=message.replace("(", r"\(")):
        call()  # type: ignore[operator]


def test_a_good_name_is_trimmed() -> None:
    assert check_server_name("  my time-server.v2 ", {"other": {}}) == "my time-server.v2"


def test_signed_in_only_admins_may_start_typed_commands_whatever_the_address() -> None:
    person = Owner(id="ann@example.com", label="Ann", signed_in=True)
    admin = Owner(id="carol@example.com", label="Carol", is_admin=True, signed_in=True)
    for address, allow in (("127.0.0.1", False), ("0.0.0.0", True)):
        refused = stdio_policy(address, allow_stdio_from_ui=allow, owner=person)
        assert not refused.allowed and "Only an admin" in refused.reason
        assert stdio_policy(address, allow_stdio_from_ui=allow, owner=admin).allowed
