"""The interface between `McpClient` and a way of carrying JSON-RPC messages (stdio, HTTP)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Protocol

from yiem.mcp.errors import McpError
from yiem.types import replace_lone_surrogates

Message = dict[str, Any]
OnMessage = Callable[[Message], None]
# `request_id` None means the whole connection failed and every pending request fails with it.
OnFailure = Callable[[int | str | None, McpError], None]


def encode_message(message: Message) -> bytes:
    """One message as compact UTF-8 JSON; a lone surrogate (a model's JSON "\\ud800") becomes U+FFFD."""
    text = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
    try:
        return text.encode()
    except UnicodeEncodeError:
        return str(replace_lone_surrogates(text)).encode()


class Transport(Protocol):
    """Carries messages; replies and server messages come back through `on_message`."""

    label: str

    def start(self, on_message: OnMessage, on_failure: OnFailure) -> None:
        """Open the connection (or process); raise `McpConnectionError` when it cannot."""

    def send(self, message: Message) -> None:
        """Send one message without waiting for a reply."""

    def initialized(self, protocol_version: str) -> None:
        """Called once the handshake agreed on `protocol_version`."""

    def abandon(self, request_id: int | str) -> None:
        """Stop reading the reply to `request_id` (cancelled or timed out)."""

    def close(self) -> None:
        """End the connection; pending requests fail through `on_failure`."""
