"""Which MCP protocol revision a client speaks with a server: chosen here, and only here.

2026-07-28 is stateless: every request carries the revision, the client's identity and its
capabilities in `_meta`, and `server/discover` replaces the `initialize` handshake. A server that
does not speak it is met with a 2025-11-25 (or older) `initialize` session, as the official SDKs do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from yiem.mcp._headers import encode_header_value
from yiem.mcp.errors import (
    UNSUPPORTED_PROTOCOL_VERSION,
    McpConnectionError,
    McpError,
    McpProtocolError,
    McpTimeoutError,
    McpVersionMismatchError,
)

LATEST_STATELESS = "2026-07-28"
STATELESS_VERSIONS = ("2026-07-28",)
HANDSHAKE_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26")
SUPPORTED_VERSIONS = STATELESS_VERSIONS + HANDSHAKE_VERSIONS
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
# Methods whose parameter the HTTP transport mirrors as the `Mcp-Name` header.
# The tasks extension (SEP-2663) names its task in `Mcp-Name` as the core methods name theirs.
NAME_PARAMS = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}


@dataclass(frozen=True)
class Revision:
    """The revision a session agreed on, and how its requests are stamped."""

    version: str
    client_info: Mapping[str, Any] = field(default_factory=dict)
    capabilities: Mapping[str, Any] = field(default_factory=dict)

    @property
    def stateless(self) -> bool:
        """True for 2026-07-28: no handshake, no session, `_meta` on every request."""
        return self.version in STATELESS_VERSIONS

    def stamp(self, params: dict[str, Any] | None) -> dict[str, Any] | None:
        """`params` with the per-request `_meta` a stateless revision needs (as given otherwise)."""
        if not self.stateless:
            return params
        if params is None or "_meta" not in params:
            # The common case, on every call: the session's own `_meta`, made once.
            return {**(params or {}), "_meta": dict(self._meta)}
        return stamp_meta(params, self.version, self.client_info, self.capabilities)

    @cached_property
    def _meta(self) -> dict[str, Any]:
        meta: dict[str, Any] = stamp_meta(None, self.version, self.client_info, self.capabilities)["_meta"]
        return meta


def stamp_meta(
    params: dict[str, Any] | None,
    version: str,
    client_info: Mapping[str, Any],
    capabilities: Mapping[str, Any],
) -> dict[str, Any]:
    """`params` plus `_meta` naming the revision, the client and its capabilities.

    Capabilities are declared per request at 2026-07-28, so extensions a request's own `_meta`
    declares (the tasks extension for one call, say) are kept beside the session's."""
    meta = dict((params or {}).get("_meta") or {})
    meta[PROTOCOL_VERSION_KEY] = version
    meta[CLIENT_INFO_KEY] = dict(client_info)
    declared = dict(capabilities)
    own = meta.get(CLIENT_CAPABILITIES_KEY)
    if isinstance(own, dict) and isinstance(own.get("extensions"), dict):
        declared["extensions"] = {**dict(declared.get("extensions") or {}), **own["extensions"]}
    meta[CLIENT_CAPABILITIES_KEY] = declared
    return {**(params or {}), "_meta": meta}


