"""ToolRegistry: MCP tools as AgentTools (SP-009, SP-010, SD-004 `_wrap_mcp_tool`) and Python functions."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Literal

import pytest
from pydantic import ValidationError

from tests.fixtures.mcp import SCRIPTED_STDIO, StdioServer
from yiem.mcp import McpClient, McpError
from yiem.tool_registry import ToolRegistry, function_tool, llm_safe_name
from yiem.types import AbortSignal, ImageContent, TextContent, ToolOutput


@pytest.fixture(scope="module")
def everything(everything_stdio: StdioServer) -> Iterator[McpClient]:
    with McpClient.stdio(everything_stdio.command, everything_stdio.args) as client:
        yield client


@pytest.fixture
def registry(everything: McpClient) -> ToolRegistry:
    registry = ToolRegistry()
    registry.add_mcp_server("everything", everything)
    return registry


def run(registry: ToolRegistry, name: str, args: dict[str, object], **kw: object) -> ToolOutput:
    result = registry.tools[name].execute("call-1", args, AbortSignal(), **kw)
    assert isinstance(result, ToolOutput)
    return result


def test_sp009_mcp_tools_become_agent_tools(registry: ToolRegistry) -> None:
    """SP-009: every listed tool is wrapped with its name, description and input schema."""
    get_sum = registry.tools["get-sum"]
    assert get_sum.description
    assert get_sum.input_schema["required"] == ["a", "b"]
    assert get_sum.display_name  # title, else label, else name
    assert get_sum.server == "everything"  # named on the run's timeline (issue 15)
    assert list(registry.tools)[:2] == ["echo", "get-annotated-message"]  # the server's order


def test_sp010_execute_calls_tools_call(registry: ToolRegistry) -> None:
    """SP-010: execute runs tools/call and its text becomes message content."""
    result = run(registry, "get-sum", {"a": 5, "b": 6})
    assert result.content == [TextContent(text="The sum of 5 and 6 is 11.")]
    assert result.is_error is False
    assert result.details == {"server": "everything", "tool": "get-sum"}


def test_sp010_error_result_carries_over(registry: ToolRegistry) -> None:
    """SP-010 error shape: isError true becomes is_error on the tool output."""
    result = run(registry, "get-sum", {"a": "five"})
    assert result.is_error is True
    assert result.content and isinstance(result.content[0], TextContent)


def test_images_resource_links_and_structured_content(registry: ToolRegistry) -> None:
    image = run(registry, "get-tiny-image", {})
    assert any(isinstance(block, ImageContent) and block.mime_type == "image/png" for block in image.content)
    links = run(registry, "get-resource-links", {"count": 2})
    texts = [block.text for block in links.content if isinstance(block, TextContent)]
    assert sum("[resource link:" in text for text in texts) == 2
    embedded = run(registry, "get-resource-reference", {"resourceType": "Text", "resourceId": 2})
    assert any(isinstance(b, TextContent) and b.text.startswith("[resource ") for b in embedded.content)
    structured = run(registry, "get-structured-content", {"location": "New York"})
    assert isinstance(structured.details, dict)
    assert "temperature" in structured.details["structured_content"]


def test_progress_becomes_on_update(registry: ToolRegistry) -> None:
    updates: list[tuple[ToolOutput, dict[str, object]]] = []
    result = run(
        registry,
        "trigger-long-running-operation",
        {"duration": 1, "steps": 2},
        on_update=lambda update, **kw: updates.append((update, kw)),
    )
    assert not result.is_error
    assert [kw for _, kw in updates] == [
        {"progress": 1, "total": 2, "message": None},
        {"progress": 2, "total": 2, "message": None},
    ]
    assert updates[0][0].content == [TextContent(text="progress 1/2")]


def test_name_clash_is_prefixed_with_the_server(everything: McpClient, everything_stdio: StdioServer) -> None:
    registry = ToolRegistry()
    registry.add_function(lambda_echo, name="echo")
    with McpClient.stdio(everything_stdio.command, everything_stdio.args) as second:
        names = registry.add_mcp_server("my server", second)
        assert "my_server__echo" in names
        assert "get-sum" in names
        assert run(registry, "my_server__echo", {"message": "hi"}).content == [TextContent(text="Echo: hi")]
        assert registry.tools["echo"].execute("c", {"text": "x"}, AbortSignal()) == "x"


def lambda_echo(text: str) -> str:
    """Return the text."""
    return text


def test_llm_safe_names() -> None:
    assert llm_safe_name("get-sum") == "get-sum"
    assert llm_safe_name("files.read file") == "files_read_file"
    assert len(llm_safe_name("x" * 100)) == 64


def test_list_changed_refreshes_the_servers_tools() -> None:
    registry = ToolRegistry()
    with McpClient.stdio(SCRIPTED_STDIO.command, SCRIPTED_STDIO.args) as client:
        registry.add_mcp_server("scripted", client)
        assert "extra" not in registry.tools
        run(registry, "change_tools", {})
        deadline = time.monotonic() + 10
        while "extra" not in registry.tools and time.monotonic() < deadline:
            time.sleep(0.02)
        assert "extra" in registry.tools
        registry.remove_mcp_server("scripted")
        assert registry.tools == {}


def test_dead_server_raises_mcp_error_from_execute() -> None:
    registry = ToolRegistry()
    with McpClient.stdio(SCRIPTED_STDIO.command, SCRIPTED_STDIO.args) as client:
        registry.add_mcp_server("scripted", client)
        with pytest.raises(McpError, match="simulated crash"):
            registry.tools["crash"].execute("c", {}, AbortSignal())


def weather(city: str, days: int = 1, unit: Literal["C", "F"] = "C") -> dict[str, object]:
    """Forecast for a city.

    Returns one entry per day.
    """
    return {"city": city, "days": days, "unit": unit}


def test_add_function_schema_from_signature() -> None:
    tool = function_tool(weather)
    assert tool.name == "weather"
    assert tool.description.startswith("Forecast for a city.")
    assert tool.input_schema == {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer", "default": 1},
            "unit": {"type": "string", "enum": ["C", "F"], "default": "C"},
        },
        "required": ["city"],
        "additionalProperties": False,
    }


def test_add_function_executes_with_validated_arguments() -> None:
    registry = ToolRegistry()
    tool = registry.add_function(weather)
    assert tool.execute("c", {"city": "Oslo", "days": "3"}, AbortSignal()) == (
        '{"city": "Oslo", "days": 3, "unit": "C"}'
    )
    with pytest.raises(ValidationError, match="unit"):
        tool.execute("c", {"city": "Oslo", "unit": "K"}, AbortSignal())
    with pytest.raises(ValueError, match="already registered"):
        registry.add_function(weather)


def test_add_function_needs_type_hints() -> None:
    def untyped(x):  # type: ignore[no-untyped-def]
        return x

    with pytest.raises(TypeError, match="type hint"):
        function_tool(untyped)


def test_sp009_sp010_title_falls_back_to_label_then_name(registry: ToolRegistry) -> None:
    """Issue 12: a tool without `title` or an annotations title is titled by its label, else its name."""
    for name, wrapped in registry.tools.items():
        assert wrapped.title, name  # never None
    with McpClient.stdio(SCRIPTED_STDIO.command, SCRIPTED_STDIO.args) as scripted:
        listed = {tool.name: tool for tool in scripted.list_tools()}
        plain = ToolRegistry()
        plain.add_mcp_server("scripted", scripted)
        untitled = [name for name, tool in listed.items() if not tool.title and not tool.annotations]
        assert untitled  # so the fallback is exercised
        for name, tool in listed.items():
            assert plain.tools[name].title == (tool.display_name)
        assert all(plain.tools[name].title == (listed[name].label or name) for name in untitled)
