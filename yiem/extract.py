"""Format-agnostic extraction of an assistant message from an LLM response (SP-017, SP-018).

`extract_assistant_message` never raises: whatever it cannot read is skipped and named in the
message's `error_message`, and a response with nothing usable ends with `stop_reason="error"`.
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from collections.abc import Mapping
from typing import Any

from yiem.types import (
    AgentToolCall,
    AnyAssistantMessage,
    AssistantMessage,
    AssistantMessageToolCall,
    ImageContent,
    LlmModel,
    LlmUsage,
    MessageContent,
    ReasoningContent,
    TextContent,
)

_NO_ARGUMENTS: tuple[Any, ...] = (None, "", "null")


def new_tool_call_id() -> str:
    """A fresh tool-call id, unique across processes."""
    return f"call_{uuid.uuid4().hex[:24]}"


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class _Reader:
    """Collects content, tool calls and problems while walking one response."""

    def __init__(self) -> None:
        self.content: list[MessageContent] = []
        self.tool_calls: list[AgentToolCall] = []
        self.problems: list[str] = []
        self._ids: set[str] = set()

    # --- content ---------------------------------------------------------------------------

    def _readable(self, text: Any, where: str) -> bool:
        if text is None or text == "":
            return False
        if not isinstance(text, str):
            self.problems.append(f"{where} is not text: {_describe(text)}")
            return False
        return True

    def add_text(self, text: Any, where: str) -> None:
        if self._readable(text, where):
            self.content.append(TextContent(text=text))

    def add_reasoning(self, text: Any, where: str) -> None:
        if self._readable(text, where):
            self.content.append(ReasoningContent(text=text))

    def add_content(self, content: Any, where: str) -> None:
        """`content` as a string, null, or a list of blocks (SP-017 message content, SP-018 blocks)."""
        if content is None or isinstance(content, str):
            self.add_text(content, where)
        elif isinstance(content, list):
            for index, block in enumerate(content):
                self.add_block(block, f"{where}[{index}]")
        elif isinstance(content, Mapping):
            self.add_block(content, where)
        else:
            self.problems.append(f"{where} has an unknown shape: {_describe(content)}")

    def add_block(self, block: Any, where: str) -> None:
        if isinstance(block, str):
            self.add_text(block, where)
            return
        if not isinstance(block, Mapping):
            self.problems.append(f"{where} is not a content block: {_describe(block)}")
            return
        kind = block.get("type")
        if kind == "text":
            self.add_text(block.get("text"), f"{where}.text")
        elif kind in ("reasoning", "thinking"):
            self.add_reasoning(block.get("text", block.get("thinking")), f"{where}.text")
        elif kind == "image":
            self.add_image(block, where)
        elif kind == "image_url":
            self.add_image_url(block.get("image_url"), where)
        elif kind == "tool_calls":  # SP-018.1
            self.add_tool_calls(block.get("tool_calls"), f"{where}.tool_calls")
        elif kind in ("tool_call", "function", "tool_use"):  # SP-018.2, Anthropic
            self.add_tool_call(block, where)
        else:
            self.problems.append(f"{where} has an unknown block type {_describe(kind)}")

    def add_image(self, block: Mapping[str, Any], where: str) -> None:
        data = block.get("data")
        mime = block.get("mimeType", block.get("mime_type", "image/png"))
        if not isinstance(data, str) or not isinstance(mime, str):
            self.problems.append(f"{where} is an image without base64 data")
            return
        self.content.append(ImageContent(data=data, mime_type=mime))

    def add_image_url(self, image_url: Any, where: str) -> None:
        url = image_url.get("url") if isinstance(image_url, Mapping) else image_url
        if not isinstance(url, str) or not url.startswith("data:") or ";base64," not in url:
            self.problems.append(f"{where} is an image that is not a base64 data URL")
            return
        header, data = url[len("data:") :].split(";base64,", 1)
        try:
            base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            self.problems.append(f"{where} has image data that is not base64")
            return
        self.content.append(ImageContent(data=data, mime_type=header or "image/png"))

    # --- tool calls ------------------------------------------------------------------------

    def add_tool_calls(self, calls: Any, where: str, *, null_ok: bool = False) -> None:
        if calls is None:
            if not null_ok:
                self.problems.append(f"{where} is null where a list of tool calls was expected")
            return
        if not isinstance(calls, list):
            self.problems.append(f"{where} is not a list: {_describe(calls)}")
            return
        for index, call in enumerate(calls):
            self.add_tool_call(call, f"{where}[{index}]")

    def add_tool_call(self, call: Any, where: str) -> None:
        if not isinstance(call, Mapping):
            self.problems.append(f"{where} is not a tool call: {_describe(call)}")
            return
        function = call.get("function")
        source: Mapping[str, Any] = function if isinstance(function, Mapping) else call
        name = source.get("name")
        if not isinstance(name, str) or not name:
            self.problems.append(f"{where} has no tool name")
            return
        raw = source.get("arguments", source.get("input", call.get("input")))
        arguments = self._arguments(raw, f"{where} ({name})")
        if arguments is None:
            return
        call_id = call.get("id")
        if not isinstance(call_id, str) or not call_id or call_id in self._ids:
            call_id = new_tool_call_id()
        self._ids.add(call_id)
        self.tool_calls.append(AgentToolCall(id=call_id, name=name, arguments=arguments))

    def _arguments(self, raw: Any, where: str) -> dict[str, Any] | None:
        if raw in _NO_ARGUMENTS:
            return {}
        if isinstance(raw, str):
            try:
                raw = json.loads(raw)
            except (json.JSONDecodeError, RecursionError) as error:
                self.problems.append(f"tool call {where} has arguments that are not valid JSON: {error}")
                return None
        if isinstance(raw, Mapping):
            return {str(key): value for key, value in raw.items()}
        self.problems.append(f"tool call {where} has arguments that are not a JSON object: {_describe(raw)}")
        return None

    # --- usage -------------------------------------------------------------------------------

    def usage(self, raw: Any) -> LlmUsage:
        if raw is None:
            return LlmUsage()
        if isinstance(raw, LlmUsage):
            return raw.model_copy()
        if not isinstance(raw, Mapping):
            self.problems.append(f"usage has an unknown shape: {_describe(raw)}")
            return LlmUsage()
        if "prompt_tokens" in raw or "completion_tokens" in raw:
            return openai_usage(raw, self.problems)
        count = _TokenCounter(raw, self.problems)
        # SP-018.4 camelCase, yiem's own names, and Anthropic's (whose input excludes the cache).
        return LlmUsage(
            input_tokens=count("inputTokens", "input_tokens"),
            output_tokens=count("outputTokens", "output_tokens"),
            cache_read_tokens=count("cacheReadTokens", "cache_read_tokens", "cache_read_input_tokens"),
            cache_write_tokens=count("cacheWriteTokens", "cache_write_tokens", "cache_creation_input_tokens"),
            reasoning_tokens=count("reasoningTokens", "reasoning_tokens"),
        )


class _TokenCounter:
    """Reads token counts from one usage object, naming any that is not a count in `problems`."""

    def __init__(self, source: Any, problems: list[str] | None) -> None:
        self.source = source if isinstance(source, Mapping) else {}
        self.problems = problems

    def __call__(self, *keys: str) -> int:
        for key in keys:
            value = self.source.get(key)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1e15:
                if self.problems is not None:
                    self.problems.append(f"usage.{key} is not a token count: {_describe(value)}")
                return 0
            return int(value)
        return 0


def openai_usage(usage: Mapping[str, Any], problems: list[str] | None = None) -> LlmUsage:
    """OpenAI usage as LlmUsage: cached tokens move out of input, reasoning stays inside output.

    `prompt_tokens_details.cached_tokens` and `completion_tokens_details.reasoning_tokens`; a
    field that is not a token count reads as 0 and is named in `problems` when given.
    """
    cached = _TokenCounter(usage.get("prompt_tokens_details"), problems)("cached_tokens")
    count = _TokenCounter(usage, problems)
    return LlmUsage(
        input_tokens=max(count("prompt_tokens") - cached, 0),
        output_tokens=count("completion_tokens"),
        cache_read_tokens=cached,
        reasoning_tokens=_TokenCounter(usage.get("completion_tokens_details"), problems)("reasoning_tokens"),
    )


def _text_field(response: Mapping[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = response.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _read(response: Mapping[str, Any], reader: _Reader) -> str | None:
    """Walk the response; returns the stop reason it names, if any."""
    stop = _text_field(response, "stop_reason", "stopReason", "finish_reason")
    message: Any = response
    choices = response.get("choices")
    if isinstance(choices, list) and choices:  # a whole OpenAI chat completion
        choice = choices[0]
        if isinstance(choice, Mapping):
            stop = _text_field(choice, "finish_reason") or stop
            message = choice.get("message", choice.get("delta"))
        else:
            reader.problems.append(f"choices[0] is not a choice: {_describe(choice)}")
            message = None
    elif "message" in response:  # SP-017
        message = response["message"]
    if message is not response:
        if not isinstance(message, Mapping):
            reader.problems.append(f"message has an unknown shape: {_describe(message)}")
            return stop
        stop = _text_field(message, "stop_reason", "stopReason", "finish_reason") or stop
    # A nested message is OpenAI's shape, where `content: null` (beside tool calls) and
    # `tool_calls: null` are normal; SP-018's top level expects lists, so a null there is reported.
    nested = message is not response
    reader.add_reasoning(message.get("reasoning_content", message.get("reasoning")), "reasoning_content")
    if "content" in message:
        if message["content"] is None and not nested:
            reader.problems.append("content is null where a list of content blocks was expected")
        reader.add_content(message["content"], "content")
    for key in ("tool_calls", "toolCalls"):
        if key in message:
            reader.add_tool_calls(message[key], key, null_ok=nested)
    known = ("message", "choices", "content", "tool_calls", "toolCalls")
    if not any(key in response for key in known) and not any(key in message for key in known):
        reader.problems.append("the response has no message, content or tool calls")
    return stop


def extract_assistant_message(response: Any, *, model: LlmModel | None = None) -> AnyAssistantMessage:
    """An `AssistantMessage`, or an `AssistantMessageToolCall` when the response asks for tools."""
    if isinstance(response, AssistantMessage | AssistantMessageToolCall):
        return response.model_copy(deep=True)
    reader = _Reader()
    meta: Mapping[str, Any] = {}
    stop: str | None = None
    error: str | None = None
    try:
        if isinstance(response, str):
            reader.add_text(response, "response")
        elif isinstance(response, Mapping):
            meta = response
            stop = _read(response, reader)
            error = _text_field(response, "error_message", "errorMessage", "error")
            if error is None and isinstance(response.get("error"), Mapping):
                error = _text_field(response["error"], "message") or _describe(response["error"])
        else:
            reader.problems.append(f"the response is not a dict but {type(response).__name__}")
        usage = reader.usage(meta.get("usage"))
    except Exception as exc:  # pragma: no cover - the reader guards each step; this is the last net
        reader.problems.append(f"the response could not be read: {type(exc).__name__}: {exc}")
        usage = LlmUsage()
    return _build(reader, meta, stop, error, usage, model)


def _build(
    reader: _Reader,
    meta: Mapping[str, Any],
    stop: str | None,
    error: str | None,
    usage: LlmUsage,
    model: LlmModel | None,
) -> AnyAssistantMessage:
    problems = "; ".join(reader.problems) if reader.problems else None
    error_message = "; ".join(part for part in (error, problems) if part) or None
    fields: dict[str, Any] = {
        "content": reader.content,
        "api": _text_field(meta, "api") or (model.api if model else ""),
        "provider": _text_field(meta, "provider") or (model.provider if model else ""),
        "model": _text_field(meta, "model") or (model.id if model else ""),
        "usage": usage,
        "error_message": error_message,
    }
    if stop != "aborted":
        if error is not None:
            stop = "error"  # the provider says generation failed
        elif reader.problems and (
            not (reader.content or reader.tool_calls) or stop in ("tool_calls", "tool_use")
        ):
            # Nothing usable, or it asked for tools and none of its calls could be read.
            stop = "error" if not reader.tool_calls else stop
    if stop == "error" and not fields["error_message"]:
        fields["error_message"] = "The response says generation failed but gives no error message"
    if reader.tool_calls:
        return AssistantMessageToolCall(
            **fields, tool_calls=reader.tool_calls, stop_reason=stop or "tool_calls"
        )
    return AssistantMessage(**fields, stop_reason=stop or "end_turn")
