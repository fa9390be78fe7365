"""Types (SP-001..SP-008, SP-019..SP-022): aliases, JSON round trips, usage and cost, AbortSignal."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from yiem import (
    AbortSignal,
    AgentContext,
    AgentLoopConfig,
    AgentMessage,
    AgentTool,
    AgentToolCall,
    AssistantMessage,
    AssistantMessageToolCall,
    ImageContent,
    LlmModel,
    LlmUsage,
    ModelCost,
    ReasoningContent,
    TextContent,
    ToolResultMessage,
    UsageCost,
    UserMessage,
)

MESSAGES = TypeAdapter(AgentMessage)
WHEN = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)

EXAMPLES: list[Any] = [
    UserMessage(
        content=[TextContent(text="hi"), ImageContent(data="QUJD", mime_type="image/jpeg")], timestamp=WHEN
    ),
    AssistantMessage(
        content=[ReasoningContent(text="think"), TextContent(text="22°C")],
        api="openai-completions",
        provider="openai",
        model="gpt-4",
        usage=LlmUsage(input_tokens=10, output_tokens=5, cache_read_tokens=2, reasoning_tokens=1),
        stop_reason="stop",
        timestamp=WHEN,
        cost=UsageCost(input=0.1, output=0.2, total=0.3),
        duration_ms=12.5,
        ttft_ms=3.0,
    ),
    AssistantMessageToolCall(
        tool_calls=[
            AgentToolCall(id="call_1", name="getWeather", arguments={"city": "Bangkok", "days": [1, 2]})
        ],
        content=[ReasoningContent(text="need weather")],
        error_message="partial",
        timestamp=WHEN,
    ),
    ToolResultMessage(
        tool_call_id="call_1",
        tool_name="getWeather",
        content=[TextContent(text="22")],
        details={"raw": {"t": 22}},
        usage=LlmUsage(input_tokens=1),
        added_tool_names=["x"],
        is_error=True,
        timestamp=WHEN,
    ),
]


@pytest.mark.parametrize("message", EXAMPLES, ids=lambda m: type(m).__name__)
def test_sp001_to_sp004_json_round_trip(message: Any) -> None:
    """SP-001..SP-004: JSON -> object -> JSON unchanged, as the right class."""
    text = json.dumps(message.to_json_dict())
    again = MESSAGES.validate_python(json.loads(text))
    assert type(again) is type(message)
    assert again == message
    assert json.dumps(again.to_json_dict()) == text


def test_camel_case_aliases_and_both_spellings() -> None:
    """SP-003/SP-004: camelCase on the wire, PEP 8 in Python, both accepted on input."""
    dumped = EXAMPLES[3].to_json_dict()
    assert {"toolCallId", "toolName", "isError", "addedToolNames"} <= dumped.keys()
    assert dumped["role"] == "toolResult"
    assert "stopReason" in EXAMPLES[1].to_json_dict() and "errorMessage" in EXAMPLES[1].to_json_dict()
    assert EXAMPLES[0].to_json_dict()["content"][1]["mimeType"] == "image/jpeg"
    snake = ToolResultMessage.model_validate({"tool_call_id": "a", "tool_name": "b", "is_error": True})
    camel = ToolResultMessage.model_validate({"toolCallId": "a", "toolName": "b", "isError": True})
    assert (snake.tool_call_id, snake.is_error) == (camel.tool_call_id, camel.is_error) == ("a", True)


def test_sp005_sp006_defaults() -> None:
    assert AgentToolCall(id="1", name="n").type == "function"
    assert (TextContent(text="").type, ImageContent(data="").type, ReasoningContent(text="").type) == (
        "text",
        "image",
        "reasoning",
    )


def test_timestamps_are_utc() -> None:
    local = datetime(2026, 1, 1, 12, 0, tzinfo=timezone(timedelta(hours=7)))
    assert UserMessage(timestamp=local).timestamp == datetime(2026, 1, 1, 5, 0, tzinfo=UTC)
    assert UserMessage(timestamp=datetime(2026, 1, 1)).timestamp.tzinfo == UTC
    assert UserMessage().timestamp.tzinfo == UTC


def test_sp007_model_aliases() -> None:
    model = LlmModel.model_validate(
        {"id": "m", "baseUrl": "http://x", "contextWindow": 8192, "maxTokens": 512}
    )
    assert (model.base_url, model.context_window, model.max_tokens) == ("http://x", 8192, 512)
    assert {"contextWindow", "baseUrl", "maxTokens"} <= model.to_json_dict().keys()


def test_sp008_usage_sums_and_costs() -> None:
    a = LlmUsage(
        input_tokens=1_000_000, output_tokens=500_000, cache_read_tokens=200_000, reasoning_tokens=100_000
    )
    b = LlmUsage(input_tokens=1, output_tokens=2, cache_write_tokens=3, reasoning_tokens=4)
    total = a + b
    assert (total.input_tokens, total.output_tokens, total.cache_write_tokens, total.reasoning_tokens) == (
        1_000_001,
        500_002,
        3,
        100_004,
    )
    assert a.total_tokens == 1_700_000  # reasoning is inside output, not added twice
    cost = a.cost(ModelCost(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75))
    assert cost.input == pytest.approx(3.0)
    assert cost.output == pytest.approx(7.5)
    assert cost.cache_read == pytest.approx(0.06)
    assert cost.total == pytest.approx(10.56)
    assert (cost + cost).total == pytest.approx(21.12)
    assert ModelCost.model_validate({"cacheRead": 1}).cache_read == 1


def _race_once() -> None:
    signal = AbortSignal()
    calls: list[int] = []
    lock = threading.Lock()
    barrier = threading.Barrier(16)

    def record(n: int) -> None:
        with lock:
            calls.append(n)

    def subscribe(n: int) -> None:
        barrier.wait()
        signal.on_abort(lambda reason: record(n))

    def abort(n: int) -> None:
        barrier.wait()
        signal.abort(f"reason {n}")

    threads = [threading.Thread(target=subscribe, args=(n,)) for n in range(8)]
    threads += [threading.Thread(target=abort, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert signal.aborted and signal.reason is not None and signal.reason.startswith("reason ")
    assert sorted(calls) == list(range(8))


def test_sp022_abort_signal_is_thread_safe() -> None:
    """SP-022: many threads abort and subscribe at once; each callback runs exactly once."""
    for _ in range(20):
        _race_once()


def test_sp022_wait_unsubscribe_and_broken_callback() -> None:
    signal = AbortSignal()
    assert signal.wait(0.01) is False
    seen: list[str | None] = []
    unsubscribe = signal.on_abort(seen.append)
    unsubscribe()

    def broken(reason: str | None) -> None:
        raise RuntimeError("bad")

    signal.on_abort(broken)
    called = threading.Event()
    signal.on_abort(lambda reason: (seen.append(f"got {reason}"), called.set()))
    threading.Timer(0.01, signal.abort, args=("why",)).start()
    assert signal.wait(5) is True
    assert called.wait(5)
    assert seen == ["got why"]
    signal.abort("again")
    assert signal.reason == "why"


def test_sp002_sp003_assistant_defaults() -> None:
    """SP-002 and SP-003: the keyword-constructor defaults of the spec."""
    plain = AssistantMessage()
    assert (plain.role, plain.stop_reason, plain.error_message, plain.usage) == (
        "assistant",
        "end_turn",
        None,
        LlmUsage(),
    )
    calls = AssistantMessageToolCall(tool_calls=[AgentToolCall(id="1", name="n")])
    assert (calls.role, calls.stop_reason, calls.content) == ("assistant", "tool_calls", [])
    assert "toolCalls" in calls.to_json_dict()


def test_sp019_context_keeps_tool_order_and_parses_messages() -> None:
    """SP-019: tools keyed by name in insertion order; messages of every kind parse from JSON."""
    tools = {name: AgentTool(name=name, execute=lambda *a: "") for name in ("b", "a", "c")}
    context = AgentContext(
        system_prompt="s",
        messages=[
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "toolCalls": [{"id": "1", "name": "b"}]},
            {"role": "toolResult", "toolCallId": "1", "toolName": "b"},
            {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
        ],
        tools=tools,
    )
    assert list(context.tools or {}) == ["b", "a", "c"]
    assert [type(m).__name__ for m in context.messages] == [
        "UserMessage",
        "AssistantMessageToolCall",
        "ToolResultMessage",
        "AssistantMessage",
    ]


def test_sp021_loop_config() -> None:
    """SP-021: hooks, "sequential" or "parallel", and the limits beyond the spec."""
    config = AgentLoopConfig()
    assert (config.before_tool_call, config.after_tool_call) == (None, None)
    assert (config.tool_execution, config.tool_timeout, config.max_turns) == ("parallel", 120.0, 20)
    assert AgentLoopConfig(tool_execution="sequential").tool_execution == "sequential"
    with pytest.raises(ValidationError):
        AgentLoopConfig(tool_execution="sometimes")  # type: ignore[arg-type]
