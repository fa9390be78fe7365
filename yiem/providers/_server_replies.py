"""Reading what a server says about itself: its model list and the text of its error bodies."""

from __future__ import annotations

import json
from typing import Any

from yiem.errors import YiemError


class ModelListError(YiemError, RuntimeError):
    """The server's model list could not be fetched or read; the message says why."""


def model_ids(data: Any) -> list[str]:
    """Model ids from `/v1/models`: OpenAI's `{"data": [...]}` or llama.cpp's `{"models": [...]}`."""
    if not isinstance(data, dict):
        raise ModelListError(f"expected a JSON object, got {type(data).__name__}")
    entries = data.get("data") if isinstance(data.get("data"), list) else data.get("models")
    if not isinstance(entries, list):
        raise ModelListError('expected a "data" or "models" list')
    ids: list[str] = []
    for entry in entries:
        if isinstance(entry, str):
            found: Any = entry
        elif isinstance(entry, dict):
            found = entry.get("id") or entry.get("model") or entry.get("name")
        else:
            found = None
        if isinstance(found, str) and found and found not in ids:
            ids.append(found)
    return ids


def provider_error_text(body: bytes | str) -> str:
    """The provider's own error message from an error body (JSON or plain text), shortened."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict):
            message = error.get("message") or error.get("detail") or error.get("msg")
            kind = error.get("type") or error.get("code")
            if isinstance(message, str) and message:
                return f"{message} ({kind})" if isinstance(kind, str) and kind else message
        elif isinstance(error, str) and error:
            return error
        for key in ("message", "detail"):
            if isinstance(data.get(key), str):
                return str(data[key])
    text = " ".join(text.split())
    return (text[:500] + "…") if len(text) > 500 else (text or "(empty response body)")
