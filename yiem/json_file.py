"""Files yiem exports as JSON with a format number (check collections, experiment specs): reading
one, refusing one from a newer yiem, and a validation error's first problems in words."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError


def read_json_file(path: str | Path, kind: str, error: type[Exception]) -> Any:
    """The parsed JSON of `path`; `error` in words when it cannot be read or is not JSON."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise error(f"Cannot read the {kind} file {file}: {exc.strerror or exc}.") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{file} is not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}).") from None


def refuse_newer(data: dict[str, Any], current: int, source: str, kind: str, error: type[Exception]) -> None:
    """`error` when the file's `format` is newer than `current`, the one this yiem reads."""
    version = data.get("format", current)
    if isinstance(version, int) and version > current:
        raise error(
            f"{source} is in {kind} format {version}, written by a newer yiem; this one reads "
            f"format {current}. Update yiem to run it."
        )


def problems(exc: ValidationError, limit: int = 3) -> str:
    """The first problems of a validation error, each as `field.path: message`."""
    found = [f"{'.'.join(str(p) for p in e['loc']) or 'file'}: {e['msg']}" for e in exc.errors()[:limit]]
    return "; ".join(found)
