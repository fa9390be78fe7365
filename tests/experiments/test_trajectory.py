"""Trajectory scorers over real runs: the scripted model calls the real mcp-server-time, and the scorers
pass and fail exactly where the scripted calls say."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter

from tests.fixtures.core import tool_call_response
from yiem import ScriptedLlm
from yiem.experiments import AnyScorer, Dataset, ScorerError, Variant, run_experiment, scorers
from yiem.tool_registry import ToolRegistry


def _tool(registry: ToolRegistry, suffix: str) -> str:
    return next(name for name in sorted(registry.tools) if name.endswith(suffix))


def test_trajectory_scorers_follow_the_scripted_calls(time_registry: ToolRegistry) -> None:
    now, convert = _tool(time_registry, "get_current_time"), _tool(time_registry, "convert_time")
    tokyo = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}
    oslo = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Europe/Oslo"}
    # Item "good": now, then convert to Tokyo, in 3 turns. Item "bad": convert to Oslo, then now, in 4.
    llm = ScriptedLlm(
        [
            tool_call_response((now, {"timezone": "UTC"})),
            tool_call_response((convert, tokyo)),
            "21:00 in Tokyo.",
            tool_call_response((convert, oslo)),
            tool_call_response((now, {"timezone": "UTC"})),
            tool_call_response((now, {"timezone": "Asia/Tokyo"})),
            "13:00 in Oslo.",
        ]
    )
    data = Dataset.from_records(
        [
            {"id": "good", "input": "12:00 UTC in Tokyo?"},
            {"id": "bad", "input": "12:00 UTC in Tokyo?", "forbidden_tools": convert},
        ]
    )
    variant = Variant(name="scripted", llm=llm, tools=[now, convert], tool_execution="sequential")
    chosen = [
        scorers.tool_sequence(now, (convert, {"target_timezone": "Asia/Tokyo"}), name="in order"),
        scorers.tool_sequence(convert, now, order="any_order", name="as a set"),
        scorers.tool_sequence((now, {"timezone": "UTC"}, "exact"), (convert, tokyo, "exact"), order="exact"),
        scorers.tool_sequence((convert, {"properties": {"time": {"pattern": "^1"}}}, "schema"), name="sch"),
        scorers.max_turns(3),
        scorers.forbidden_tools(),
    ]
    result = run_experiment(data, [variant], chosen, tools=time_registry.tools, concurrency=1)
    by_item = {outcome.item_id: outcome for outcome in result.outcomes}
    good = {score.scorer: score for score in by_item["good"].scores}
    bad = {score.scorer: score for score in by_item["bad"].scores}
    assert all(score.passed for score in good.values()), good
    assert by_item["good"].error is None and by_item["bad"].error is None
    # Bad: convert came before now, and not to Tokyo, so in order only `now` is found (1 of 2).
    assert not bad["in order"].passed and bad["in order"].score == 0.5
    assert bad["in order"].reason.startswith("missing " + convert)
    assert bad["as a set"].passed  # both tools were called, in whatever order
    assert not bad["tool_sequence"].passed and bad["tool_sequence"].score == 0.0
    assert bad["sch"].passed  # its time still starts with 1
    assert not bad["max_turns"].passed and bad["max_turns"].reason == "4 turns > 3"
    forbidden = bad["forbidden_tools"]
    assert not forbidden.passed and forbidden.reason == f"called forbidden {convert}"


def test_a_bad_argument_schema_is_refused_in_words() -> None:
    with pytest.raises(ScorerError, match="not a valid JSON Schema"):
        scorers.tool_sequence(("t", {"type": "nope"}, "schema"))
    with pytest.raises(ScorerError, match="gives no schema"):
        scorers.tool_sequence(("t", None, "schema"))
    with pytest.raises(ScorerError, match="calls"):
        scorers.tool_sequence()


def test_trajectory_scorers_round_trip_as_data() -> None:
    chosen = [scorers.tool_sequence("a", ("b", {"x": 1}), order="any_order"), scorers.max_turns(2)]
    adapter = TypeAdapter(list[AnyScorer])
    loaded = adapter.validate_json(adapter.dump_json(chosen))
    assert loaded == chosen
