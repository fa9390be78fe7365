"""`AnthropicClient`: Anthropic's `/v1/messages`, streamed or not, and the conversion to its format."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from httpx_sse import ServerSentEvent

from yiem.llm import GenerationOptions, StreamEvent
from yiem.providers._http import (
    HttpLlmClient,
    HttpRequest,
    ProviderStreamError,
)
from yiem.providers._json_fields import count, name, obj, text
from yiem.providers._message_builder import MessageBuilder
from yiem.providers._server_replies import provider_error_text
from yiem.types import (
    AgentContext,
    AgentMessage,
    AgentTool,
    AssistantMessageToolCall,
    ImageContent,
    LlmModel,
    LlmUsage,
    MessageContent,
    TextContent,
    ToolResultMessage,
    UserMessage,
    replace_lone_surrogates,
)

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096
# stop_reason → the common vocabulary of yiem's providers.
_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
}


def anthropic_blocks(content: Iterable[MessageContent]) -> list[dict[str, Any]]:
    """Text and image blocks; reasoning is left out (Anthropic only takes back signed thinking)."""
    blocks: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, TextContent) and block.text:
            # Anthropic rejects empty text blocks.
            blocks.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageContent):
            blocks.append(_image_block(block))
    return blocks


def _image_block(image: ImageContent) -> dict[str, Any]:
    if image.data.startswith(("http://", "https://")):
        return {"type": "image", "source": {"type": "url", "url": image.data}}
    data, media_type = image.data, image.mime_type
    if data.startswith("data:"):
        header, _, data = data.partition(",")
        media_type = header[5:].split(";")[0] or media_type
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


def to_anthropic_messages(messages: Iterable[AgentMessage]) -> list[dict[str, Any]]:
    """Messages in Anthropic's format: tool results become `tool_result` blocks of a user turn."""
    converted: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, UserMessage):
            role, blocks = "user", anthropic_blocks(message.content)
        elif isinstance(message, ToolResultMessage):
            role = "user"
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id,
                "content": anthropic_blocks(message.content),
            }
            if message.is_error:
                result["is_error"] = True
            blocks = [result]
        else:
            role, blocks = "assistant", anthropic_blocks(message.content)
            if isinstance(message, AssistantMessageToolCall):
                blocks += [
                    {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
                    for call in message.tool_calls
                ]
        if not blocks:
            continue  # an empty turn (e.g. a failed reply) would be rejected
        if converted and converted[-1]["role"] == role:
            # All results of one assistant turn must arrive in a single user turn.
            converted[-1]["content"].extend(blocks)
        else:
            converted.append({"role": role, "content": blocks})
    cleaned: list[dict[str, Any]] = replace_lone_surrogates(converted)  # not UTF-8: replaced, not fatal
    return cleaned


def tool_to_anthropic(tool: AgentTool) -> dict[str, Any]:
    """An AgentTool in Anthropic's `tools` format."""
    return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}


def anthropic_usage(usage: dict[str, Any], previous: LlmUsage | None = None) -> LlmUsage:
    """Anthropic usage → LlmUsage; fields missing from a later event keep their earlier value."""
    base = previous or LlmUsage()

    def pick(key: str, default: int) -> int:
        found = count(usage.get(key))
        return default if found is None else found

    return LlmUsage(
        input_tokens=pick("input_tokens", base.input_tokens),
        output_tokens=pick("output_tokens", base.output_tokens),
        cache_read_tokens=pick("cache_read_input_tokens", base.cache_read_tokens),
        cache_write_tokens=pick("cache_creation_input_tokens", base.cache_write_tokens),
    )


