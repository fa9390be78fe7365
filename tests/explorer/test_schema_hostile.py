"""Schemas the form cannot draw or check naively, refused in words or checked in linear time
(issue 12): broken shapes, long `$ref` chains, deep nesting, backtracking patterns."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.mcp_servers.scripted import BACKTRACKING_PATTERN, HOSTILE_TOOLS
from yiem.explorer import (
    FormValueError,
    ToolForm,
    UnusableSchemaError,
    check_structured_content,
)
from yiem.mcp import CallToolResult


def test_bad_schemas_are_refused_in_words() -> None:
    with pytest.raises(UnusableSchemaError, match="does not resolve"):
        ToolForm({"type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"}}})
    with pytest.raises(UnusableSchemaError, match="must describe an object"):
        ToolForm({"type": "string"})
    with pytest.raises(UnusableSchemaError, match="refers to itself"):
        ToolForm(
            {
                "type": "object",
                "$defs": {"A": {"$ref": "#/$defs/A"}},
                "properties": {"a": {"$ref": "#/$defs/A"}},
            }
        )


def _hostile(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = next(t for t in HOSTILE_TOOLS if t["name"] == name)["inputSchema"]
    return schema


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("properties_list", "properties: [{'name': 'a', 'type': 'string'}] is not of type 'object'"),
        ("required_number", "required: 5 is not of type 'array'"),
        ("ref_chain", "more than 64 steps"),
        ("nested_ref_chain", "more than 64 steps"),
    ],
)
def test_a_schema_the_form_cannot_draw_is_refused_in_words(name: str, words: str) -> None:
    """Issue 12: these raised AttributeError, TypeError and RecursionError, crashing the page."""
    with pytest.raises(UnusableSchemaError) as caught:
        ToolForm(_hostile(name))
    assert words in str(caught.value)


def test_schemas_nested_past_any_recursion_limit_are_refused_in_words() -> None:
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(5000):
        deep = {"type": "array", "items": deep}
    with pytest.raises(UnusableSchemaError, match="nested too deeply"):
        ToolForm({"type": "object", "properties": {"a": deep}})


def test_a_broken_output_schema_is_reported_not_raised() -> None:
    result = CallToolResult.model_validate({"content": [], "structuredContent": {"a": "x"}, "isError": False})
    assert "cannot be checked" in (check_structured_content(_hostile("properties_list"), result) or "")
    assert "cannot be checked" in (check_structured_content(_hostile("nested_ref_chain"), result) or "")
    pattern = {"type": "object", "properties": {"a": {"type": "string", "pattern": BACKTRACKING_PATTERN}}}
    stalled = CallToolResult.model_validate(
        {"content": [], "structuredContent": {"a": "a" * 60 + "!"}, "isError": False}
    )
    assert "does not match" in (check_structured_content(pattern, stalled) or "")


@pytest.mark.timeout(60)  # a backtracking engine would take longer than the age of the universe
def test_a_backtracking_pattern_is_checked_in_linear_time() -> None:
    form = ToolForm(_hostile("backtracking_pattern"))
    hostile = "a" * 60 + "!"
    assert form.field_error("word", hostile) == f"'{hostile}' does not match '^(a+)+$'"
    assert form.field_error("word", "a" * 60) is None
    assert form.field_error("words", json.dumps(["aa", hostile])) == (
        f"1: '{hostile}' does not match '^(a+)+$'"
    )
    with pytest.raises(FormValueError, match="does not match"):
        form.validate({"word": hostile})
    form.validate({"word": "aaa", "words": ["a"]})


def test_patterns_re2_cannot_run_are_left_to_the_server() -> None:
    # Lookahead and back-references have no linear-time engine; the server checks them.
    form = ToolForm(
        {
            "type": "object",
            "properties": {
                "a": {"type": "string", "pattern": "^(?=x)x+$"},
                "b": {"type": "string", "pattern": r"^(a)\1$"},
            },
            "patternProperties": {"^(?!z)": {"type": "string"}},
        }
    )
    form.validate({"a": "y", "b": "ab", "q": 1})
    assert (
        ToolForm(
            {"type": "object", "properties": {"p": {"type": "string", "pattern": "^[0-9]+$"}}}
        ).field_error("p", "12x")
        == "'12x' does not match '^[0-9]+$'"
    )


def test_pattern_properties_use_the_linear_engine() -> None:
    form = ToolForm({"type": "object", "patternProperties": {BACKTRACKING_PATTERN: {"type": "integer"}}})
    with pytest.raises(FormValueError, match="is not of type 'integer'"):
        form.validate({"a" * 60: "x", "a" * 60 + "!": "y"})
