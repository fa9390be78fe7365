"""Server-sent events from a provider's reply, read under the size limits (see yiem.limits)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from httpx_sse import ServerSentEvent

from yiem.limits import ResponseLimits, ResponseTooLargeError, capped, text_lines
from yiem.llm import StreamEvent


def sse_events(lines: Iterable[str]) -> Iterator[ServerSentEvent]:
    """Events from event-stream lines: `data` lines joined; `event`, `id`, `retry` kept; comments skipped."""
    data: list[str] = []
    event = event_id = ""
    retry: int | None = None
    for line in lines:
        if not line:
            if data or event or event_id or retry is not None:
                yield ServerSentEvent(event=event, data="\n".join(data), id=event_id, retry=retry)
            data, event, retry = [], "", None
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "data":
            data.append(value)
        elif field == "event":
            event = value
        elif field == "id" and "\0" not in value:
            event_id = value
        elif field == "retry" and value.isdigit():
            retry = int(value)
    if data:
        yield ServerSentEvent(event=event, data="\n".join(data), id=event_id, retry=retry)


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
