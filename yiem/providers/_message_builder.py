"""Builds one assistant message from streamed fragments, whatever the wire protocol."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from yiem.llm import (
    ReasoningDelta,
    StreamDone,
    TextDelta,
    ToolCallDelta,
    aborted_reply,
    dropped_tool_calls_note,
)
from yiem.timeline import Span, Timeline
from yiem.types import (
    AgentToolCall,
    AnyAssistantMessage,
    AssistantMessage,
    AssistantMessageToolCall,
    LlmModel,
    LlmUsage,
    ReasoningContent,
    TextContent,
)


class _PendingToolCall:
    __slots__ = ("arguments", "id", "index", "name")

    def __init__(self, index: int) -> None:
        self.index = index
        self.id = ""
        self.name = ""
        self.arguments: list[str] = []


class MessageBuilder:
    """Collects text, reasoning and tool-call fragments; `finish()` gives the final message.

    The `partial` message handed to each delta event is updated in place as fragments arrive.
    """

    def __init__(self, model: LlmModel, provider: str, api: str | None = None) -> None:
        self.model = model
        self.api = api or model.api
        self.started = time.perf_counter()
        self.first_token_at: float | None = None
        self.usage = LlmUsage()
        self.stop_reason: str | None = None
        # Set by the protocol reader when the end-of-reply marker arrived.
        self.complete = False
        self.model_id = model.id
        # Retry back-offs before the reply began: the loop adds them to the run's timeline.
        self.waits: list[Span] = []
        self._text: TextContent | None = None
        self._reasoning: ReasoningContent | None = None
        self._tool_calls: dict[int, _PendingToolCall] = {}
        self.partial: AnyAssistantMessage = AssistantMessage(api=self.api, provider=provider, model=model.id)

    @property
    def has_content(self) -> bool:
        """True once anything visible has arrived."""
        return self._text is not None or self._reasoning is not None or bool(self._tool_calls)

    def waited(self, started: float, reason: str) -> None:
        """Record a wait (a retry's back-off) from `started` until now."""
        self.waits.append(Span("wait", reason, started, time.perf_counter()))

    def _timeline(self) -> Timeline | None:
        return Timeline("", self.waits) if self.waits else None

    def _touch(self) -> None:
        if self.first_token_at is None:
            self.first_token_at = time.perf_counter()

    def text(self, delta: str) -> TextDelta | None:
        """Append visible text."""
        if not delta:
            return None
        self._touch()
        if self._text is None:
            self._text = TextContent(text=delta)
            self.partial.content.append(self._text)
        else:
            self._text.text += delta
        return TextDelta.model_construct(partial=self.partial, delta=delta, type="text_delta")

    def reasoning(self, delta: str) -> ReasoningDelta | None:
        """Append reasoning text (kept before the visible text)."""
        if not delta:
            return None
        self._touch()
        if self._reasoning is None:
            self._reasoning = ReasoningContent(text=delta)
            self.partial.content.insert(0, self._reasoning)
        else:
            self._reasoning.text += delta
        return ReasoningDelta.model_construct(partial=self.partial, delta=delta, type="reasoning_delta")

    def tool_call(
        self, index: int, call_id: str | None = None, name: str | None = None, arguments: str = ""
    ) -> ToolCallDelta:
        """Add a fragment of the tool call at `index`; id and name usually come with the first one."""
        self._touch()
        pending = self._tool_calls.get(index)
        if pending is None:
            pending = self._tool_calls[index] = _PendingToolCall(index)
            if not isinstance(self.partial, AssistantMessageToolCall):
                self.partial = AssistantMessageToolCall.model_construct(
                    **{**self.partial.__dict__, "tool_calls": [], "stop_reason": "tool_calls"}
                )
            assert isinstance(self.partial, AssistantMessageToolCall)
            self.partial.tool_calls.append(AgentToolCall(id=call_id or "", name=name or ""))
        if call_id:
            pending.id = call_id
        if name and name != pending.name:
            # OpenAI sends the name once; a few servers split it or repeat it in every fragment.
            pending.name += name
        if arguments:
            pending.arguments.append(arguments)
        assert isinstance(self.partial, AssistantMessageToolCall)
        shown = self.partial.tool_calls[list(self._tool_calls).index(index)]
        shown.id, shown.name = pending.id, pending.name
        return ToolCallDelta.model_construct(
            partial=self.partial,
            index=index,
            id=pending.id or None,
            name=pending.name or None,
            arguments_delta=arguments,
            type="toolcall_delta",
        )

    def index_for_id(self, call_id: str | None) -> int:
        """Where a fragment without an `index` goes: the call with its id, a new call for a new id,
        else the call before it (as servers that send one whole call per chunk do)."""
        if call_id:
            for index, pending in self._tool_calls.items():
                if pending.id == call_id:
                    return index
            return max(self._tool_calls, default=-1) + 1
        return max(self._tool_calls, default=0)

    def finish(self, error: str | None = None, stop_reason: str | None = None) -> StreamDone:
        """The final message: tool calls parsed strictly; an error keeps the partial text and says so."""
        content = self._content()
        error, tool_calls = self._final_tool_calls(error)
        if stop_reason is None and error:
            stop_reason = "error"
        elif stop_reason is None and tool_calls:
            # Some servers finish a tool-call reply with "stop"; the message is a tool call all the same.
            stop_reason = "tool_calls"
        reason = stop_reason or self.stop_reason or "stop"
        fields: dict[str, Any] = {
            "content": content,
            "api": self.api,
            "provider": self.partial.provider,
            "model": self.model_id,
            "usage": self.usage,
            "stop_reason": reason,
            "error_message": error,
            "cost": self.model.cost_of(self.usage),
            "timeline": self._timeline(),
            **self._timings(),
        }
        message: AnyAssistantMessage
        if tool_calls and not error:
            message = AssistantMessageToolCall(**fields, tool_calls=tool_calls)
        else:
            message = AssistantMessage(**fields)
        return StreamDone(message=message)

    def aborted(self, reason: str | None) -> StreamDone:
        """The final message after an abort: the one the loop and the scripted model build too."""
        message = aborted_reply(self.partial, self.model, reason)
        update = {
            "model": self.model_id,
            "usage": self.usage,
            "cost": self.model.cost_of(self.usage),
            "timeline": self._timeline(),
        }
        return StreamDone(message=message.model_copy(update={**update, **self._timings()}))

    def _timings(self) -> dict[str, float | None]:
        ended = time.perf_counter()
        first = self.first_token_at
        return {
            "duration_ms": (ended - self.started) * 1000,
            "ttft_ms": None if first is None else (first - self.started) * 1000,
        }

    def _content(self) -> list[Any]:
        blocks: list[Any] = []
        if self._reasoning is not None:
            blocks.append(ReasoningContent(text=self._reasoning.text))
        if self._text is not None:
            blocks.append(TextContent(text=self._text.text))
        return blocks

    def _final_tool_calls(self, error: str | None) -> tuple[str | None, list[AgentToolCall]]:
        calls: list[AgentToolCall] = []
        problems: list[str] = []
        for position, pending in enumerate(self._tool_calls.values()):
            raw = "".join(pending.arguments)
            label = pending.name or f"#{position + 1}"
            if not pending.name:
                problems.append(f"tool call {label} has no tool name")
                continue
            try:
                arguments = json.loads(raw) if raw.strip() else {}
            except json.JSONDecodeError as exc:
                problems.append(
                    f"the arguments of tool call {label} are not valid JSON ({exc.msg}): {raw[:200]}"
                )
                continue
            if not isinstance(arguments, dict):
                problems.append(f"the arguments of tool call {label} are not a JSON object: {raw[:200]}")
                continue
            call_id = pending.id or f"call_{uuid.uuid4().hex[:24]}"
            calls.append(AgentToolCall(id=call_id, name=pending.name, arguments=arguments))
        if error and self._tool_calls:
            error = f"{error.rstrip('.')}. {dropped_tool_calls_note(len(self._tool_calls))}"
        elif problems and not error:
            error = "The model sent a tool call yiem cannot use: " + "; ".join(problems) + "."
        return error, calls
