"""yiem: a synchronous implementation of the YiemAgent specification."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from yiem.agent import Agent, AgentBusyError, AgentError
    from yiem.errors import YiemError
    from yiem.events import (
        AgentEndEvent,
        AgentEvent,
        AgentStartEvent,
        MessageEndEvent,
        MessageStartEvent,
        MessageUpdateEvent,
        ToolExecutionEndEvent,
        ToolExecutionStartEvent,
        ToolExecutionUpdateEvent,
        TurnEndEvent,
        TurnStartEvent,
    )
    from yiem.extract import extract_assistant_message
    from yiem.llm import (
        GenerationOptions,
        LlmClient,
        ReasoningDelta,
        StreamDone,
        StreamEvent,
        StreamStart,
        TextDelta,
        ToolCallDelta,
    )
    from yiem.loop import run_agent_loop
    from yiem.openai_format import content_to_blocks, message_to_openai, to_openai_messages, tool_to_openai
    from yiem.scripted_llm import ScriptedLlm, ScriptedRequest
    from yiem.types import (
        AbortSignal,
        AfterToolCallContext,
        AfterToolCallResult,
        AgentContext,
        AgentLoopConfig,
        AgentMessage,
        AgentState,
        AgentTool,
        AgentToolCall,
        AnyAssistantMessage,
        AssistantMessage,
        AssistantMessageToolCall,
        BeforeToolCallContext,
        BeforeToolCallResult,
        ImageContent,
        LlmModel,
        LlmUsage,
        MessageContent,
        ModelCost,
        ReasoningContent,
        TextContent,
        ToolOutput,
        ToolResultMessage,
        UsageCost,
        UserMessage,
    )
    from yiem.validation import ToolArgumentError, validate_required_args, validate_tool_arguments

__all__ = [
    "AbortSignal",
    "AfterToolCallContext",
    "AfterToolCallResult",
    "Agent",
    "AgentBusyError",
    "AgentContext",
    "AgentEndEvent",
    "AgentError",
    "AgentEvent",
    "AgentLoopConfig",
    "AgentMessage",
    "AgentStartEvent",
    "AgentState",
    "AgentTool",
    "AgentToolCall",
    "AnyAssistantMessage",
    "AssistantMessage",
    "AssistantMessageToolCall",
    "BeforeToolCallContext",
    "BeforeToolCallResult",
    "GenerationOptions",
    "ImageContent",
    "LlmClient",
    "LlmModel",
    "LlmUsage",
    "MessageContent",
    "MessageEndEvent",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "ModelCost",
    "ReasoningContent",
    "ReasoningDelta",
    "ScriptedLlm",
    "ScriptedRequest",
    "StreamDone",
    "StreamEvent",
    "StreamStart",
    "TextContent",
    "TextDelta",
    "ToolArgumentError",
    "ToolCallDelta",
    "ToolExecutionEndEvent",
    "ToolExecutionStartEvent",
    "ToolExecutionUpdateEvent",
    "ToolOutput",
    "ToolResultMessage",
    "TurnEndEvent",
    "TurnStartEvent",
    "UsageCost",
    "UserMessage",
    "YiemError",
    "content_to_blocks",
    "extract_assistant_message",
    "message_to_openai",
    "run_agent_loop",
    "to_openai_messages",
    "tool_to_openai",
    "validate_required_args",
    "validate_tool_arguments",
]

# Names load on first use, as pydantic's do: `import yiem` stays cheap for a script that needs one part.
_MODULES = {
    "AbortSignal": "yiem.types",
    "AfterToolCallContext": "yiem.types",
    "AfterToolCallResult": "yiem.types",
    "Agent": "yiem.agent",
    "AgentBusyError": "yiem.agent",
    "AgentContext": "yiem.types",
    "AgentEndEvent": "yiem.events",
    "AgentError": "yiem.agent",
    "AgentEvent": "yiem.events",
    "AgentLoopConfig": "yiem.types",
    "AgentMessage": "yiem.types",
    "AgentStartEvent": "yiem.events",
    "AgentState": "yiem.types",
    "AgentTool": "yiem.types",
    "AgentToolCall": "yiem.types",
    "AnyAssistantMessage": "yiem.types",
    "AssistantMessage": "yiem.types",
    "AssistantMessageToolCall": "yiem.types",
    "BeforeToolCallContext": "yiem.types",
    "BeforeToolCallResult": "yiem.types",
    "GenerationOptions": "yiem.llm",
    "ImageContent": "yiem.types",
    "LlmClient": "yiem.llm",
    "LlmModel": "yiem.types",
    "LlmUsage": "yiem.types",
    "MessageContent": "yiem.types",
    "MessageEndEvent": "yiem.events",
    "MessageStartEvent": "yiem.events",
    "MessageUpdateEvent": "yiem.events",
    "ModelCost": "yiem.types",
    "ReasoningContent": "yiem.types",
    "ReasoningDelta": "yiem.llm",
    "ScriptedLlm": "yiem.scripted_llm",
    "ScriptedRequest": "yiem.scripted_llm",
    "StreamDone": "yiem.llm",
    "StreamEvent": "yiem.llm",
    "StreamStart": "yiem.llm",
    "TextContent": "yiem.types",
    "TextDelta": "yiem.llm",
    "ToolArgumentError": "yiem.validation",
    "ToolCallDelta": "yiem.llm",
    "ToolExecutionEndEvent": "yiem.events",
    "ToolExecutionStartEvent": "yiem.events",
    "ToolExecutionUpdateEvent": "yiem.events",
    "ToolOutput": "yiem.types",
    "ToolResultMessage": "yiem.types",
    "TurnEndEvent": "yiem.events",
    "TurnStartEvent": "yiem.events",
    "UsageCost": "yiem.types",
    "UserMessage": "yiem.types",
    "YiemError": "yiem.errors",
    "content_to_blocks": "yiem.openai_format",
    "extract_assistant_message": "yiem.extract",
    "message_to_openai": "yiem.openai_format",
    "run_agent_loop": "yiem.loop",
    "to_openai_messages": "yiem.openai_format",
    "tool_to_openai": "yiem.openai_format",
    "validate_required_args": "yiem.validation",
    "validate_tool_arguments": "yiem.validation",
}


def __getattr__(name: str) -> object:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'yiem' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
