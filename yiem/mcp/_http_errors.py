"""What an MCP server's HTTP error status means, in words: a lost session, a JSON-RPC error, a sign-in."""

from __future__ import annotations

import json
from typing import Any

import httpx

from yiem.mcp._auth import McpSignInRequiredError, parse_challenge
from yiem.mcp.errors import McpConnectionError, McpError, McpSessionExpiredError


def status_error(
    url: str,
    response: httpx.Response,
    body: bytes,
    *,
    session_id: str | None,
    method: Any,
    quote_bodies: bool,
) -> McpError:
    """The error for a reply of HTTP 400 or more to a request of `method` (`body`: its start)."""
    status = response.status_code
    text = body[:2000].decode("utf-8", "replace")[:500]
    # The spec says 404 for an unknown session; many servers say 400 with a message instead.
    lost = status == 404 or (status == 400 and "session" in text.lower())
    if lost and session_id and method != "initialize":
        return McpSessionExpiredError(f"MCP server {url} no longer knows session {session_id}")
    error = _json_rpc_error(text)
    if error is not None:
        code, error_message, data = error
        return McpError(code, f"MCP server {url} answered HTTP {status}: {error_message}", data)
    challenge = parse_challenge(response.headers.get("www-authenticate"))
    if challenge is not None and (status == 401 or challenge.error == "insufficient_scope"):
        return McpSignInRequiredError(url, challenge)
    hint = " (check the URL and its path, usually /mcp)" if status in (404, 405) else ""
    if status in (401, 403):
        hint = " (check the token or headers in the server's configuration)"
    said = f": {text.strip()[:200]}" if quote_bodies else " (not shown for a typed URL)"
    return McpConnectionError(f"MCP server {url} answered HTTP {status}{hint}{said}", data={"status": status})


def read_timed_out(exc: BaseException) -> bool:
    """Whether a read (or the wait for a free connection) ran past its timeout, as such or under
    the words it was given."""
    waited = (httpx.ReadTimeout, httpx.PoolTimeout)
    return isinstance(exc, waited) or isinstance(exc.__cause__, waited)


def _json_rpc_error(text: str) -> tuple[int, str, Any] | None:
    try:
        payload = json.loads(text)
    except ValueError:
        return None
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, dict) and isinstance(error.get("code"), int):
        return error["code"], str(error.get("message", "")), error.get("data")
    return None
