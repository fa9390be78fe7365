"""The public surface: `yiem` gives the spec names and the agent; each layer exports its own names."""

import subprocess
import sys

import yiem


def test_every_public_name_imports() -> None:
    missing = [name for name in yiem.__all__ if getattr(yiem, name, None) is None]
    assert missing == []


def test_issue_names_are_public() -> None:
    wanted = [
        "TextContent",
        "ImageContent",
        "ReasoningContent",
        "UserMessage",
        "AssistantMessage",
        "AssistantMessageToolCall",
        "ToolResultMessage",
        "AgentToolCall",
        "LlmUsage",
        "UsageCost",
        "ModelCost",
        "LlmModel",
        "AgentTool",
        "ToolOutput",
        "AgentContext",
        "AgentState",
        "AgentLoopConfig",
        "AbortSignal",
        "ToolArgumentError",
        "to_openai_messages",
        "message_to_openai",
        "content_to_blocks",
        "tool_to_openai",
        "extract_assistant_message",
        "validate_required_args",
        "validate_tool_arguments",
        "run_agent_loop",
        "Agent",
        "LlmClient",
        "ScriptedLlm",
        "YiemError",
    ]
    assert sorted(set(wanted) - set(yiem.__all__)) == []


def test_the_root_holds_the_spec_core_only() -> None:
    """Providers, MCP and the app services are imported from their own packages, not from `yiem`."""
    for name in ("McpClient", "OpenAIChatClient", "AnthropicClient", "get_model", "BackgroundEvents"):
        assert name not in yiem.__all__
    from yiem.mcp import McpClient
    from yiem.providers import AnthropicClient, OpenAIChatClient
    from yiem.providers.catalog import get_model
    from yiem.tool_registry import ToolRegistry

    layers = (McpClient, OpenAIChatClient, AnthropicClient, get_model, ToolRegistry)
    assert all(callable(item) for item in layers)


def test_import_yiem_does_not_load_http_or_mcp_layers() -> None:
    code = (
        "import sys, yiem; "
        "heavy = ('yiem.providers', 'yiem.mcp', 'yiem.providers.catalog', 'httpx'); "
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_unknown_attribute_is_an_attribute_error() -> None:
    try:
        _ = yiem.NoSuchName  # type: ignore[attr-defined]
    except AttributeError as error:
        assert "NoSuchName" in str(error)
    else:
        raise AssertionError("yiem.NoSuchName should not exist")
