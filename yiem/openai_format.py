"""The OpenAI chat-completions shapes of messages and tools (SP-011..SP-016).

Reasoning blocks are dropped from requests: the OpenAI format has no field for them, and
providers that keep reasoning (`reasoning_content`) never expect it back from the client.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from yiem.errors import YiemError
from yiem.types import (
    AgentContext,
    AgentMessage,
    AgentTool,
    AssistantMessage,
    AssistantMessageToolCall,
    ImageContent,
    MessageContent,
    TextContent,
    ToolResultMessage,
    UserMessage,
    replace_lone_surrogates,
)


class MessageFormatError(YiemError, TypeError):
    """A message of no known role, which has no OpenAI form."""


def image_url(image: ImageContent) -> str:
    """A `data:` URL for a base64 image; data that already is a URL is kept as it is."""
    if image.data.startswith(("data:", "http://", "https://")):
        return image.data
    return f"data:{image.mime_type};base64,{image.data}"


def content_to_blocks(content: Iterable[MessageContent]) -> list[dict[str, Any]]:
    """SP-012 `_messageContentToBlocks`: text and image blocks; reasoning is left out."""
    blocks: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, TextContent):
            blocks.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageContent):
            blocks.append({"type": "image_url", "image_url": {"url": image_url(block)}})
    return blocks


def system_to_openai(system_prompt: str) -> dict[str, Any]:
    """SP-011."""
    return {"role": "system", "content": [{"type": "text", "text": system_prompt}]}


def message_to_openai(message: AgentMessage) -> dict[str, Any]:
    """SP-012..SP-015: one message in the OpenAI chat format."""
    if isinstance(message, UserMessage):
        return {"role": "user", "content": content_to_blocks(message.content)}
    if isinstance(message, AssistantMessageToolCall):
        # SP-013 sends `content: null`; text the model wrote next to its calls is kept, not lost.
        text_blocks = content_to_blocks(message.content)
        return {
            "role": "assistant",
            "content": text_blocks or None,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": call.type,
                    "function": {
                        "name": call.name,
                        "arguments": json.dumps(replace_lone_surrogates(call.arguments)),
                    },
                }
                for call in message.tool_calls
            ],
        }
    if isinstance(message, AssistantMessage):
        return {"role": "assistant", "content": content_to_blocks(message.content)}
    if isinstance(message, ToolResultMessage):
        return {
            "role": "tool",
            "tool_call_id": message.tool_call_id,
            "content": content_to_blocks(message.content),
        }
    raise MessageFormatError(f"Cannot convert {type(message).__name__} to the OpenAI format")


def to_openai_messages(context: AgentContext) -> list[dict[str, Any]]:
    """The context as OpenAI `messages`, system message first (left out when the prompt is empty)."""
    messages = [system_to_openai(context.system_prompt)] if context.system_prompt else []
    messages.extend(message_to_openai(message) for message in context.messages)
    # Text with a lone surrogate cannot be sent as UTF-8: replaced rather than failing the request.
    cleaned: list[dict[str, Any]] = replace_lone_surrogates(messages)
    return cleaned


def tool_to_openai(tool: AgentTool) -> dict[str, Any]:
    """SP-016."""
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.input_schema},
    }


def tools_to_openai(tools: Iterable[AgentTool]) -> list[dict[str, Any]]:
    """Every tool in the OpenAI `tools` format, in order."""
    return [tool_to_openai(tool) for tool in tools]
