"""The interface every provider implements, and the events its stream yields."""

from collections.abc import Iterator
from typing import Annotated, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from yiem.types import (
    AbortSignal,
    AgentContext,
    AnyAssistantMessage,
    AssistantMessage,
    AssistantMessageToolCall,
    LlmModel,
    LlmUsage,
)


class GenerationOptions(BaseModel):
    """Per-request knobs; None leaves the provider's default."""

    model_config = ConfigDict(defer_build=True)

    temperature: float | None = None
    max_tokens: int | None = None
    # Structured output: the reply is JSON this schema accepts (a provider without it says so).
    response_schema: dict[str, Any] | None = None


class _StreamEventBase(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)

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

    model_config = ConfigDict(defer_build=True)

    type: Literal["done"] = "done"
    message: AnyAssistantMessage


StreamEvent = Annotated[
    StreamStart | TextDelta | ReasoningDelta | ToolCallDelta | StreamDone, Field(discriminator="type")
]


@runtime_checkable
class LlmClient(Protocol):
    """A provider. `stream` never raises: failures end it with `stop_reason` "error" or "aborted".

    `options` is keyword-only and optional: a client written as `stream(model, context, signal)`
    works too, and the loop then sends it no options.
    """

    def stream(
        self,
        model: LlmModel,
        context: AgentContext,
        signal: AbortSignal | None = None,
        *,
        options: GenerationOptions | None = None,
    ) -> Iterator[StreamEvent]: ...


# --- the end of a stream that did not finish ---------------------------------------------------


def aborted_text(reason: str | None, what: str = "Aborted") -> str:
    """`Aborted: <reason>`, or just `Aborted` when no reason was given."""
    return f"{what}: {reason}" if reason else what


def dropped_tool_calls_note(count: int) -> str:
    """The sentence added to an error when half-streamed tool calls had to be dropped."""
    if count <= 0:
        return ""
    if count == 1:
        return "The unfinished tool call was dropped."
    return f"The {count} unfinished tool calls were dropped."


def unfinished_reply(
    partial: AnyAssistantMessage | None, model: LlmModel, stop_reason: str, error: str
) -> AssistantMessage:
    """The final message of a stream cut short: the content so far kept, half-made tool calls dropped.

    Tool calls without their whole arguments cannot run and would have no results, so they go,
    and `error_message` says so.
    """
    dropped = len(partial.tool_calls) if isinstance(partial, AssistantMessageToolCall) else 0
    note = dropped_tool_calls_note(dropped)
    if note:
        error = f"{error.rstrip('.')}. {note}"
    return AssistantMessage(
        content=[block.model_copy() for block in partial.content] if partial is not None else [],
        api=partial.api if partial is not None and partial.api else model.api,
        provider=partial.provider if partial is not None and partial.provider else model.provider,
        model=partial.model if partial is not None and partial.model else model.id,
        usage=partial.usage.model_copy() if partial is not None else LlmUsage(),
        stop_reason=stop_reason,
        error_message=error,
    )


def aborted_reply(
    partial: AnyAssistantMessage | None, model: LlmModel, reason: str | None
) -> AssistantMessage:
    """The final message of an aborted stream, the same from every provider and from the loop."""
    return unfinished_reply(partial, model, "aborted", aborted_text(reason))
