"""Tool parameters a 2026-07-28 server wants mirrored into HTTP headers (`x-mcp-header`, SEP-2243).

A tool's input schema may mark a string, integer or boolean property with `x-mcp-header: Token`;
the client then sends its value as `Mcp-Param-Token`. A tool whose marks break the rules is
dropped from the list, as the specification says, so it can never be called half-mirrored.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator, Mapping
from typing import Any

X_MCP_HEADER = "x-mcp-header"
PARAM_PREFIX = "Mcp-Param-"
HeaderMap = dict[tuple[str, ...], str]
_SAFE = re.compile(r"[\x20-\x7E]*")
_SENTINEL = re.compile(r"=\?base64\?.*\?=")
# RFC 9110 token characters: the only ones a header name may hold.
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_PRIMITIVES = frozenset({"string", "integer", "boolean"})
# Keywords whose value maps names to schemas (not a schema itself).
_SCHEMA_MAPS = frozenset({"$defs", "definitions", "patternProperties", "dependentSchemas"})


def encode_header_value(value: str) -> str:
    """`value` as is when it survives an HTTP header, else wrapped as `=?base64?…?=`."""
    if _SAFE.fullmatch(value) and value == value.strip() and not _SENTINEL.fullmatch(value):
        return value
    return f"=?base64?{base64.b64encode(value.encode()).decode('ascii')}?="


def _positions(
    schema: Any, path: tuple[str, ...] | None = ()
) -> Iterator[tuple[tuple[str, ...] | None, dict[str, Any]]]:
    """Every sub-schema, with its chain of `properties` keys (None once off that chain)."""
    if not isinstance(schema, dict):
        return
    yield path, schema
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):
            for name, sub in value.items():
                yield from _positions(sub, (*path, name) if path is not None else None)
        elif key in ("default", "examples", "const", "enum", X_MCP_HEADER):
            continue  # data, not schemas
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            for sub in value.values():
                yield from _positions(sub, None)
        elif isinstance(value, dict):
            yield from _positions(value, None)
        elif isinstance(value, list):
            for sub in value:
                yield from _positions(sub, None)


def invalid_header_reason(schema: Any) -> str | None:
    """Why the tool's `x-mcp-header` marks break the rules, or None when they are fine."""
    seen: dict[str, str] = {}
    for path, sub in _positions(schema):
        if X_MCP_HEADER not in sub:
            continue
        if not path:
            return f"{X_MCP_HEADER} is on a schema that is not a property of the arguments"
        where = ".".join(path)
        header = sub[X_MCP_HEADER]
        if not isinstance(header, str) or not _TOKEN.fullmatch(header):
            return f"property {where!r}: {X_MCP_HEADER} {header!r} is not a valid header name"
        if sub.get("type") not in _PRIMITIVES:
            return f"property {where!r}: {X_MCP_HEADER} is only allowed on string, integer or boolean"
        if header.lower() in seen:
            return f"{X_MCP_HEADER} {header!r} on {where!r} repeats the one on {seen[header.lower()]!r}"
        seen[header.lower()] = where
    return None


def header_map(schema: Any) -> HeaderMap:
    """Property path -> header token, for a schema `invalid_header_reason` accepted."""
    return {
        path: str(sub[X_MCP_HEADER])
        for path, sub in _positions(schema)
        if path and isinstance(sub.get(X_MCP_HEADER), str)
    }


def param_headers(marks: HeaderMap, arguments: Mapping[str, Any]) -> dict[str, str]:
    """The `Mcp-Param-*` headers for a call's arguments; a missing or null value sends none."""
    headers: dict[str, str] = {}
    for path, token in marks.items():
        value: Any = arguments
        for key in path:
            value = value.get(key) if isinstance(value, Mapping) else None
        if isinstance(value, bool):
            rendered = "true" if value else "false"
        elif isinstance(value, str | int | float):
            rendered = str(value)
        else:
            continue
        headers[PARAM_PREFIX + token] = encode_header_value(rendered)
    return headers
