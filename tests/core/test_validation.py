"""Tool-argument validation (SP-023, SP-024) and the full JSON Schema check."""

from __future__ import annotations

from typing import Any

import pytest

from yiem import AgentTool, AgentToolCall, ToolArgumentError, validate_required_args, validate_tool_arguments
from yiem.validation import schema_problems

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "units": {"type": "string", "enum": ["c", "f"]},
        "days": {"type": "integer"},
        "where": {
            "type": "object",
            "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}},
            "required": ["lat", "lon"],
        },
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["city", "units", "days"],
}


def _tool(**kwargs: Any) -> AgentTool:
    return AgentTool(name="weather", input_schema=SCHEMA, execute=lambda *a: "ok", **kwargs)


def _call(args: dict[str, Any]) -> AgentToolCall:
    return AgentToolCall(id="c1", name="weather", arguments=args)


def test_sp023_all_present_returns_none() -> None:
    assert validate_required_args({"city": "x", "units": "c", "days": 1}, SCHEMA) is None


def test_sp023_missing_names_in_schema_order() -> None:
    assert validate_required_args({"units": "c"}, SCHEMA) == "Missing required arguments: city, days"
    # The schema's order, not the alphabet's: a check that sorted the names would fail here.
    zebra_first = {"type": "object", "required": ["zebra", "apple", "mango"]}
    assert validate_required_args({}, zebra_first) == "Missing required arguments: zebra, apple, mango"
    assert validate_required_args({"apple": 1}, zebra_first) == "Missing required arguments: zebra, mango"


def test_sp023_schema_without_required() -> None:
    assert validate_required_args({}, {"type": "object"}) is None


def test_sp024_returns_arguments_when_valid() -> None:
    args = {"city": "Bangkok", "units": "c", "days": 2}
    assert validate_tool_arguments(_tool(), _call(args)) == args


def test_sp024_missing_arguments_raise_with_the_spec_message() -> None:
    with pytest.raises(ToolArgumentError) as info:
        validate_tool_arguments(_tool(), _call({"units": "c"}))
    assert str(info.value) == "Missing required arguments: city, days"
    assert info.value.tool_name == "weather"


def test_sp024_tool_validator_replaces_the_default() -> None:
    seen: list[dict[str, Any]] = []

    def own(args: dict[str, Any]) -> str | None:
        seen.append(args)
        return None if args.get("token") == "secret" else "token must be 'secret'"

    tool = _tool(validate_required_args=own)
    # The default check would complain about city/units/days; the tool's own check does not.
    assert validate_tool_arguments(tool, _call({"token": "secret"})) == {"token": "secret"}
    with pytest.raises(ToolArgumentError, match="token must be 'secret'"):
        validate_tool_arguments(tool, _call({"token": "nope"}))
    assert len(seen) == 2


def test_full_schema_one_line_per_problem_with_path() -> None:
    args = {
        "city": 5,
        "units": "kelvin",
        "days": 1,
        "where": {"lat": "north"},
        "tags": ["a", 3],
    }
    with pytest.raises(ToolArgumentError) as info:
        validate_tool_arguments(_tool(), _call(args))
    problems = info.value.problems
    assert str(info.value).splitlines() == problems
    assert "city: 5 is not of type 'string'" in problems
    assert any(p.startswith("units: 'kelvin' is not one of") for p in problems)
    assert "where.lat: 'north' is not of type 'number'" in problems
    assert "where: 'lon' is a required property" in problems
    assert "tags[1]: 3 is not of type 'string'" in problems
    assert len(problems) == 5


def test_missing_and_wrong_type_together_keep_the_spec_line_first() -> None:
    with pytest.raises(ToolArgumentError) as info:
        validate_tool_arguments(_tool(), _call({"units": "c", "days": "two"}))
    assert info.value.problems == ["Missing required arguments: city", "days: 'two' is not of type 'integer'"]


def test_broken_schema_falls_back_to_required_check() -> None:
    broken = {"type": "object", "properties": {"a": {"type": "no-such-type"}}, "required": ["a"]}
    assert schema_problems({"a": 1}, broken) == []
    assert validate_required_args({}, broken) == "Missing required arguments: a"


def test_validator_cache_follows_schema_identity() -> None:
    first = {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert schema_problems({"n": "x"}, first) == ["n: 'x' is not of type 'integer'"]
    second = {"type": "object", "properties": {"n": {"type": "string"}}}
    assert schema_problems({"n": "x"}, second) == []