class AnthropicClient(HttpLlmClient):
    """Anthropic's Messages API (also served by llama.cpp's `/v1/messages`).

    `base_url` is the root without `/v1`; when None, the model's own, else `https://api.anthropic.com`.
    """

    provider_name = "anthropic"
    api = "anthropic-messages"
    no_response_schema = (
        "This model is reached through Anthropic's Messages API, for which yiem cannot yet ask for JSON "
        "matching a schema; remove the response schema (a variant's, or the one in Chat's settings), or use "
        "an OpenAI-compatible provider."
    )
    default_base_url = "https://api.anthropic.com"

    def models_url(self, base_url: str) -> str:
        return f"{base_url}/v1/models"

    def auth_headers(self) -> dict[str, str]:
        headers = {"anthropic-version": ANTHROPIC_VERSION, **self.headers}
        if self.api_key:
            headers["x-api-key"] = self.api_key
        return headers

    def build_request(
        self, model: LlmModel, context: AgentContext, options: GenerationOptions, streaming: bool
    ) -> HttpRequest:
        headers = self.request_headers(streaming)
        body: dict[str, Any] = {
            "model": model.id,
            "max_tokens": options.max_tokens or model.max_tokens or DEFAULT_MAX_TOKENS,
            "messages": to_anthropic_messages(context.messages),
            "stream": streaming,
        }
        if context.system_prompt:
            body["system"] = context.system_prompt
        if context.tools:
            body["tools"] = [tool_to_anthropic(tool) for tool in context.tools.values()]
        if options.temperature is not None:
            body["temperature"] = options.temperature
        return HttpRequest(f"{self._base(model)}/v1/messages", headers, body)

    def read_events(
        self, events: Iterator[ServerSentEvent], builder: MessageBuilder
    ) -> Iterator[StreamEvent]:
        for event in events:
            if not event.data:
                continue
            try:
                data = json.loads(event.data)
            except ValueError:
                raise ProviderStreamError(f"malformed JSON in the stream: {event.data[:200]}") from None
            if not isinstance(data, dict):
                raise ProviderStreamError(f"unexpected data in the stream: {event.data[:200]}")
            # llama.cpp's error event carries the error itself as data, so the SSE event name comes first.
            kind = event.event if event.event and event.event != "message" else str(data.get("type"))
            if kind == "message_stop":
                builder.complete = True
                return
            yield from self._read_event(kind, data, builder)

    def _read_event(self, kind: str, data: dict[str, Any], builder: MessageBuilder) -> Iterator[StreamEvent]:
        if kind == "error":
            raise ProviderStreamError(provider_error_text(json.dumps(data)))
        if kind == "message_start":
            message = obj(data.get("message"))
            builder.model_id = name(message.get("model")) or builder.model_id
            if usage := obj(message.get("usage")):
                builder.usage = anthropic_usage(usage, builder.usage)
        elif kind == "content_block_start":
            yield from self._read_block(
                count(data.get("index")) or 0, obj(data.get("content_block")), builder
            )
        elif kind == "content_block_delta":
            yield from self._read_delta(count(data.get("index")) or 0, obj(data.get("delta")), builder)
        elif kind == "message_delta":
            reason = name(obj(data.get("delta")).get("stop_reason"))
            if reason == "refusal":
                raise ProviderStreamError("the model refused to answer")
            if reason:
                builder.stop_reason = _STOP_REASONS.get(reason, reason)
            if usage := obj(data.get("usage")):
                builder.usage = anthropic_usage(usage, builder.usage)
        # ping, content_block_stop and unknown event types carry nothing to keep.

    @staticmethod
    def _read_block(index: int, block: dict[str, Any], builder: MessageBuilder) -> Iterator[StreamEvent]:
        """A whole content block (non-streamed) or the opening of one (streamed)."""
        kind = block.get("type")
        if kind == "tool_use":
            given = block.get("input")
            # Streamed blocks open with an empty input and send it as input_json_delta.
            arguments = json.dumps(given) if given else ""
            yield builder.tool_call(index, name(block.get("id")), name(block.get("name")), arguments)
        elif kind == "text" and (said := builder.text(text(block.get("text")))):
            yield said
        elif kind == "thinking" and (thought := builder.reasoning(text(block.get("thinking")))):
            yield thought

    @staticmethod
    def _read_delta(index: int, delta: dict[str, Any], builder: MessageBuilder) -> Iterator[StreamEvent]:
        kind = delta.get("type")
        if kind == "text_delta" and (said := builder.text(text(delta.get("text")))):
            yield said
        elif kind == "thinking_delta" and (thought := builder.reasoning(text(delta.get("thinking")))):
            yield thought
        elif kind == "input_json_delta":
            yield builder.tool_call(index, arguments=text(delta.get("partial_json")))

    def read_body(self, data: Any, builder: MessageBuilder) -> Iterator[StreamEvent]:
        if not isinstance(data, dict):
            raise ProviderStreamError(f"unexpected response: {json.dumps(data)[:200]}")
        if data.get("type") == "error" or data.get("error"):
            raise ProviderStreamError(provider_error_text(json.dumps(data)))
        content = data.get("content")
        if not isinstance(content, list):
            raise ProviderStreamError(f"the response has no content: {json.dumps(data)[:200]}")
        yield from self._read_event("message_start", {"message": data}, builder)
        for index, block in enumerate(content):
            yield from self._read_block(index, obj(block), builder)
        yield from self._read_event(
            "message_delta", {"delta": {"stop_reason": data.get("stop_reason")}}, builder
        )
        builder.complete = True
