"""The interface every provider implements, and the events its stream yields."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from yiem.types import AbortSignal, AgentContext, AnyAssistantMessage, LlmModel


class GenerationOptions(BaseModel):
    """Per-request knobs; None leaves the provider's default."""

    temperature: float | None = None
    max_tokens: int | None = None


class _StreamEventBase(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    # The message as built so far; the same object may be updated in place between events.
    partial: AnyAssistantMessage


class StreamStart(_StreamEventBase):
    """The provider has answered; nothing generated yet."""

    type: Literal["start"] = "start"


class TextDelta(_StreamEventBase):
    """More visible text."""

    type: Literal["text_delta"] = "text_delta"
    delta: str


class ReasoningDelta(_StreamEventBase):
    """More reasoning text."""

    type: Literal["reasoning_delta"] = "reasoning_delta"
    delta: str


class ToolCallDelta(_StreamEventBase):
    """A fragment of a tool call's arguments (JSON text); `id` and `name` are known once sent."""

    type: Literal["toolcall_delta"] = "toolcall_delta"
    index: int
    id: str | None = None
    name: str | None = None
    arguments_delta: str = ""


class StreamDone(BaseModel):
    """The final message: always exactly one per stream, also after errors and aborts."""

    type: Literal["done"] = "done"
    message: AnyAssistantMessage


StreamEvent = Annotated[
    StreamStart | TextDelta | ReasoningDelta | ToolCallDelta | StreamDone, Field(discriminator="type")
]


@runtime_checkable
class LlmClient(Protocol):
    """A provider. `stream` never raises: failures end it with `stop_reason` "error" or "aborted"."""

    def stream(
        self,
        model: LlmModel,
        context: AgentContext,
        signal: AbortSignal | None = None,
        options: GenerationOptions | None = None,
    ) -> Iterator[StreamEvent]: ...
