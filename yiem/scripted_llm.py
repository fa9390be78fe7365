"""An `LlmClient` that replays scripted responses: the LLM of tests, demos and benchmarks."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from yiem.errors import YiemError
from yiem.extract import extract_assistant_message
from yiem.llm import (
    GenerationOptions,
    ReasoningDelta,
    StreamDone,
    StreamEvent,
    StreamStart,
    TextDelta,
    ToolCallDelta,
    aborted_reply,
)
from yiem.types import (
    AbortSignal,
    AgentContext,
    AgentMessage,
    AnyAssistantMessage,
    AssistantMessage,
    AssistantMessageToolCall,
    ImageContent,
    LlmModel,
    ReasoningContent,
    TextContent,
)

ScriptedResponse = Any
"""Any SP-017/SP-018 response, a string, an assistant message, or a callable `(context) -> response`."""


@dataclass(frozen=True)
class ScriptedRequest:
    """What one `stream` call was given (messages are a shallow copy of the list)."""

    model: LlmModel
    system_prompt: str
    messages: list[AgentMessage]
    tool_names: list[str]
    options: GenerationOptions | None


class ScriptedLlmError(YiemError, ValueError):
    """A ScriptedLlm set up wrongly (a chunk size under 1)."""


class ScriptedLlm:
    """Replays `responses` one per `stream` call, streaming text in `chunk_size`-character deltas.

    `delay` seconds pass between deltas (an abort cuts the wait short). When the responses run
    out, the stream ends with an error message instead of raising.
    """

    def __init__(self, responses: Sequence[ScriptedResponse], *, chunk_size: int = 4, delay: float = 0.0):
        if chunk_size < 1:
            raise ScriptedLlmError("chunk_size must be at least 1")
        self._responses = list(responses)
        self._next = 0
        self._lock = threading.Lock()
        self.chunk_size = chunk_size
        self.delay = delay
        self.requests: list[ScriptedRequest] = []

    @property
    def remaining(self) -> int:
        """Responses not replayed yet."""
        return len(self._responses) - self._next

    def stream(
        self,
        model: LlmModel,
        context: AgentContext,
        signal: AbortSignal | None = None,
        *,
        options: GenerationOptions | None = None,
    ) -> Iterator[StreamEvent]:
        """Stream the next response; exactly one `StreamDone` at the end, never an exception."""
        with self._lock:
            index = self._next
            self._next += 1
            self.requests.append(
                ScriptedRequest(
                    model=model,
                    system_prompt=context.system_prompt,
                    messages=list(context.messages),
                    tool_names=list(context.tools or {}),
                    options=options,
                )
            )
        return self._replay(index, model, context, signal)

    def _final(self, index: int, model: LlmModel, context: AgentContext) -> AnyAssistantMessage:
        if index >= len(self._responses):
            return AssistantMessage(
                api=model.api,
                provider=model.provider,
                model=model.id,
                stop_reason="error",
                error_message=f"ScriptedLlm has no response left: call {index + 1}, "
                f"{len(self._responses)} scripted",
            )
        response = self._responses[index]
        if callable(response):
            try:
                response = response(context)
            except Exception as exc:
                return AssistantMessage(
                    api=model.api,
                    provider=model.provider,
                    model=model.id,
                    stop_reason="error",
                    error_message=f"scripted response {index + 1} failed: {type(exc).__name__}: {exc}",
                )
        return extract_assistant_message(response, model=model)

    def _replay(
        self, index: int, model: LlmModel, context: AgentContext, signal: AbortSignal | None
    ) -> Iterator[StreamEvent]:
        final = self._final(index, model, context)
        partial = _empty_like(final)
        yield StreamStart(partial=partial)
        deltas = _deltas(final, partial, self.chunk_size)
        while True:
            if self.delay:
                (signal.wait if signal is not None else threading.Event().wait)(self.delay)
            if signal is not None and signal.aborted:
                yield StreamDone(message=aborted_reply(partial, model, signal.reason))
                return
            event = next(deltas, None)
            if event is None:
                break
            yield event
        yield StreamDone(message=final)


def _empty_like(final: AnyAssistantMessage) -> AnyAssistantMessage:
    meta = {"api": final.api, "provider": final.provider, "model": final.model}
    if isinstance(final, AssistantMessageToolCall):
        return AssistantMessageToolCall(**meta)
    return AssistantMessage(**meta)


def _chunks(text: str, size: int) -> Iterator[str]:
    for start in range(0, len(text), size):
        yield text[start : start + size]


def _deltas(final: AnyAssistantMessage, partial: AnyAssistantMessage, size: int) -> Iterator[StreamEvent]:
    """The deltas a provider would send, building `partial` in place as they go."""
    for block in final.content:
        if isinstance(block, ImageContent):
            partial.content.append(block)
            continue
        target: TextContent | ReasoningContent = (
            TextContent(text="") if isinstance(block, TextContent) else ReasoningContent(text="")
        )
        partial.content.append(target)
        make: Callable[..., TextDelta | ReasoningDelta] = (
            TextDelta if isinstance(block, TextContent) else ReasoningDelta
        )
        for piece in _chunks(block.text, size):
            target.text += piece
            yield make(partial=partial, delta=piece)
    if isinstance(final, AssistantMessageToolCall) and isinstance(partial, AssistantMessageToolCall):
        for index, call in enumerate(final.tool_calls):
            arguments = json.dumps(call.arguments)
            partial.tool_calls.append(call.model_copy(update={"arguments": {}}))
            for number, piece in enumerate(_chunks(arguments, size * 4)):
                first = number == 0
                yield ToolCallDelta(
                    partial=partial,
                    index=index,
                    id=call.id if first else None,
                    name=call.name if first else None,
                    arguments_delta=piece,
                )
            partial.tool_calls[index] = call
    partial.usage = final.usage
