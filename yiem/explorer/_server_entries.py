"""What a person types to add an MCP server in the browser, turned into an `mcp.json` entry, and whether
the app may start a typed command at all."""

from __future__ import annotations

import ipaddress
import re
import shlex
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse

from pydantic import BaseModel

from yiem.errors import YiemError
from yiem.identity import LOCAL_OWNER, Owner

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_SERVER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 _.-]{0,63}$")


class ServerFormError(YiemError, ValueError):
    """A field of the add-server form that cannot be used; the message names it."""


class StdioPolicy(BaseModel):
    """Whether commands typed in the browser may be started, and why."""

    allowed: bool
    reason: str


def stdio_policy(
    server_address: str | None, allow_stdio_from_ui: bool, owner: Owner = LOCAL_OWNER
) -> StdioPolicy:
    """Who may start a typed command: with sign-in on, admins only (whatever the address); without,
    an app bound to loopback, or one whose mcp.json says `allow_stdio_from_ui`."""
    if owner.signed_in:
        # Signed in, the person is known: the operator's admins run programs on the server, nobody else.
        if owner.is_admin:
            return StdioPolicy(allowed=True, reason="You are signed in as an admin of this app.")
        return StdioPolicy(
            allowed=False,
            reason=(
                "Only an admin of this app may start programs on the server. Use a server from "
                "mcp.json or a URL, or ask an admin to add the command."
            ),
        )
    if allow_stdio_from_ui:
        return StdioPolicy(allowed=True, reason="mcp.json sets allow_stdio_from_ui: true.")
    address = (server_address or "").strip()
    if _is_loopback(address):
        return StdioPolicy(allowed=True, reason=f"The app listens only on {address}, this computer.")
    where = f"on {address}" if address else "on every network address"
    return StdioPolicy(
        allowed=False,
        reason=(
            f"The app listens {where}, so anyone who can reach it could start programs on this computer. "
            "Only servers from mcp.json can be started. To allow typed commands, bind the app to 127.0.0.1 "
            "(server.address in .streamlit/config.toml) or set allow_stdio_from_ui: true in mcp.json."
        ),
    )


def _is_loopback(address: str) -> bool:
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:
        return False


def check_server_name(name: str, taken: Mapping[str, Any] | None = None) -> str:
    """A usable server name (letters, digits, space, `_ . -`), not already used."""
    name = name.strip()
    if not name:
        raise ServerFormError("Name: give the server a name.")
    if not _SERVER_NAME.match(name):
        raise ServerFormError(
            f"Name: {name!r} may hold only letters, digits, spaces, '_', '.' and '-' (64 at most)."
        )
    if taken is not None and name in taken:
        raise ServerFormError(f"Name: a server called {name!r} exists already; choose another name.")
    return name


def stdio_entry(command: str, args: str = "", env: str = "", cwd: str = "") -> dict[str, Any]:
    """An mcp.json stdio entry from the form's text: args split like a shell, env as KEY=VALUE lines."""
    command = command.strip()
    if not command:
        raise ServerFormError("Command: type the program to start, e.g. npx or uvx.")
    try:
        arg_list = shlex.split(args)
    except ValueError as error:
        raise ServerFormError(f"Arguments: {error} (check the quotes).") from error
    entry: dict[str, Any] = {"command": command, "args": arg_list}
    env_map = _pairs(env, "=", "Environment", _ENV_NAME, "KEY=value")
    if env_map:
        entry["env"] = env_map
    if cwd.strip():
        entry["cwd"] = cwd.strip()
    return entry


def http_entry(url: str, headers: str = "") -> dict[str, Any]:
    """An mcp.json Streamable HTTP entry: an http(s) URL and `Name: value` header lines."""
    url = url.strip()
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ServerFormError(f"URL: {url!r} is not an http:// or https:// address.")
    entry: dict[str, Any] = {"type": "http", "url": url}
    header_map = _pairs(headers, ":", "Headers", _HEADER_NAME, "Name: value")
    if header_map:
        entry["headers"] = header_map
    return entry


def _pairs(
    text: str, separator: str, what: str, name_pattern: re.Pattern[str], example: str
) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, found, value = line.partition(separator)
        name = name.strip()
        if not found or not name_pattern.match(name):
            raise ServerFormError(f"{what}, line {number}: {line.strip()!r} is not of the form {example}.")
        pairs[name] = value.strip()
    return pairs


def entry_summary(entry: Mapping[str, Any]) -> str:
    """One line that says how a server is reached: its command line, or its URL."""
    if "url" in entry:
        return str(entry["url"])
    return shlex.join([str(entry.get("command", "")), *(str(arg) for arg in entry.get("args", []))])
