"""yiem: a synchronous implementation of the YiemAgent specification."""

from typing import TYPE_CHECKING

from yiem.agent import Agent, AgentBusyError, AgentError
from yiem.background_events import BackgroundEvents, Quiet
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
    "AnthropicClient",
    "AnyAssistantMessage",
    "AssistantMessage",
    "AssistantMessageToolCall",
    "BackgroundEvents",
    "BeforeToolCallContext",
    "BeforeToolCallResult",
    "GenerationOptions",
    "ImageContent",
    "LlmClient",
    "LlmModel",
    "LlmUsage",
    "LocalLlmServer",
    "McpClient",
    "McpError",
    "MessageContent",
    "MessageEndEvent",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "ModelCost",
    "OpenAIChatClient",
    "Quiet",
    "ReasoningContent",
    "ReasoningDelta",
    "RetryPolicy",
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
    "ToolRegistry",
    "ToolResultMessage",
    "TurnEndEvent",
    "TurnStartEvent",
    "UsageCost",
    "UserMessage",
    "content_to_blocks",
    "extract_assistant_message",
    "get_model",
    "message_to_openai",
    "run_agent_loop",
    "to_openai_messages",
    "tool_to_openai",
    "validate_required_args",
    "validate_tool_arguments",
]

if TYPE_CHECKING:
    from yiem.catalog import get_model
    from yiem.local_llm import LocalLlmServer
    from yiem.mcp import McpClient, McpError
    from yiem.providers import AnthropicClient, OpenAIChatClient, RetryPolicy
    from yiem.tool_registry import ToolRegistry

# The HTTP and MCP layers load on first use, so `import yiem` (and `import yiem.mcp`) stay light.
_LAZY = {
    "AnthropicClient": "yiem.providers",
    "OpenAIChatClient": "yiem.providers",
    "McpClient": "yiem.mcp",
    "McpError": "yiem.mcp",
    "ToolRegistry": "yiem.tool_registry",
    "RetryPolicy": "yiem.providers",
    "LocalLlmServer": "yiem.local_llm",
    "get_model": "yiem.catalog",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'yiem' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
