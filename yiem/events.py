"""The events the agent loop yields; each carries what a UI needs to redraw."""

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from yiem.types import AgentMessage, AgentToolCall, AnyAssistantMessage, ToolOutput, ToolResultMessage


class _Event(BaseModel):
    # Built on first use, not at `import yiem`: a program that never runs the loop never pays for them.
    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)


class AgentStartEvent(_Event):
    """The loop has started."""

    type: Literal["agent_start"] = "agent_start"


class TurnStartEvent(_Event):
    """A new LLM call begins (turn numbers start at 1)."""

    type: Literal["turn_start"] = "turn_start"
    turn: int


class MessageStartEvent(_Event):
    """A message begins: a user prompt, an assistant reply being streamed, or a tool result."""

    type: Literal["message_start"] = "message_start"
    message: AgentMessage


class MessageUpdateEvent(_Event):
    """A streamed delta of the assistant reply; `message` is the reply so far."""

    type: Literal["message_update"] = "message_update"
    message: AnyAssistantMessage
    kind: Literal["text", "reasoning", "toolcall"]
    delta: str


class MessageEndEvent(_Event):
    """A message is complete: the moment to save it."""

    type: Literal["message_end"] = "message_end"
    message: AgentMessage


class ToolExecutionStartEvent(_Event):
    """A tool call is about to run (after validation and `before_tool_call`)."""

    type: Literal["tool_execution_start"] = "tool_execution_start"
    tool_call: AgentToolCall
    args: dict[str, Any]


class ToolExecutionUpdateEvent(_Event):
    """Progress reported by a running tool."""

    type: Literal["tool_execution_update"] = "tool_execution_update"
    tool_call: AgentToolCall
    partial_result: ToolOutput
    progress: float | None = None
    total: float | None = None
    message: str | None = None


class ToolExecutionEndEvent(_Event):
    """A tool call finished, failed, was blocked or was aborted."""

    type: Literal["tool_execution_end"] = "tool_execution_end"
    tool_call: AgentToolCall
    result: ToolResultMessage
    is_error: bool
    duration_ms: float


class TurnEndEvent(_Event):
    """One assistant reply and the results of its tool calls."""

    type: Literal["turn_end"] = "turn_end"
    turn: int
    message: AnyAssistantMessage
    tool_results: list[ToolResultMessage] = Field(default_factory=list)


class AgentEndEvent(_Event):
    """The loop is over; `messages` are the ones this run added."""

    type: Literal["agent_end"] = "agent_end"
    messages: list[AgentMessage]
    stop_reason: str
    error_message: str | None = None


AgentEvent = Annotated[
    AgentStartEvent
    | TurnStartEvent
    | MessageStartEvent
    | MessageUpdateEvent
    | MessageEndEvent
    | ToolExecutionStartEvent
    | ToolExecutionUpdateEvent
    | ToolExecutionEndEvent
    | TurnEndEvent
    | AgentEndEvent,
    Field(discriminator="type"),
]
