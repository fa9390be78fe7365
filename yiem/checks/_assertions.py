"""Assertions on a saved call's result, chosen from a form: each says in words why it failed."""

from __future__ import annotations

import difflib
import functools
import json
import re
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from jsonpath_ng import JSONPath
from jsonpath_ng.exceptions import JsonPathParserError
from jsonpath_ng.ext.parser import parse as parse_jsonpath
from pydantic import BaseModel, ConfigDict, model_validator

from yiem.amounts import duration
from yiem.errors import YiemError
from yiem.json_schema import UnusableSchemaError, iter_errors, usable_validator


class AssertionKind(StrEnum):
    """What an assertion checks; the Tools page offers these in a form."""

    NOT_ERROR = "not_error"
    IS_ERROR = "is_error"
    TEXT_CONTAINS = "text_contains"
    TEXT_MATCHES = "text_matches"
    MATCHES_OUTPUT_SCHEMA = "matches_output_schema"
    JSONPATH_EQUALS = "jsonpath_equals"
    JSONPATH_CONTAINS = "jsonpath_contains"
    JSONPATH_EXISTS = "jsonpath_exists"
    SIZE_UNDER = "size_under"
    TIME_UNDER = "time_under"
    SNAPSHOT = "snapshot"


_NEEDS_PATH = {AssertionKind.JSONPATH_EQUALS, AssertionKind.JSONPATH_CONTAINS, AssertionKind.JSONPATH_EXISTS}
_NEEDS_NUMBER = {AssertionKind.SIZE_UNDER, AssertionKind.TIME_UNDER}


class AssertionFormError(YiemError, ValueError):
    """An assertion that cannot be checked as filled in (no path, no number, a bad pattern)."""


class Assertion(BaseModel):
    """One check on a result; `path` is a JSONPath into the result as the server sent it
    (`$.content[0].text`, `$.structuredContent.field`), `value` what it is compared with."""

    model_config = ConfigDict(extra="forbid")

    kind: AssertionKind
    path: str | None = None
    value: Any = None
    snapshot: Any = None  # the last accepted result, for a snapshot

    @model_validator(mode="after")
    def _usable(self) -> Assertion:
        if self.kind in _NEEDS_PATH:
            if not self.path:
                raise AssertionFormError(f"a {self.kind.value} assertion needs a JSONPath (path)")
            compile_jsonpath(self.path)
        if self.kind in _NEEDS_NUMBER and (
            isinstance(self.value, bool) or not isinstance(self.value, int | float) or self.value <= 0
        ):
            raise AssertionFormError(f"a {self.kind.value} assertion needs a positive number (value)")
        if self.kind in (AssertionKind.TEXT_CONTAINS, AssertionKind.TEXT_MATCHES) and not isinstance(
            self.value, str
        ):
            raise AssertionFormError(f"a {self.kind.value} assertion needs text (value)")
        if self.kind is AssertionKind.TEXT_MATCHES:
            try:
                re.compile(str(self.value))
            except re.error as exc:
                raise AssertionFormError(
                    f"the pattern {self.value!r} is not a regular expression: {exc}"
                ) from None
        return self

    def words(self) -> str:
        """The assertion as a person reads it."""
        value = json.dumps(self.value, ensure_ascii=False)
        return {
            AssertionKind.NOT_ERROR: "is not an error",
            AssertionKind.IS_ERROR: "is an error",
            AssertionKind.TEXT_CONTAINS: f"text contains {value}",
            AssertionKind.TEXT_MATCHES: f"text matches {value}",
            AssertionKind.MATCHES_OUTPUT_SCHEMA: "structured result matches the tool's output schema",
            AssertionKind.JSONPATH_EQUALS: f"{self.path} equals {value}",
            AssertionKind.JSONPATH_CONTAINS: f"{self.path} contains {value}",
            AssertionKind.JSONPATH_EXISTS: f"{self.path} exists",
            AssertionKind.SIZE_UNDER: f"result under {self.value} bytes",
            AssertionKind.TIME_UNDER: f"time under {self.value} ms",
            AssertionKind.SNAPSHOT: "equals the accepted snapshot",
        }[self.kind]


class JsonPathError(YiemError, ValueError):
    """A JSONPath that does not parse."""


@functools.lru_cache(maxsize=1024)
def compile_jsonpath(path: str) -> JSONPath:
    """The parsed JSONPath, or a `JsonPathError` in words; parsed once per path (jsonpath-ng builds a
    parser for each parse, which cost more than a call to a fast server in a run of a collection)."""
    try:
        return parse_jsonpath(path)
    except (JsonPathParserError, Exception) as exc:  # the lexer raises plain Exceptions too
        raise JsonPathError(f"the JSONPath {path!r} does not parse: {exc}") from None


_STRUCTURED_FIELD = re.compile(r"^\$\.structuredContent(?:\.([A-Za-z_][\w-]*)|\[['\"]([^'\"]+)['\"]\])?")


