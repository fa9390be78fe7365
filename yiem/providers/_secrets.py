"""Where a configured key comes from: the environment, then `.streamlit/secrets.toml`."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any


def secrets_files(root: Path | None = None) -> list[dict[str, Any]]:
    """The `.streamlit/secrets.toml` files that exist and parse, project first, then home."""
    found: list[dict[str, Any]] = []
    for folder in (root or Path.cwd(), Path.home()):
        try:
            found.append(tomllib.loads((folder / ".streamlit" / "secrets.toml").read_text()))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
    return found


def secrets_file_value(name: str, root: Path | None = None) -> str:
    """`name` from `.streamlit/secrets.toml` (project, then home), read without Streamlit."""
    for data in secrets_files(root):
        value = data.get(name)
        if isinstance(value, str) and value:
            return value
    return ""


def configured_secret(name: str) -> str:
    """A key from the environment, else from `.streamlit/secrets.toml`; "" when neither has it."""
    return os.environ.get(name, "") or secrets_file_value(name)
