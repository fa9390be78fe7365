"""Secrets the server knows, and the one function that takes them out of any text: `redact`.

Every text that is stored, exported, logged or shown passes through `redact`, which replaces each
known secret (provider keys, secrets.toml values, MCP header values and `${VAR}` values from the
environment) with `***`. Secrets are registered where they are read, so the set is process-wide.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Iterable
from typing import Any

MASK = "***"
# Shorter values are not secrets worth the name, and masking them would garble ordinary words.
MIN_SECRET_LENGTH = 8


class _Secrets:
    """A growing set of secret values and one compiled pattern that finds any of them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: set[str] = set()
        self._pattern: re.Pattern[str] | None = None

    def add(self, values: Iterable[str | None]) -> None:
        fresh: set[str] = set()
        for value in values:
            value = (value or "").strip()
            if len(value) < MIN_SECRET_LENGTH:
                continue
            # The JSON-escaped spelling too, so a secret with quotes or backslashes is found in JSON text.
            for spelling in (value, json.dumps(value)[1:-1]):
                if spelling not in self._values:
                    fresh.add(spelling)
        if not fresh:
            return
        with self._lock:
            self._values |= fresh
            # Longest first, so a secret that contains another is masked whole.
            ordered = sorted(self._values, key=len, reverse=True)
            self._pattern = re.compile("|".join(re.escape(value) for value in ordered))

    def redact(self, text: str) -> str:
        pattern = self._pattern
        return text if pattern is None or not text else pattern.sub(MASK, text)


_SECRETS = _Secrets()


def add_secrets(*values: str | None) -> None:
    """Register values to be masked from now on (shorter than 8 characters or empty: ignored)."""
    _SECRETS.add(values)


def redact(text: str) -> str:
    """`text` with every known secret replaced by `***`."""
    return _SECRETS.redact(text)


def redact_data(data: Any) -> Any:
    """A copy of JSON-like data (dicts, lists, strings) with every known secret in its strings masked."""
    if isinstance(data, str):
        return redact(data)
    if isinstance(data, dict):
        return {redact(str(key)): redact_data(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [redact_data(value) for value in data]
    return data


def header_secrets(value: str) -> list[str]:
    """A header value and, for `Bearer <token>` style values, the token alone (both are secrets)."""
    scheme, _, token = value.strip().partition(" ")
    return [value, token.strip()] if token.strip() and scheme.isalpha() else [value]


_install_lock = threading.Lock()
_installed = False


def install_log_redaction() -> None:
    """Mask known secrets in every log record of this process (message, arguments and traceback)."""
    global _installed
    with _install_lock:
        if _installed:
            return
        make_record = logging.getLogRecordFactory()

        def redacting_record(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = make_record(*args, **kwargs)
            try:
                record.msg = redact(record.getMessage())
                record.args = None
            except Exception:  # a record whose message cannot be formatted is left to logging's own report
                return record
            if record.exc_info and record.exc_info[0] is not None:
                record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
            if record.stack_info:
                record.stack_info = redact(record.stack_info)
            return record

        logging.setLogRecordFactory(redacting_record)
        _installed = True
