"""Tool-argument validation (SP-023, SP-024) and the full JSON Schema check."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.fixtures.core import ContextFactory, agent_end, run_loop, tool_call_response, tool_results
from tests.mcp_servers.scripted import HOSTILE_TOOLS
from yiem import (
    AbortSignal,
    AgentTool,
    AgentToolCall,
    LlmModel,
    ScriptedLlm,
    ToolArgumentError,
    validate_required_args,
    validate_tool_arguments,
)
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


def _hostile(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = next(t for t in HOSTILE_TOOLS if t["name"] == name)["inputSchema"]
    return schema


def _hostile_tool(name: str, ran: list[dict[str, Any]] | None = None) -> AgentTool:
    def execute(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal) -> str:
        (ran if ran is not None else []).append(arguments)
        return "ran"

    return AgentTool(name=name, input_schema=_hostile(name), execute=execute)


@pytest.mark.timeout(10)  # Python's backtracking `re` would take longer than the age of the universe
def test_a_catastrophic_pattern_is_checked_in_linear_time() -> None:
    """Issue 12: the loop's own check used Python's `re`, so a server's `^(a+)+$` stalled a Chat call."""
    hostile = "a" * 40 + "!"
    tool = _hostile_tool("backtracking_pattern")
    call = AgentToolCall(id="c1", name=tool.name, arguments={"word": hostile, "words": ["aa", hostile]})
    with pytest.raises(ToolArgumentError) as info:
        validate_tool_arguments(tool, call)
    assert info.value.problems == [
        f"word: '{hostile}' does not match '^(a+)+$'",
        f"words[1]: '{hostile}' does not match '^(a+)+$'",
    ]
    fine = AgentToolCall(id="c2", name=tool.name, arguments={"word": "a" * 40})
    assert validate_tool_arguments(tool, fine) == {"word": "a" * 40}


def test_ordinary_patterns_and_short_refs_are_still_checked() -> None:
    schema = {
        "type": "object",
        "properties": {
            "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "point": {"$ref": "#/$defs/Point"},
        },
        "patternProperties": {"^x-": {"type": "integer"}},
        "additionalProperties": False,
        "$defs": {"Point": {"$ref": "#/$defs/Pair"}, "Pair": {"type": "array", "maxItems": 2}},
    }
    assert schema_problems({"code": "ABC", "point": [1, 2], "x-n": 1}, schema) == []
    assert schema_problems({"code": "abc", "point": [1, 2, 3], "x-n": "one", "y": 1}, schema) == [
        "arguments: 'y' does not match any of the regexes: '^x-'",
        "code: 'abc' does not match '^[A-Z]{3}$'",
        "point: [1, 2, 3] is too long",
        "x-n: 'one' is not of type 'integer'",
    ]


@pytest.mark.parametrize("name", ["ref_chain", "nested_ref_chain"])
def test_a_long_ref_chain_is_refused_in_words(name: str) -> None:
    """Issue 12: following a 3,000-step `$ref` chain raised RecursionError inside the loop's check."""
    call = AgentToolCall(id="c1", name=name, arguments={"a": "x", "list": ["x"]})
    with pytest.raises(ToolArgumentError) as info:
        validate_tool_arguments(_hostile_tool(name), call)
    assert re.fullmatch(
        r"The tool's input schema cannot be used to check its arguments: "
        r"its reference '#/\$defs/step\d+' goes through more than 64 steps",
        str(info.value),
    )
    assert info.value.tool_name == name


def test_the_loop_answers_a_tool_with_an_unusable_schema_with_an_error_result(
    make_context: ContextFactory, core_model: LlmModel
) -> None:
    ran: list[dict[str, Any]] = []
    context = make_context(_hostile_tool("ref_chain", ran))
    llm = ScriptedLlm([tool_call_response(("ref_chain", {"a": "x"})), "Sorry."])
    events = run_loop(context, llm, core_model)
    assert agent_end(events).stop_reason == "end_turn"
    [result] = tool_results(events)
    assert result.is_error
    assert "goes through more than 64 steps" in result.text
    assert ran == []