def unreturned_field(assertion: Assertion, output_schema: Mapping[str, Any] | None) -> str | None:
    """Why `assertion` asks for a structured field the tool never returns (per its output schema), or None."""
    if assertion.kind not in _NEEDS_PATH or not assertion.path:
        return None
    match = _STRUCTURED_FIELD.match(assertion.path.replace(" ", ""))
    if match is None:
        return None
    if not output_schema:
        return f"{assertion.path}: the tool declares no output schema, so it returns no structured result"
    field = match.group(1) or match.group(2)
    properties = output_schema.get("properties")
    if (
        field
        and isinstance(properties, dict)
        and field not in properties
        and not output_schema.get("additionalProperties")
    ):
        known = ", ".join(sorted(properties)) or "none"
        return f"{assertion.path}: the tool's output schema has no field {field!r} (its fields: {known})"
    return None


def snapshot_of(result: Mapping[str, Any]) -> dict[str, Any]:
    """What a snapshot keeps of a result: its content, structured content and error flag."""
    kept = {"content": result.get("content", []), "isError": bool(result.get("isError", False))}
    if result.get("structuredContent") is not None:
        kept["structuredContent"] = result["structuredContent"]
    return kept


def snapshot_diff(accepted: Any, result: Mapping[str, Any]) -> str:
    """A unified diff from the accepted snapshot to this result ('' when they are equal)."""
    old = json.dumps(accepted, indent=2, sort_keys=True, ensure_ascii=False).splitlines()
    new = json.dumps(snapshot_of(result), indent=2, sort_keys=True, ensure_ascii=False).splitlines()
    if old == new:
        return ""
    return "\n".join(difflib.unified_diff(old, new, "accepted", "this run", lineterm=""))


def _text(result: Mapping[str, Any]) -> str:
    blocks = result.get("content")
    if not isinstance(blocks, list):
        return ""
    return "\n".join(
        str(b.get("text", "")) for b in blocks if isinstance(b, dict) and b.get("type") == "text"
    )


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 120 else text[:117] + "..."


def check_assertion(
    assertion: Assertion,
    result: Mapping[str, Any],
    duration_ms: float,
    output_schema: Mapping[str, Any] | None = None,
) -> str | None:
    """Why `result` fails `assertion`, in words, or None when it holds."""
    kind = assertion.kind
    is_error = bool(result.get("isError", False))
    if kind is AssertionKind.NOT_ERROR:
        return f"The tool returned an error: {_short(_text(result))}" if is_error else None
    if kind is AssertionKind.IS_ERROR:
        return None if is_error else "The tool succeeded, but an error was expected."
    if kind is AssertionKind.TEXT_CONTAINS:
        text = _text(result)
        return (
            None
            if str(assertion.value) in text
            else f"The text does not contain {_short(assertion.value)}; it is {_short(text)}."
        )
    if kind is AssertionKind.TEXT_MATCHES:
        text = _text(result)
        found = re.search(str(assertion.value), text)
        return None if found else f"The text does not match {_short(assertion.value)}; it is {_short(text)}."
    if kind is AssertionKind.MATCHES_OUTPUT_SCHEMA:
        return _schema_failure(output_schema, result)
    if kind is AssertionKind.SIZE_UNDER:
        size = len(json.dumps(result, ensure_ascii=False).encode())
        return None if size < assertion.value else f"The result is {size} bytes, not under {assertion.value}."
    if kind is AssertionKind.TIME_UNDER:
        return (
            None
            if duration_ms < assertion.value
            else f"The call took {duration(duration_ms)}, not under {assertion.value} ms."
        )
    if kind is AssertionKind.SNAPSHOT:
        if assertion.snapshot is None:
            return "No snapshot has been accepted yet; accept this result to start comparing."
        return (
            "The result differs from the accepted snapshot."
            if snapshot_diff(assertion.snapshot, result)
            else None
        )
    return _jsonpath_failure(assertion, result)


def _schema_failure(output_schema: Mapping[str, Any] | None, result: Mapping[str, Any]) -> str | None:
    if not output_schema:
        return "The tool declares no output schema to match."
    structured = result.get("structuredContent")
    if structured is None:
        return "The tool declares an output schema but returned no structured content."
    try:
        validator = _validator(json.dumps(output_schema, sort_keys=True))
    except UnusableSchemaError as error:
        return f"The output schema cannot be checked: {error}."
    errors = sorted(iter_errors(validator, structured), key=str)
    if not errors:
        return None
    return "The structured result does not match the output schema: " + "; ".join(
        e.message for e in errors[:3]
    )


@functools.lru_cache(maxsize=256)
def _validator(schema_json: str) -> Any:
    # Built once per output schema, not once per call: a run calls the same tools many times.
    return usable_validator(json.loads(schema_json))


def _jsonpath_failure(assertion: Assertion, result: Mapping[str, Any]) -> str | None:
    path = str(assertion.path)
    found = [match.value for match in compile_jsonpath(path).find(dict(result))]
    if assertion.kind is AssertionKind.JSONPATH_EXISTS:
        return None if found else f"{path} finds nothing in the result."
    if not found:
        return f"{path} finds nothing in the result, so it cannot be compared with {_short(assertion.value)}."
    if assertion.kind is AssertionKind.JSONPATH_EQUALS:
        if any(value == assertion.value for value in found):
            return None
        return f"{path} is {_short(found[0] if len(found) == 1 else found)}, not {_short(assertion.value)}."
    for value in found:
        if isinstance(value, str) and isinstance(assertion.value, str) and assertion.value in value:
            return None
        if isinstance(value, list | dict) and assertion.value in value:
            return None
    shown = _short(found[0] if len(found) == 1 else found)
    return f"{path} is {shown}, which does not contain {_short(assertion.value)}."
