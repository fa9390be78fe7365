"""Each assertion kind on literal results: one that holds, one that fails, and the failure's words.

The command line and the page only ever meet a few kinds against real servers; here every kind is
checked both ways, so an assertion that inverts its test, or stops saying why it failed, fails here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from yiem.checks import Assertion, AssertionKind, check_assertion
from yiem.checks._assertions import snapshot_of

WEATHER = {
    "content": [{"type": "text", "text": "Echo: hello 42"}],
    "structuredContent": {"temperature": 21, "tags": ["sun", "wind"]},
    "isError": False,
}
FAILED = {"content": [{"type": "text", "text": "Unknown tool: weather"}], "isError": True}
SCHEMA = {
    "type": "object",
    "properties": {"temperature": {"type": "number"}, "tags": {"type": "array"}},
    "required": ["temperature"],
}
# The size as the assertion counts it: the result as compact JSON, in UTF-8 bytes.
WEATHER_BYTES = len(json.dumps(WEATHER, ensure_ascii=False).encode())


def _with_text(text: str) -> dict[str, Any]:
    return {**WEATHER, "content": [{"type": "text", "text": text}]}


@dataclass(frozen=True)
class Case:
    assertion: Assertion
    words: str  # how reports name the assertion
    holds: dict[str, Any]
    fails: dict[str, Any]
    why: str  # the failure, word for word
    holds_ms: float = 5.0
    fails_ms: float = 5.0


CASES = [
    Case(
        Assertion(kind=AssertionKind.NOT_ERROR),
        "is not an error",
        WEATHER,
        FAILED,
        'The tool returned an error: "Unknown tool: weather"',
    ),
    Case(
        Assertion(kind=AssertionKind.IS_ERROR),
        "is an error",
        FAILED,
        WEATHER,
        "The tool succeeded, but an error was expected.",
    ),
    Case(
        Assertion(kind=AssertionKind.TEXT_CONTAINS, value="hello"),
        'text contains "hello"',
        WEATHER,
        _with_text("Echo: bye"),
        'The text does not contain "hello"; it is "Echo: bye".',
    ),
    Case(
        Assertion(kind=AssertionKind.TEXT_MATCHES, value=r"hello \d+$"),
        r'text matches "hello \\d+$"',
        WEATHER,
        _with_text("Echo: hello world"),
        r'The text does not match "hello \\d+$"; it is "Echo: hello world".',
    ),
    Case(
        Assertion(kind=AssertionKind.MATCHES_OUTPUT_SCHEMA),
        "structured result matches the tool's output schema",
        WEATHER,
        {**WEATHER, "structuredContent": {"temperature": "warm"}},
        "The structured result does not match the output schema: 'warm' is not of type 'number'",
    ),
    Case(
        Assertion(kind=AssertionKind.JSONPATH_EQUALS, path="$.structuredContent.temperature", value=21),
        "$.structuredContent.temperature equals 21",
        WEATHER,
        {**WEATHER, "structuredContent": {"temperature": 22}},
        "$.structuredContent.temperature is 22, not 21.",
    ),
    Case(
        Assertion(kind=AssertionKind.JSONPATH_CONTAINS, path="$.structuredContent.tags", value="sun"),
        '$.structuredContent.tags contains "sun"',
        WEATHER,
        {**WEATHER, "structuredContent": {"temperature": 21, "tags": ["rain"]}},
        '$.structuredContent.tags is ["rain"], which does not contain "sun".',
    ),
    Case(
        Assertion(kind=AssertionKind.JSONPATH_EXISTS, path="$.structuredContent.tags[1]"),
        "$.structuredContent.tags[1] exists",
        WEATHER,
        {**WEATHER, "structuredContent": {"temperature": 21, "tags": ["sun"]}},
        "$.structuredContent.tags[1] finds nothing in the result.",
    ),
    Case(
        # At the boundary: a result of exactly N bytes is not under N.
        Assertion(kind=AssertionKind.SIZE_UNDER, value=WEATHER_BYTES + 1),
        f"result under {WEATHER_BYTES + 1} bytes",
        WEATHER,
        _with_text("Echo: hello 420"),
        f"The result is {WEATHER_BYTES + 1} bytes, not under {WEATHER_BYTES + 1}.",
    ),
    Case(
        Assertion(kind=AssertionKind.TIME_UNDER, value=100),
        "time under 100 ms",
        WEATHER,
        WEATHER,
        "The call took 100 ms, not under 100 ms.",
        holds_ms=99.9,
        fails_ms=100.0,
    ),
    Case(
        Assertion(kind=AssertionKind.SNAPSHOT, snapshot=snapshot_of(WEATHER)),
        "equals the accepted snapshot",
        {**WEATHER, "_meta": {"not": "kept in a snapshot"}},
        {**WEATHER, "structuredContent": {"temperature": 21, "tags": ["wind", "sun"]}},
        "The result differs from the accepted snapshot.",
    ),
]


def test_every_kind_has_a_case() -> None:
    assert sorted(case.assertion.kind for case in CASES) == sorted(AssertionKind)


@pytest.mark.parametrize("case", CASES, ids=[case.assertion.kind.value for case in CASES])
def test_each_kind_holds_fails_and_says_why(case: Case) -> None:
    assert case.assertion.words() == case.words
    assert check_assertion(case.assertion, case.holds, case.holds_ms, SCHEMA) is None
    assert check_assertion(case.assertion, case.fails, case.fails_ms, SCHEMA) == case.why


@pytest.mark.parametrize(
    ("assertion", "result", "why"),
    [
        (
            Assertion(kind=AssertionKind.MATCHES_OUTPUT_SCHEMA),
            FAILED,
            "The tool declares an output schema but returned no structured content.",
        ),
        (
            Assertion(kind=AssertionKind.JSONPATH_EQUALS, path="$.structuredContent.wind", value=3),
            WEATHER,
            "$.structuredContent.wind finds nothing in the result, so it cannot be compared with 3.",
        ),
        (
            Assertion(kind=AssertionKind.JSONPATH_CONTAINS, path="$.content[0].text", value="bye"),
            WEATHER,
            '$.content[0].text is "Echo: hello 42", which does not contain "bye".',
        ),
        (
            Assertion(kind=AssertionKind.SNAPSHOT),
            WEATHER,
            "No snapshot has been accepted yet; accept this result to start comparing.",
        ),
    ],
    ids=["schema-no-structured", "equals-nothing-found", "contains-text", "snapshot-none-accepted"],
)
def test_the_other_ways_to_fail_say_why(assertion: Assertion, result: dict[str, Any], why: str) -> None:
    assert check_assertion(assertion, result, 5.0, SCHEMA) == why


def test_a_tool_without_an_output_schema_fails_the_schema_assertion() -> None:
    assertion = Assertion(kind=AssertionKind.MATCHES_OUTPUT_SCHEMA)
    assert check_assertion(assertion, WEATHER, 5.0, None) == "The tool declares no output schema to match."


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ({"kind": "jsonpath_equals", "value": 1}, "a jsonpath_equals assertion needs a JSONPath (path)"),
        ({"kind": "jsonpath_exists", "path": "$[["}, "the JSONPath '$[[' does not parse"),
        ({"kind": "size_under", "value": 0}, "a size_under assertion needs a positive number (value)"),
        ({"kind": "time_under", "value": True}, "a time_under assertion needs a positive number (value)"),
        ({"kind": "text_contains", "value": 3}, "a text_contains assertion needs text (value)"),
        ({"kind": "text_matches", "value": "("}, "the pattern '(' is not a regular expression"),
    ],
)
def test_an_assertion_that_cannot_be_checked_is_refused_in_words(fields: dict[str, Any], why: str) -> None:
    # Pydantic wraps the validator's error in its ValidationError (a ValueError, as the page catches).
    with pytest.raises(ValueError) as refused:
        Assertion.model_validate(fields)
    assert why in str(refused.value)
