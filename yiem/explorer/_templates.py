"""Resource templates (RFC 6570 URI templates) as forms, completion references, and icons to show."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from yiem.mcp import Icon, McpResourceTemplate

_EXPRESSION = re.compile(r"\{([+#./;?&]?)([^}]*)\}")
# Characters each operator leaves unescaped (RFC 6570 section 3.2): reserved ones for + and #.
_RESERVED = ":/?#[]@!$&'()*+,;="


def template_variables(uri_template: str) -> list[str]:
    """The variable names of a URI template, in order, each once (`{a}`, `{+path}`, `{?q,lang}`)."""
    names: list[str] = []
    for _, body in _EXPRESSION.findall(uri_template):
        for part in body.split(","):
            name = part.strip().rstrip("*").split(":")[0]
            if name and name not in names:
                names.append(name)
    return names


def template_schema(template: McpResourceTemplate) -> dict[str, Any]:
    """An object schema of one required string per variable, for the schema form."""
    names = template_variables(template.uri_template)
    return {
        "type": "object",
        "properties": {name: {"type": "string", "title": name} for name in names},
        "required": names,
    }


def expand_template(uri_template: str, values: Mapping[str, Any]) -> str:
    """The URI for `values` (RFC 6570 levels 1 to 3; an unset variable is left out)."""

    def expand(match: re.Match[str]) -> str:
        operator, body = match.group(1), match.group(2)
        safe = _RESERVED if operator in ("+", "#") else ""
        parts = []
        for part in body.split(","):
            name = part.strip().rstrip("*").split(":")[0]
            value = values.get(name)
            if value is None or value == "":
                continue
            text = quote(str(value), safe=safe)
            parts.append(f"{name}={text}" if operator in ("?", "&", ";") else text)
        if not parts:
            return ""
        joiner = {"": ",", "+": ",", "#": ",", ".": ".", "/": "/", ";": ";", "?": "&", "&": "&"}[operator]
        prefix = {"": "", "+": "", "#": "#", ".": ".", "/": "/", ";": ";", "?": "?", "&": "&"}[operator]
        return prefix + joiner.join(parts)

    return _EXPRESSION.sub(expand, uri_template)


def prompt_ref(name: str) -> dict[str, str]:
    """The `ref` of a prompt for `completion/complete`."""
    return {"type": "ref/prompt", "name": name}


def template_ref(uri_template: str) -> dict[str, str]:
    """The `ref` of a resource template for `completion/complete`."""
    return {"type": "ref/resource", "uri": uri_template}


def icon_src(icons: list[Icon]) -> str | None:
    """The first icon a page may show: an https URL or an inline data:image (never plain http)."""
    for icon in icons:
        if icon.src.startswith(("https://", "data:image/")):
            return icon.src
    return None
