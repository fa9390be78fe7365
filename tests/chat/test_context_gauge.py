"""The context gauge and the cost of the next send, on hand-computed cases."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from yiem.budgets import tokens_by_characters
from yiem.chat import context_gauge, conversation_tokens, expected_output, latest_turns_start, send_estimate
from yiem.types import (
    AgentMessage,
    AssistantMessage,
    LlmModel,
    LlmUsage,
    ModelCost,
    TextContent,
    ToolResultMessage,
    UserMessage,
)

PRICED = LlmModel(
    id="m",
    provider="openai",
    cost=ModelCost(input=3.0, output=15.0),
    price_known=True,
    price_source="genai-prices 0.0.1 (openai/m)",
)


def _user(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)])


def _reply(text: str, input_tokens: int = 0, output_tokens: int = 0, **fields: object) -> AssistantMessage:
    usage = LlmUsage(input_tokens=input_tokens, output_tokens=output_tokens)
    return AssistantMessage(content=[TextContent(text=text)], usage=usage, **fields)  # type: ignore[arg-type]


def test_the_latest_reply_usage_counts_and_what_follows_it_is_estimated() -> None:
    result = ToolResultMessage(tool_call_id="c", tool_name="t", content=[TextContent(text="x" * 40)])
    messages: list[AgentMessage] = [_user("hi"), _reply("a", 100, 10), _user("more"), _reply("b", 300, 20)]
    messages.append(result)
    # 300 in + 20 out of the latest reply, then 40 characters / 4 = 10 tokens of the tool result.
    assert conversation_tokens(messages, "system", tokens_by_characters) == 330


def test_cached_tokens_are_part_of_the_context() -> None:
    reply = _reply("a")
    reply.usage = LlmUsage(input_tokens=50, cache_read_tokens=200, output_tokens=5)
    assert conversation_tokens([_user("hi"), reply], "", tokens_by_characters) == 255


def test_without_a_counted_reply_everything_is_estimated() -> None:
    # "s" * 8, "u" * 12 and "a" * 3 joined by two newlines: 25 characters, 7 tokens (rounded up).
    messages: list[AgentMessage] = [_user("u" * 12), _reply("a" * 3)]
    assert conversation_tokens(messages, "s" * 8, tokens_by_characters) == 7
    assert conversation_tokens([], "", tokens_by_characters) == 0


def test_replies_from_before_the_conversation_began_are_estimated_instead() -> None:
    # Turns carried into a new conversation keep their old usage, which counted the dropped turns.
    began = datetime(2026, 1, 2, tzinfo=UTC)
    old = _reply("a" * 20, 5000, 100, timestamp=began - timedelta(days=1))
    messages: list[AgentMessage] = [_user("u" * 20), old]
    assert conversation_tokens(messages, "", tokens_by_characters, since=began) == 11  # 41 characters
    assert conversation_tokens(messages, "", tokens_by_characters) == 5100


def test_gauge_levels_at_80_and_100_percent() -> None:
    ok = context_gauge(799, 1000)
    assert (ok.level, ok.fraction) == ("ok", 0.799)
    assert ok.words == "799 of 1,000 tokens of the context window (79%)"
    amber = context_gauge(800, 1000)
    assert amber.level == "amber" and "nearly full" in amber.words
    full = context_gauge(1000, 1000)
    assert full.level == "full" and full.fraction == 1.0
    assert "not sent" in full.words and "Start a new chat" in full.words and "drop the oldest" in full.words
    assert context_gauge(1500, 1000).level == "full"


def test_an_unknown_context_window_gives_no_gauge_and_says_so() -> None:
    gauge = context_gauge(5000, 0)
    assert gauge.level == "unknown" and gauge.fraction is None
    assert gauge.words == "The model's context window is unknown, so there is no gauge of it."


def test_expected_output_is_the_recent_average_capped_by_max_tokens() -> None:
    messages: list[AgentMessage] = [_user("q")]
    assert expected_output(messages, 256) == 256  # no reply yet: the most it may write
    assert expected_output(messages, None) == 0
    for out in (100, 200, 400, 10, 20, 30):
        messages += [_reply("a", 10, out), _user("q")]
    # The latest five: (200 + 400 + 10 + 20 + 30) / 5 = 132.
    assert expected_output(messages, None) == 132
    assert expected_output(messages, 100) == 100
    assert expected_output(messages, 500) == 132


def test_send_cost_uses_the_models_prices_and_names_their_source() -> None:
    estimate = send_estimate(1000, 200, PRICED)
    # 1000 × $3/M + 200 × $15/M = $0.003 + $0.003.
    assert estimate.cost == 0.006
    assert estimate.words == (
        "This send ≈ $0.006000 (1,000 tokens in + about 200 out; prices from genai-prices 0.0.1 (openai/m))"
    )
    big = send_estimate(100_000, 1000, PRICED)
    assert big.cost == 0.315 and "$0.3150" in big.words


def test_an_unknown_price_says_price_unknown_never_zero() -> None:
    local = LlmModel(id="smollm2", provider="local", price_source="local model: no price")
    estimate = send_estimate(1000, 200, local)
    assert estimate.cost is None
    words = "This send: 1,000 tokens in + about 200 out · price unknown (local model: no price)"
    assert estimate.words == words
    assert "$" not in estimate.words
    unknown = send_estimate(10, 0, LlmModel(id="x", price_source="price unknown"))
    assert unknown.words == "This send: 10 tokens in + about 0 out · price unknown"


def test_dropping_old_turns_keeps_the_latest_whole_turns_that_fit() -> None:
    messages: list[AgentMessage] = [
        _user("a" * 40),  # 10 tokens each
        _reply("b" * 40),
        _user("c" * 40),
        _reply("d" * 40),
        _user("e" * 40),
        _reply("f" * 40),
    ]
    assert latest_turns_start(messages, tokens_by_characters, 45) == 2  # the last two turns: 40 tokens
    assert latest_turns_start(messages, tokens_by_characters, 35) == 4  # 30 would cut a turn: only the last
    assert latest_turns_start(messages, tokens_by_characters, 15) == 6  # not even the last turn fits
    assert latest_turns_start(messages, tokens_by_characters, 1000) == 0
