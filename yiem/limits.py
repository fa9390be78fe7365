"""How much a server may send: a response body in bytes (providers and MCP over HTTP) and a streamed
reply in characters. Past a limit the read stops, in words, and what arrived so far is kept."""

from __future__ import annotations

import codecs
import os
import re
from collections.abc import Iterable, Iterator, Mapping

from pydantic import BaseModel, ConfigDict

from yiem.errors import YiemError

DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024
# Far past any model's longest reply (a few hundred thousand characters), well short of filling memory.
DEFAULT_MAX_REPLY_CHARS = 2_000_000
_LINE_END = re.compile(r"\r\n|\r|\n")


class ResponseTooLargeError(YiemError):
    """A server sent more than the configured limit; the message names the limit and how to raise it."""


class ResponseLimits(BaseModel):
    """The limits in force: `YIEM_MAX_RESPONSE_BYTES` and `YIEM_MAX_REPLY_CHARS` override the defaults."""

    model_config = ConfigDict(frozen=True)

    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    max_reply_chars: int = DEFAULT_MAX_REPLY_CHARS

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> ResponseLimits:
        """The limits from the environment; a value that is not a positive whole number is an error."""
        env = os.environ if environ is None else environ
        values: dict[str, int] = {}
        for field, variable in (
            ("max_response_bytes", "YIEM_MAX_RESPONSE_BYTES"),
            ("max_reply_chars", "YIEM_MAX_REPLY_CHARS"),
        ):
            raw = env.get(variable, "").strip().replace("_", "")
            if not raw:
                continue
            if not raw.isdigit() or int(raw) <= 0:
                raise YiemError(f"{variable} must be a positive whole number, not {raw!r}.")
            values[field] = int(raw)
        return cls(**values)

    def bytes_words(self) -> str:
        """The byte limit in words, with the setting that raises it."""
        return f"{_size(self.max_response_bytes)} (YIEM_MAX_RESPONSE_BYTES)"

    def chars_words(self) -> str:
        """The reply limit in words, with the setting that raises it."""
        return f"{self.max_reply_chars:,} characters (YIEM_MAX_REPLY_CHARS)"


def capped(chunks: Iterable[bytes], limits: ResponseLimits, source: str) -> Iterator[bytes]:
    """`chunks` until more than `limits.max_response_bytes` arrived; then `ResponseTooLargeError`."""
    total = 0
    for chunk in chunks:
        total += len(chunk)
        if total > limits.max_response_bytes:
            raise ResponseTooLargeError(
                f"{source} sent more than {limits.bytes_words()}; the rest was not read."
            )
        yield chunk


def read_capped(chunks: Iterable[bytes], limits: ResponseLimits, source: str) -> bytes:
    """A whole body, or `ResponseTooLargeError` once it passes the limit (never more held in memory)."""
    return b"".join(capped(chunks, limits, source))


def text_lines(
    chunks: Iterable[bytes], limits: ResponseLimits | None = None, source: str = "The server"
) -> Iterator[str]:
    """UTF-8 lines without their ending (`\\r\\n`, `\\r` or `\\n`, as server-sent events define them).

    With `limits`, one line may not pass `limits.max_response_bytes` (for streams that stay open long,
    where a cap on the whole body would end a healthy session)."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    parts: list[str] = []  # the line in progress, in pieces: a long line is joined once, not per chunk
    held = 0
    carry_cr = False
    for chunk in _with_end(chunks):
        text = decoder.decode(chunk or b"", final=chunk is None)
        if carry_cr:
            text, carry_cr = "\r" + text, False
        if chunk is not None and text.endswith("\r"):
            # Maybe the first half of "\r\n": decided by the next chunk.
            text, carry_cr = text[:-1], True
        start = 0
        for match in _LINE_END.finditer(text):
            parts.append(text[start : match.start()])
            yield "".join(parts)
            parts, start, held = [], match.end(), 0
        if start < len(text):
            parts.append(text[start:])
            held += len(text) - start
            if limits is not None and held > limits.max_response_bytes:
                raise ResponseTooLargeError(
                    f"{source} sent a line longer than {limits.bytes_words()}; the rest was not read."
                )
    if parts:
        yield "".join(parts)


def _with_end(chunks: Iterable[bytes]) -> Iterator[bytes | None]:
    yield from chunks
    yield None


def _size(count: int) -> str:
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if count >= scale and count % scale == 0:
            return f"{count // scale} {unit}"
    return f"{count:,} bytes"
