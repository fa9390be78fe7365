"""OpenAI chat format of messages and tools (SP-011..SP-016)."""

from __future__ import annotations

import json

import pytest

from yiem import (
    AgentContext,
    AgentTool,
    AgentToolCall,
    AssistantMessage,
    AssistantMessageToolCall,
    ImageContent,
    ReasoningContent,
    TextContent,
    ToolResultMessage,
    UserMessage,
    content_to_blocks,
    message_to_openai,
    to_openai_messages,
    tool_to_openai,
)


def test_sp011_system_message_comes_first() -> None:
    context = AgentContext(
        system_prompt="Be brief.", messages=[UserMessage(content=[TextContent(text="hi")])]
    )
    messages = to_openai_messages(context)
    assert messages[0] == {"role": "system", "content": [{"type": "text", "text": "Be brief."}]}
    assert messages[1]["role"] == "user"


def test_sp011_empty_system_prompt_is_left_out() -> None:
    context = AgentContext(messages=[UserMessage(content=[TextContent(text="hi")])])
    assert [m["role"] for m in to_openai_messages(context)] == ["user"]


def test_sp012_user_message_text_and_image_blocks() -> None:
    message = UserMessage(
        content=[TextContent(text="what is this?"), ImageContent(data="AAAA", mime_type="image/jpeg")]
    )
    assert message_to_openai(message) == {
        "role": "user",
        "content": [
            {"type": "text", "text": "what is this?"},
            {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,AAAA"}},
        ],
    }


def test_sp012_image_already_a_data_url_is_not_wrapped_twice() -> None:
    blocks = content_to_blocks([ImageContent(data="data:image/png;base64,BBBB")])
    assert blocks == [{"type": "image_url", "image_url": {"url": "data:image/png;base64,BBBB"}}]


def test_sp013_tool_call_message_has_null_content_and_json_string_arguments() -> None:
    message = AssistantMessageToolCall(
        content=[ReasoningContent(text="I need the weather")],
        tool_calls=[AgentToolCall(id="call_1", name="getWeather", arguments={"city": "Bangkok"})],
    )
    converted = message_to_openai(message)
    assert converted == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "getWeather", "arguments": '{"city": "Bangkok"}'},
            }
        ],
    }
    assert json.loads(converted["tool_calls"][0]["function"]["arguments"]) == {"city": "Bangkok"}


def test_sp013_text_next_to_tool_calls_is_kept() -> None:
    message = AssistantMessageToolCall(
        content=[TextContent(text="Let me check.")],
        tool_calls=[AgentToolCall(id="c", name="t", arguments={})],
    )
    assert message_to_openai(message)["content"] == [{"type": "text", "text": "Let me check."}]


def test_sp014_assistant_message_drops_reasoning() -> None:
    message = AssistantMessage(content=[ReasoningContent(text="hmm"), TextContent(text="22°C")])
    assert message_to_openai(message) == {"role": "assistant", "content": [{"type": "text", "text": "22°C"}]}


def test_sp015_tool_result_becomes_role_tool() -> None:
    message = ToolResultMessage(
        tool_call_id="call_1", tool_name="getWeather", content=[TextContent(text="22")]
    )
    assert message.role == "toolResult"
    assert message_to_openai(message) == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": [{"type": "text", "text": "22"}],
    }


def test_sp016_tool_to_openai() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    tool = AgentTool(name="getWeather", description="Weather now", input_schema=schema, execute=lambda *a: "")
    assert tool_to_openai(tool) == {
        "type": "function",
        "function": {"name": "getWeather", "description": "Weather now", "parameters": schema},
    }


def test_whole_conversation_in_order() -> None:
    context = AgentContext(
        system_prompt="s",
        messages=[
            UserMessage(content=[TextContent(text="weather?")]),
            AssistantMessageToolCall(tool_calls=[AgentToolCall(id="c1", name="w", arguments={"a": 1})]),
            ToolResultMessage(tool_call_id="c1", tool_name="w", content=[TextContent(text="sunny")]),
            AssistantMessage(content=[TextContent(text="Sunny.")]),
        ],
    )
    assert [m["role"] for m in to_openai_messages(context)] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    json.dumps(to_openai_messages(context))  # the request body must serialise as it is


def test_unknown_message_type_is_a_clear_error() -> None:
    with pytest.raises(TypeError, match="Cannot convert"):
        message_to_openai("hello")  # type: ignore[arg-type]
