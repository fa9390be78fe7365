"""Server-sent events from event-stream lines: the one reader for the providers and MCP."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from httpx_sse import ServerSentEvent

# httpx-sse (pinned) exposes its spec decoder only on a response; lines here come from a capped
# reader (yiem.limits.text_lines), so its line decoder is used on them directly.
from httpx_sse._decoders import SSEDecoder


def sse_events(lines: Iterable[str]) -> Iterator[ServerSentEvent]:
    """Each event the lines dispatch, then an unterminated last one if it carries data."""
    decoder = SSEDecoder()
    pending = False
    for line in lines:
        event = decoder.decode(line)
        pending = bool(line)
        if event is not None:
            yield event
    if pending:
        last = decoder.decode("")
        if last is not None and last.data:
            yield last
