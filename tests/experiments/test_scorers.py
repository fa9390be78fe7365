"""Every scorer against hand-computed cases: score, pass/fail at the threshold, reason."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter

from yiem import AgentToolCall, AssistantMessageToolCall, LlmModel, ScriptedLlm
from yiem.experiments import (
    AnyScorer,
    DatasetItem,
    ItemOutcome,
    ScorerError,
    Variant,
    parse_verdict,
    scorers,
)


def outcome(output: str = "", **fields: Any) -> ItemOutcome:
    return ItemOutcome(item_id="i1", variant="v", output=output, **fields)


ITEM = DatasetItem(id="i1", input="What is the capital of France?", expected="Paris")


def test_exact() -> None:
    assert scorers.exact().score(ITEM, outcome("  Paris\n")).passed
    miss = scorers.exact().score(ITEM, outcome("paris"))
    assert (miss.score, miss.passed, miss.reason) == (0.0, False, "expected 'Paris'")
    assert scorers.exact(case_sensitive=False).score(ITEM, outcome("PARIS")).score == 1.0
    assert scorers.exact("Lyon").score(ITEM, outcome("Lyon")).passed


def test_exact_without_expected_fails_in_words() -> None:
    item = DatasetItem(input="hi")
    verdict = scorers.exact().score(item, outcome("hi"))
    assert not verdict.passed
    assert "no expected value" in verdict.reason


def test_contains_scores_the_share_found() -> None:
    assert scorers.contains().score(ITEM, outcome("It is paris.")).passed  # case-insensitive by default
    partial = scorers.contains("red", "green", "blue").score(ITEM, outcome("red and blue"))
    assert partial.score == pytest.approx(2 / 3)
    assert not partial.passed
    assert partial.reason == "missing 'green'"
    loose = scorers.contains("red", "green", "blue", threshold=0.6).score(ITEM, outcome("red and blue"))
    assert loose.passed
    assert not scorers.contains("Paris", case_sensitive=True).score(ITEM, outcome("paris")).passed


def test_regex_uses_re2() -> None:
    verdict = scorers.regex(r"\b\d{4}\b").score(ITEM, outcome("It was founded in 1789 or so"))
    assert (verdict.score, verdict.reason) == (1.0, "matched '1789'")
    assert not scorers.regex(r"^\d+$").score(ITEM, outcome("abc")).passed
    # A catastrophic pattern for backtracking engines is linear in RE2: this returns at once.
    assert not scorers.regex(r"(a+)+$").score(ITEM, outcome("a" * 50_000 + "!")).passed
    with pytest.raises(ScorerError, match="not a valid RE2"):
        scorers.regex(r"(?<=look)behind")  # lookbehind is not in RE2


def test_valid_json_and_fences() -> None:
    assert scorers.valid_json().score(ITEM, outcome('{"a": 1}')).passed
    assert scorers.valid_json().score(ITEM, outcome("```json\n[1, 2]\n```")).passed
    bad = scorers.valid_json().score(ITEM, outcome('{"a": }'))
    assert not bad.passed
    assert bad.reason.startswith("not valid JSON: Expecting value (line 1, column 7)")


def test_json_schema() -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "population": {"type": "integer", "minimum": 0}},
        "required": ["city"],
    }
    scorer = scorers.json_schema(schema)
    assert scorer.score(ITEM, outcome('{"city": "Paris", "population": 2100000}')).passed
    wrong = scorer.score(ITEM, outcome('{"city": "Paris", "population": -3}'))
    assert not wrong.passed
    assert wrong.reason == "at population: -3 is less than the minimum of 0"
    missing = scorer.score(ITEM, outcome("{}"))
    assert missing.reason == "at the top level: 'city' is a required property"
    with pytest.raises(ScorerError, match="not valid"):
        scorers.json_schema({"type": "no-such-type"})


def test_numeric_reads_the_last_number() -> None:
    item = DatasetItem(input="2+2?", expected="4")
    assert scorers.numeric().score(item, outcome("2 + 2 = 4")).passed
    off = scorers.numeric().score(item, outcome("2 + 2 = 5"))
    assert (off.passed, off.reason) == (False, "5 is 1 away from 4 (allowed 0)")
    assert scorers.numeric(tolerance=1).score(item, outcome("5")).passed
    assert scorers.numeric(1000, tolerance=0.05, relative=True).score(item, outcome("1,049.5")).passed
    assert not scorers.numeric(1000, tolerance=0.05, relative=True).score(item, outcome("1051")).passed
    assert scorers.numeric().score(item, outcome("no idea")).reason == "no number in the output"
    assert "not a number" in scorers.numeric().score(ITEM, outcome("4")).reason


def test_called_tool_with_arguments_subset() -> None:
    call = AgentToolCall(id="c1", name="get_time", arguments={"timezone": "UTC", "format": {"h": 24}})
    ran = outcome("ok", messages=[AssistantMessageToolCall(tool_calls=[call])])
    assert scorers.called_tool("get_time").score(ITEM, ran).reason == "called get_time 1×"
    assert scorers.called_tool("get_time", {"timezone": "UTC"}).score(ITEM, ran).passed
    assert scorers.called_tool("get_time", {"format": {"h": 24}}).score(ITEM, ran).passed
    wrong = scorers.called_tool("get_time", {"timezone": "Europe/Oslo"}).score(ITEM, ran)
    assert not wrong.passed
    assert wrong.reason.startswith("called get_time, but with")
    assert scorers.called_tool("other").score(ITEM, ran).reason == "never called other"


def test_cost_and_latency_limits() -> None:
    assert scorers.cost_limit(0.01).score(ITEM, outcome(cost=0.005)).passed
    assert not scorers.cost_limit(0.01).score(ITEM, outcome(cost=0.02)).passed
    unknown = scorers.cost_limit(0.01).score(ITEM, outcome(cost=None))
    assert (unknown.passed, unknown.reason) == (False, "price unknown")
    assert scorers.latency_limit(500).score(ITEM, outcome(latency_ms=499.0)).passed
    slow = scorers.latency_limit(500).score(ITEM, outcome(latency_ms=812.0))
    assert (slow.passed, slow.reason) == (False, "812 ms > 500 ms")


def test_rubric_judge_usage_is_counted_apart() -> None:
    judge_llm = ScriptedLlm(
        [
            {
                "content": '{"score": 0.8, "reason": "Polite and correct."}',
                "usage": {"inputTokens": 50, "outputTokens": 9},
            },
            "Score: 3/10 because it is rude",
            "I cannot grade this.",
        ]
    )
    priced = LlmModel(id="judge", provider="scripted", price_known=True)
    priced.cost.input = 1.0  # dollars per 1M tokens
    priced.cost.output = 2.0
    scorer = scorers.rubric("Is it polite?", Variant(name="judge", llm=judge_llm, model=priced))
    first = scorer.score(ITEM, outcome("Paris, sir."))
    assert (first.score, first.passed, first.reason) == (0.8, True, "Polite and correct.")
    assert first.judge_usage is not None and first.judge_usage.input_tokens == 50
    assert first.judge_cost == pytest.approx((50 * 1.0 + 9 * 2.0) / 1_000_000)
    second = scorer.score(ITEM, outcome("Paris, obviously."))
    assert (second.score, second.passed) == (pytest.approx(0.3), False)
    third = scorer.score(ITEM, outcome("Paris"))
    assert not third.passed
    assert third.reason == "the judge gave no score: 'I cannot grade this.'"
    # What the judge was asked: the task, the expected answer, the output and the rubric.
    asked = judge_llm.requests[0].messages[0].content[0].text  # type: ignore[union-attr]
    assert "What is the capital of France?" in asked and "Paris, sir." in asked and "Is it polite?" in asked
    # A judge whose variant sets no limit writes a verdict of bounded length.
    options = judge_llm.requests[0].options
    assert options is not None and options.max_tokens == 256


def test_parse_verdict_scales() -> None:
    assert parse_verdict('```json\n{"score": 1, "reason": "good"}\n```') == (1.0, "good")
    assert parse_verdict("score = 7") == (pytest.approx(0.7), "score = 7")
    assert parse_verdict("85") == (pytest.approx(0.85), "85")
    assert parse_verdict("between 3 and 4") is None


def test_scorers_round_trip_as_data() -> None:
    adapter: TypeAdapter[list[AnyScorer]] = TypeAdapter(list[AnyScorer])
    original = [
        scorers.contains("a", "b", threshold=0.5, name="ab"),
        scorers.regex(r"\d+"),
        scorers.json_schema({"type": "object"}),
        scorers.called_tool("t", {"x": 1}),
        scorers.rubric("be brief", Variant(name="judge", provider="openai", model_id="gpt-4o-mini")),
    ]
    loaded = adapter.validate_json(adapter.dump_json(original))
    assert [s.name for s in loaded] == ["ab", "regex", "json_schema", "called_tool", "rubric"]
    assert loaded[1].score(ITEM, outcome("x 12")).passed  # the RE2 pattern was compiled again
    assert loaded[2].score(ITEM, outcome("{}")).passed