def message_version(message: Mapping[str, Any]) -> str | None:
    """The revision a stateless message names in its `_meta`; None for a handshake-era message."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
    return version if isinstance(version, str) else None


def standard_headers(message: Mapping[str, Any]) -> dict[str, str]:
    """`MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` for a stateless HTTP POST (none otherwise)."""
    version = message_version(message)
    method = message.get("method")
    if version is None or not isinstance(method, str):
        return {}
    headers = {"MCP-Protocol-Version": version, "Mcp-Method": method}
    params = message.get("params")
    name = params.get(NAME_PARAMS.get(method, "")) if isinstance(params, dict) else None
    if isinstance(name, str):
        headers["Mcp-Name"] = encode_header_value(name)
    return headers


def check_result_meta(result: Mapping[str, Any], revision: Revision, method: str, label: str) -> None:
    """Refuse a stateless reply whose `_meta` is not an object or names another revision."""
    if not revision.stateless or "_meta" not in result:
        return
    meta = result["_meta"]
    if not isinstance(meta, dict):
        raise McpProtocolError(
            f"MCP server {label} answered {method!r} with a malformed _meta ({type(meta).__name__}, "
            "not an object); the reply was not used",
            data={"_meta": meta},
        )
    answered = meta.get(PROTOCOL_VERSION_KEY)
    if answered is not None and answered != revision.version:
        raise McpProtocolError(
            f"MCP server {label} answered {method!r} in protocol revision {answered!r}, but the request "
            f"was made in {revision.version}; the reply was not used",
            data={"protocolVersion": answered},
        )


def version_mismatch(error: McpError, label: str, requested: str) -> McpVersionMismatchError:
    """A `-32022` reply in words: which revision was refused and which the server names."""
    supported = supported_in(error.data)
    names = ", ".join(supported) if supported else "none it would name"
    return McpVersionMismatchError(
        f"MCP server {label} does not accept protocol revision {requested} (it supports {names}; "
        f"yiem supports {', '.join(SUPPORTED_VERSIONS)})",
        data=error.data,
    )


def supported_in(data: Any) -> list[str] | None:
    """The `supported` list of a -32022 error's data, or None when it has none."""
    supported = data.get("supported") if isinstance(data, dict) else None
    if not isinstance(supported, list):
        return None
    return [version for version in supported if isinstance(version, str)]


def negotiate(
    discover: Callable[[str], dict[str, Any]],
    initialize: Callable[[], dict[str, Any]],
    label: str,
) -> tuple[str, dict[str, Any]]:
    """Probe `server/discover` at the newest revision, else run the handshake: (version, its result).

    As in the official SDKs only proof of a stateless-only server that shares no revision with us
    fails; any other refusal (method not found, a plain HTTP 4xx, silence) means an older server.
    """
    version = LATEST_STATELESS
    for attempt in range(2):
        try:
            result = discover(version)
        except McpError as exc:
            if not _means_older_server(exc):
                raise
            supported = supported_in(exc.data) if exc.code == UNSUPPORTED_PROTOCOL_VERSION else None
            mutual = [v for v in STATELESS_VERSIONS if v in (supported or ())]
            if mutual and attempt == 0:
                version = mutual[0]
                continue
            if supported is not None and not any(v in HANDSHAKE_VERSIONS for v in supported):
                raise version_mismatch(exc, label, version) from exc
            return _handshake(initialize, label)
        offered = result.get("supportedVersions")
        if not isinstance(offered, list) or not any(v in offered for v in STATELESS_VERSIONS):
            # A server that answers discover but offers only handshake revisions wants the handshake.
            return _handshake(initialize, label)
        return next(v for v in STATELESS_VERSIONS if v in offered), result
    raise AssertionError("unreachable")


def _means_older_server(error: McpError) -> bool:
    if isinstance(error, McpTimeoutError):
        return True
    if isinstance(error, McpConnectionError):
        # A refused connection or a dead process is no verdict on the revision; an HTTP status is,
        # except 401 and 403: the server wants a sign-in first, whatever revision it speaks.
        status = error.data.get("status") if isinstance(error.data, dict) else None
        return status is not None and status not in (401, 403)
    return True


def _handshake(initialize: Callable[[], dict[str, Any]], label: str) -> tuple[str, dict[str, Any]]:
    result = initialize()
    version = result.get("protocolVersion")
    if version not in HANDSHAKE_VERSIONS:
        raise McpProtocolError(
            f"MCP server {label} speaks protocol version {version!r}, which yiem does not "
            f"support (it supports {', '.join(SUPPORTED_VERSIONS)})",
            data={"protocolVersion": version},
        )
    return str(version), result
