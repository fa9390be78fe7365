"""Text that cannot be written as UTF-8: lone surrogates, replaced wherever a message is serialised."""

from __future__ import annotations

import re
from typing import Any

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def replace_lone_surrogates(value: Any) -> Any:
    """`value` with every lone surrogate (JSON's `"\\ud800"`) in its strings replaced by U+FFFD.

    Such text cannot be written as UTF-8, so it would make saving, exporting or sending fail.
    """
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {replace_lone_surrogates(key): replace_lone_surrogates(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [replace_lone_surrogates(item) for item in value]
    return value
