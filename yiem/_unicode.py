"""Text that cannot be written as UTF-8: lone surrogates, replaced wherever a message is serialised."""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError

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


def model_json(model: BaseModel, *, by_alias: bool = False) -> str:
    """`model` as compact JSON text, with lone surrogates replaced rather than fatal."""
    try:
        return model.model_dump_json(by_alias=by_alias)
    except PydanticSerializationError:  # pydantic cannot write a lone surrogate as UTF-8
        data = replace_lone_surrogates(model.model_dump(mode="json", by_alias=by_alias))
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
