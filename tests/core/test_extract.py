"""Format-agnostic extraction of assistant messages (SP-017, SP-018.1..SP-018.4)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fixtures.core import RESPONSE_SEEDS, SP017_TOOLS, json_values, mutate_response
from yiem import (
    AssistantMessage,
    AssistantMessageToolCall,
    ImageContent,
    LlmModel,
    ReasoningContent,
    TextContent,
    extract_assistant_message,
)


def test_sp017_nested_message_with_tool_calls_and_reasoning() -> None:
    message = extract_assistant_message(SP017_TOOLS)
    assert isinstance(message, AssistantMessageToolCall)
    assert message.stop_reason == "tool_calls"
    assert message.content == [ReasoningContent(text="I need to call getWeather...")]
    [call] = message.tool_calls
    assert (call.id, call.name, call.arguments, call.type) == (
        "call_1",
        "getWeather",
        {"city": "Bangkok"},
        "function",
    )
    assert message.error_message is None


def test_sp017_no_tool_calls() -> None:
    message = extract_assistant_message(
        {"finish_reason": "stop", "message": {"role": "assistant", "content": "It's 22°C in Bangkok"}}
    )
    assert isinstance(message, AssistantMessage)
    assert message.text == "It's 22°C in Bangkok"
    assert message.stop_reason == "stop"
    assert message.error_message is None


def test_sp018_1_tool_calls_block_with_parsed_arguments() -> None:
    response = {
        "content": [
            {
                "type": "tool_calls",
                "tool_calls": [
                    {
                        "type": "function",
                        "function": {"name": "getWeather", "arguments": {"city": "Bangkok"}},
                        "id": "call_1",
                    }
                ],
            }
        ]
    }
    message = extract_assistant_message(response)
    assert isinstance(message, AssistantMessageToolCall)
    assert message.tool_calls[0].arguments == {"city": "Bangkok"}
    assert message.tool_calls[0].id == "call_1"


def test_sp018_2_tool_call_block() -> None:
    response = {
        "content": [
            {"type": "tool_call", "name": "getWeather", "arguments": {"city": "Bangkok"}, "id": "call_1"}
        ]
    }
    message = extract_assistant_message(response)
    assert isinstance(message, AssistantMessageToolCall)
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [
        ("call_1", "getWeather", {"city": "Bangkok"})
    ]


def test_sp018_3_text_blocks() -> None:
    message = extract_assistant_message({"content": [{"type": "text", "text": "It's 22°C in Bangkok"}]})
    assert isinstance(message, AssistantMessage)
    assert message.content == [TextContent(text="It's 22°C in Bangkok")]
    assert message.stop_reason == "end_turn"
    two = extract_assistant_message(
        {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    )
    assert two.content == [TextContent(text="a"), TextContent(text="b")]  # blocks are kept as sent


def test_sp018_4_extras_api_provider_model_usage_error() -> None:
    response = {
        "content": [{"type": "text", "text": "partial"}],
        "api": "openai",
        "provider": "anthropic",
        "model": "gpt-4",
        "usage": {"inputTokens": 100, "outputTokens": 50},
        "error_message": "Optional error",
    }
    message = extract_assistant_message(response)
    assert (message.api, message.provider, message.model) == ("openai", "anthropic", "gpt-4")
    assert (message.usage.input_tokens, message.usage.output_tokens) == (100, 50)
    assert message.error_message == "Optional error"
    assert message.stop_reason == "error"
    assert message.text == "partial"


def test_sp018_4_openai_usage_with_cache_and_reasoning_details() -> None:
    response = {
        "choices": [{"finish_reason": "stop", "message": {"role": "assistant", "content": "hi"}}],
        "usage": {
            "prompt_tokens": 1000,
            "completion_tokens": 300,
            "prompt_tokens_details": {"cached_tokens": 400},
            "completion_tokens_details": {"reasoning_tokens": 120},
        },
    }
    usage = extract_assistant_message(response).usage
    assert usage.input_tokens == 600  # cached tokens are counted once, as cache reads
    assert usage.cache_read_tokens == 400
    assert usage.output_tokens == 300  # reasoning is part of output, not added again
    assert usage.reasoning_tokens == 120


def test_model_fills_missing_metadata() -> None:
    model = LlmModel(id="smollm2", provider="local")
    message = extract_assistant_message({"content": "hi"}, model=model)
    assert (message.api, message.provider, message.model) == ("openai-completions", "local", "smollm2")


def test_anthropic_blocks_and_data_url_images() -> None:
    response = {
        "content": [
            {"type": "thinking", "thinking": "hmm"},
            {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,QUJD"}},
            {"type": "tool_use", "id": "tu_1", "name": "search", "input": {"q": "x"}},
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 5, "output_tokens": 7, "cache_read_input_tokens": 2},
    }
    message = extract_assistant_message(response)
    assert isinstance(message, AssistantMessageToolCall)
    assert message.content == [
        ReasoningContent(text="hmm"),
        ImageContent(data="QUJD", mime_type="image/jpeg"),
    ]
    assert message.tool_calls[0].arguments == {"q": "x"}
    assert message.usage.cache_read_tokens == 2


def test_own_json_round_trips_through_extraction() -> None:
    original = extract_assistant_message(SP017_TOOLS)
    again = extract_assistant_message(original.to_json_dict())
    assert isinstance(again, AssistantMessageToolCall)
    assert again.tool_calls == original.tool_calls
    assert again.content == original.content


def test_missing_ids_are_generated_and_unique() -> None:
    calls = [{"function": {"name": "t", "arguments": "{}"}} for _ in range(5)]
    calls.append({"id": "dup", "function": {"name": "t", "arguments": "{}"}})
    calls.append({"id": "dup", "function": {"name": "t", "arguments": "{}"}})
    message = extract_assistant_message({"message": {"tool_calls": calls}})
    assert isinstance(message, AssistantMessageToolCall)
    ids = [call.id for call in message.tool_calls]
    assert len(set(ids)) == 7
    assert ids[5] == "dup"
    other = extract_assistant_message({"message": {"tool_calls": calls[:1]}})
    assert isinstance(other, AssistantMessageToolCall)
    assert other.tool_calls[0].id not in ids


def test_invalid_json_arguments_are_named_in_error_message() -> None:
    response = {
        "finish_reason": "tool_calls",
        "message": {
            "tool_calls": [
                {"id": "a", "function": {"name": "good", "arguments": '{"x": 1}'}},
                {"id": "b", "function": {"name": "bad", "arguments": '{"x": '}},
            ]
        },
    }
    message = extract_assistant_message(response)
    assert isinstance(message, AssistantMessageToolCall)
    assert [c.name for c in message.tool_calls] == ["good"]
    assert message.error_message is not None
    assert "bad" in message.error_message and "not valid JSON" in message.error_message


def test_only_unreadable_tool_calls_is_an_error() -> None:
    response = {"finish_reason": "tool_calls", "message": {"tool_calls": [{"function": {"arguments": "{}"}}]}}
    message = extract_assistant_message(response)
    assert isinstance(message, AssistantMessage)
    assert message.stop_reason == "error"
    assert message.error_message is not None and "no tool name" in message.error_message


def test_sp017_nulls_in_a_nested_message_are_openais_normal_shape() -> None:
    message = extract_assistant_message({"message": {"content": None, "tool_calls": None}})
    assert isinstance(message, AssistantMessage)
    assert message.content == []
    assert message.error_message is None


def test_sp018_null_where_a_list_is_expected_is_reported() -> None:
    """Issue 12: SP-018 `content: null` and a `tool_calls: null` block are named in error_message."""
    message = extract_assistant_message({"content": None})
    assert message.stop_reason == "error"
    assert message.error_message == "content is null where a list of content blocks was expected"
    block = extract_assistant_message({"content": [{"type": "tool_calls", "tool_calls": None}]})
    assert block.stop_reason == "error"
    assert block.error_message == "content[0].tool_calls is null where a list of tool calls was expected"
    beside_text = extract_assistant_message(
        {"content": [{"type": "text", "text": "hi"}, {"type": "tool_calls", "tool_calls": None}]}
    )
    assert beside_text.text == "hi"
    assert "content[1].tool_calls is null" in (beside_text.error_message or "")


def test_unknown_shapes_say_what_was_wrong() -> None:
    for response, expected in [
        (42, "not a dict but int"),
        ({"foo": "bar"}, "no message, content or tool calls"),
        ({"content": [{"type": "video"}]}, "unknown block type 'video'"),
        ({"message": "hello"}, "message has an unknown shape"),
        ({"content": "x", "usage": {"prompt_tokens": "many"}}, "usage.prompt_tokens is not a token count"),
    ]:
        message = extract_assistant_message(response)
        assert message.error_message is not None and expected in message.error_message, response


def test_arguments_that_are_not_objects() -> None:
    message = extract_assistant_message(
        {"content": [{"type": "tool_call", "name": "t", "arguments": "[1, 2]"}]}
    )
    assert message.error_message is not None and "not a JSON object" in message.error_message
    assert message.stop_reason == "error"


# --- property: random and mutated responses never raise ---------------------------------------


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_responses_never_raise(data: st.DataObject) -> None:
    """SP-017/SP-018: thousands of mutated responses all give a message, never an exception."""
    response = mutate_response(data.draw(st.sampled_from(RESPONSE_SEEDS)), data)
    message = extract_assistant_message(response)
    assert isinstance(message, AssistantMessage | AssistantMessageToolCall)
    json.dumps(message.to_json_dict())
    ids = [call.id for call in getattr(message, "tool_calls", [])]
    assert len(ids) == len(set(ids))
    if message.stop_reason == "error":
        assert message.error_message


@settings(max_examples=1000, deadline=None)
@given(json_values)
def test_random_values_never_raise(response: Any) -> None:
    """SP-017/SP-018: any JSON value at all gives a message."""
    message = extract_assistant_message(response)
    assert isinstance(message, AssistantMessage | AssistantMessageToolCall)
    if not isinstance(response, dict | str):
        assert message.stop_reason == "error" and message.error_message


def test_error_stop_without_message_gets_one() -> None:
    message = extract_assistant_message({"finish_reason": "error", "message": {"content": "x"}})
    assert message.stop_reason == "error"
    assert message.error_message == "The response says generation failed but gives no error message"
