"""The one `{{name}}` rule: which variables a text names, and the text with their values put in.

Experiments fill a variant's system prompt from an item's vars with it; Chat's saved prompts ask
for theirs before sending. `{name}` counts too, as it always has for experiments.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}|\{(\w+)\}")


def template_variables(text: str) -> list[str]:
    """The variables `text` names, each once, in the order they first appear."""
    found = (match.group(1) or match.group(2) for match in _PLACEHOLDER.finditer(text))
    return list(dict.fromkeys(found))


def fill_template(text: str, values: Mapping[str, str]) -> str:
    """`text` with each `{{name}}` (or `{name}`) replaced by its value; names without one kept as is."""
    if "{" not in text:
        return text

    def replace(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return values[name] if name in values else match.group(0)

    return _PLACEHOLDER.sub(replace, text)
