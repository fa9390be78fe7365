"""A server's protocol log (every JSON-RPC message both ways, timed) as lines and as an export."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from yiem.mcp import LogEntry, message_version
from yiem.redaction import redact_data
from yiem.types import replace_lone_surrogates


def message_summary(message: dict[str, Any]) -> str:
    """What a message is, in a few words: its method and id, or which request it answers."""
    method = message.get("method")
    ident = message.get("id")
    if method is not None:
        kind = "request" if ident is not None else "notification"
        return f"{method} ({kind}{f' #{ident}' if ident is not None else ''})"
    if "error" in message:
        error = message["error"] if isinstance(message["error"], dict) else {}
        return f"error for #{ident}: {error.get('message', '')}"
    return f"result for #{ident}"


def message_revision(message: dict[str, Any]) -> str:
    """The protocol revision a message names: its stateless `_meta`, or the handshake's version."""
    stamped = message_version(message)
    if stamped is not None:
        return stamped
    params = message.get("params") if "method" in message else message.get("result")
    version = params.get("protocolVersion") if isinstance(params, dict) else None
    return version if isinstance(version, str) else ""


def protocol_rows(entries: Sequence[LogEntry], contains: str = "", limit: int = 500) -> list[dict[str, Any]]:
    """Newest first: time (UTC, ms), direction, summary, size; filtered by text in the message."""
    needle = contains.lower().strip()
    rows = []
    for at, direction, message in reversed(entries):
        # A server's JSON "\ud800" cannot be counted or shown as UTF-8: replaced, as in every export.
        text = replace_lone_surrogates(
            json.dumps(redact_data(message), ensure_ascii=False, separators=(",", ":"))
        )
        if needle and needle not in text.lower():
            continue
        rows.append(
            {
                "time": datetime.fromtimestamp(at, UTC).strftime("%H:%M:%S.%f")[:-3],
                "direction": "→ sent" if direction == "sent" else "← received",
                "message": replace_lone_surrogates(message_summary(message)),
                "revision": message_revision(message),
                "bytes": len(text.encode()),
            }
        )
        if len(rows) >= limit:
            break
    return rows


def protocol_log_json(server: str, entries: Sequence[LogEntry], protocol_version: str | None = None) -> str:
    """The whole log as JSON a person can keep: the revision in use, each message with its time and direction.

    Known secrets (keys, header tokens) are masked, as in every export."""
    text = json.dumps(
        {
            "server": server,
            "protocolVersion": protocol_version,
            "messages": [
                {
                    "time": datetime.fromtimestamp(at, UTC).isoformat(timespec="milliseconds"),
                    "direction": direction,
                    "message": redact_data(message),
                }
                for at, direction, message in entries
            ],
        },
        indent=2,
        ensure_ascii=False,
    )
    return str(replace_lone_surrogates(text))
