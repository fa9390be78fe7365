"""The errors an MCP client raises: JSON-RPC errors and transport failures, all `McpError`."""

from __future__ import annotations

from typing import Any

from yiem.errors import YiemError

# JSON-RPC 2.0 codes, and the ones this client uses for failures that never reached a server.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
CONNECTION_CLOSED = -32000
REQUEST_TIMEOUT = -32001
REQUEST_CANCELLED = -32800

_CODE_NAMES = {
    PARSE_ERROR: "parse error",
    INVALID_REQUEST: "invalid request",
    METHOD_NOT_FOUND: "method not found",
    INVALID_PARAMS: "invalid params",
    INTERNAL_ERROR: "internal error",
}


class McpError(YiemError):
    """A JSON-RPC error from the server, or a failure to reach it; `code` follows JSON-RPC."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        self.code = code
        self.message = message
        self.data = data
        super().__init__(self._describe())

    def _describe(self) -> str:
        name = _CODE_NAMES.get(self.code)
        if name and name.lower() not in self.message.lower():
            return f"{self.message} ({name}, code {self.code})"
        return f"{self.message} (code {self.code})"


class McpConnectionError(McpError):
    """The server could not be reached, or its process or connection ended."""

    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(CONNECTION_CLOSED, message, data)


class McpTimeoutError(McpError):
    """The server did not answer in time; the request was cancelled."""

    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(REQUEST_TIMEOUT, message, data)


class McpCancelledError(McpError):
    """The request was cancelled by the caller before the server answered."""

    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(REQUEST_CANCELLED, message, data)


class McpProtocolError(McpError):
    """The server broke the protocol: an unsupported version or a malformed reply."""

    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(INVALID_REQUEST, message, data)


class McpSessionExpiredError(McpError):
    """The HTTP server no longer knows the session (404, or a 400 about the session id)."""

    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(CONNECTION_CLOSED, message, data)


class McpConfigError(McpError):
    """mcp.json is unreadable or an entry is wrong; the message names the file, entry and field."""

    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(INVALID_PARAMS, message, data)

    def _describe(self) -> str:
        # A configuration problem never reached a server: no JSON-RPC code in the message.
        return self.message


UNSUPPORTED_PROTOCOL_VERSION = -32022


class McpVersionMismatchError(McpError):
    """The server refused the protocol revision (`-32022`) and shares none with this client."""

    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(UNSUPPORTED_PROTOCOL_VERSION, message, data)
