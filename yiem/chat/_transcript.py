"""Conversations as files: JSON with the spec's field names (export and import) and Markdown."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic.alias_generators import to_camel

from yiem.errors import YiemError
from yiem.model_setup import ImageDataError, check_image
from yiem.redaction import redact
from yiem.types import (
    AgentMessage,
    AssistantMessage,
    AssistantMessageToolCall,
    ImageContent,
    ReasoningContent,
    TextContent,
    ToolResultMessage,
    UserMessage,
    replace_lone_surrogates,
)

EXPORT_FORMAT = "yiem.conversation"
EXPORT_VERSION = 1
# Deeper than any conversation nests (tool arguments included); deeper data would only fail later,
# when it is serialised again for the store, the page or an export.
MAX_DEPTH = 100

_MESSAGE_LIST: TypeAdapter[list[AgentMessage]] = TypeAdapter(list[AgentMessage])


class TranscriptError(YiemError, ValueError):
    """A file to import is not a yiem conversation export; the message says what is wrong."""


class Transcript(BaseModel):
    """A conversation as exported: its settings and its messages (API keys are never part of it)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, arbitrary_types_allowed=True)

    format: str = EXPORT_FORMAT
    version: int = EXPORT_VERSION
    title: str = ""
    provider: str = ""
    model: str = ""
    system_prompt: str = ""
    messages: list[AgentMessage] = Field(default_factory=list)
    """Every message, alternatives included, in the order they were written; each as the spec has it."""
    parents: list[int | None] | None = None
    """Each message's parent as an index into `messages` (None: a first message); absent, one chain."""
    current: int | None = None
    """The index of the chosen path's last message; absent, the last message."""

    def path(self) -> list[AgentMessage]:
        """The chosen path: the messages from the first to `current`, following the parents."""
        if self.parents is None:
            return list(self.messages)
        at: int | None = len(self.messages) - 1 if self.current is None else self.current
        path: list[AgentMessage] = []
        while at is not None and 0 <= at < len(self.messages) and len(path) < len(self.messages):
            path.append(self.messages[at])
            at = self.parents[at]
        return path[::-1]


def export_json(transcript: Transcript) -> str:
    """The transcript as indented JSON with the spec's camelCase field names."""
    body = transcript.model_dump(mode="json", by_alias=True, exclude={"messages"})
    body["messages"] = [message.to_json_dict() for message in transcript.messages]
    return redact(json.dumps(replace_lone_surrogates(body), indent=2, ensure_ascii=False))


def import_json(text: str | bytes) -> Transcript:
    """Parse an export; `TranscriptError` names the first problem (and where it is)."""
    try:
        body = json.loads(text)
    except RecursionError as error:
        raise TranscriptError(_TOO_DEEP) from error
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise TranscriptError(f"The file is not JSON: {error}.") from error
    except ValueError as error:  # the only other one: an integer longer than Python converts
        raise TranscriptError(
            f"The file holds a number with more than {sys.get_int_max_str_digits():,} digits; "
            "no conversation has one."
        ) from error
    if _depth(body) > MAX_DEPTH:
        raise TranscriptError(_TOO_DEEP)
    if isinstance(body, list):
        # A bare list of messages (what many tools export) is accepted too.
        body = {"messages": body}
    if not isinstance(body, dict):
        raise TranscriptError("The file must hold a JSON object with a `messages` list.")
    if body.get("format", EXPORT_FORMAT) != EXPORT_FORMAT:
        raise TranscriptError(f"The file's format is {body.get('format')!r}, not {EXPORT_FORMAT!r}.")
    if not isinstance(body.get("messages"), list):
        raise TranscriptError("The file has no `messages` list.")
    try:
        messages = _MESSAGE_LIST.validate_python(body["messages"])
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"][:3])
        raise TranscriptError(f"Message {where} is not valid: {first['msg']}.") from error
    for number, message in enumerate(messages, start=1):
        for block in message.content:
            if isinstance(block, ImageContent):
                try:
                    check_image(block)
                except ImageDataError as error:
                    raise TranscriptError(
                        f"Message {number} has an image that cannot be used: {error}."
                    ) from error
    try:
        transcript = Transcript.model_validate({**body, "messages": messages})
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise TranscriptError(f"Field `{where}` is not valid: {first['msg']}.") from error
    _check_tree(transcript)
    return transcript


def _check_tree(transcript: Transcript) -> None:
    count = len(transcript.messages)
    if transcript.parents is not None:
        if len(transcript.parents) != count:
            raise TranscriptError(
                f"The file's `parents` list has {len(transcript.parents)} entries for {count} messages."
            )
        for number, parent in enumerate(transcript.parents):
            # A parent is always written before its replies, so the tree can have no loop.
            if parent is not None and not 0 <= parent < number:
                raise TranscriptError(
                    f"Message {number + 1}'s parent ({parent}) must be an earlier message's index."
                )
    if transcript.current is not None and not 0 <= transcript.current < count:
        raise TranscriptError(f"The file's `current` ({transcript.current}) is not a message's index.")


_TOO_DEEP = f"The file's data is nested too deeply (over {MAX_DEPTH} levels) to be a conversation."


def _depth(value: Any) -> int:
    """How deeply lists and objects nest in parsed JSON (walked without recursion)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            if level > MAX_DEPTH:
                break
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children)
    return deepest


def _blocks_markdown(content: Sequence[Any]) -> list[str]:
    parts = []
    for block in content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, ReasoningContent):
            quoted = "\n".join(f"> {line}" for line in block.text.splitlines())
            parts.append(f"> **Reasoning**\n>\n{quoted}")
        elif isinstance(block, ImageContent):
            parts.append(f"*[image, {block.mime_type}]*")
    return parts


def export_markdown(transcript: Transcript) -> str:
    """A readable Markdown rendering: one section per message, tool calls as JSON blocks."""
    lines = [f"# {transcript.title or 'Conversation'}", ""]
    if transcript.provider or transcript.model:
        lines += [f"*Model: {transcript.provider} / {transcript.model}*", ""]
    if transcript.system_prompt:
        lines += ["## System", "", transcript.system_prompt, ""]
    for message in transcript.path():  # the conversation as shown: its chosen alternatives
        if isinstance(message, UserMessage):
            lines += ["## User", ""]
            lines += _blocks_markdown(message.content)
        elif isinstance(message, AssistantMessage | AssistantMessageToolCall):
            lines += ["## Assistant", ""]
            lines += _blocks_markdown(message.content)
            if isinstance(message, AssistantMessageToolCall):
                for call in message.tool_calls:
                    arguments = json.dumps(call.arguments, indent=2, ensure_ascii=False)
                    lines += [f"**Tool call** `{call.name}`", "", "```json", arguments, "```"]
            if message.error_message:
                lines += [f"**Error:** {message.error_message}"]
        elif isinstance(message, ToolResultMessage):
            status = "failed" if message.is_error else "result"
            lines += [f"### Tool {status}: `{message.tool_name}`", ""]
            lines += _blocks_markdown(message.content)
        lines.append("")
    return redact(replace_lone_surrogates("\n".join(lines).rstrip() + "\n"))
