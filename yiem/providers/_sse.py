"""Server-sent events from a provider's reply, read under the size limits (see yiem.limits)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from httpx_sse import ServerSentEvent

from yiem._sse import sse_events
from yiem.limits import ResponseLimits, ResponseTooLargeError, capped, text_lines
from yiem.llm import StreamEvent


def capped_events(chunks: Iterable[bytes], limits: ResponseLimits, source: str) -> Iterator[ServerSentEvent]:
    """The events of a body that may not pass `limits.max_response_bytes`."""
    return sse_events(text_lines(capped(chunks, limits, source)))


def capped_reply(deltas: Iterable[StreamEvent], limits: ResponseLimits, source: str) -> Iterator[StreamEvent]:
    """`deltas` until the reply's text, reasoning and tool arguments pass `limits.max_reply_chars`."""
    total = 0
    for event in deltas:
        if event.type in ("text_delta", "reasoning_delta"):
            total += len(event.delta)
        elif event.type == "toolcall_delta":
            total += len(event.arguments_delta)
        yield event
        if total > limits.max_reply_chars:
            raise ResponseTooLargeError(
                f"The reply from {source} passed {limits.chars_words()}; it was cut there."
            )
