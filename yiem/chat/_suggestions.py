"""What an empty chat suggests to a new person: three prompts, one of them for the example MCP
server's tool when the model can call tools (and why not, when it cannot)."""

from __future__ import annotations

from dataclasses import dataclass

FIRST_RUN = (
    "Chat talks with a model, calls the tools of the MCP servers you connect, and records what each "
    "reply cost. Type a message below, or try one of these."
)
PLAIN_PROMPTS = (
    "Tell me a fun fact about octopuses.",
    "Write a haiku about autumn.",
    "Explain what a cloud is, in simple words.",
)
TOOL_PROMPT = "What time is it in Tokyo right now?"
EXAMPLE_TOOL = "get_current_time"  # the example time server's (mcp-server-time) tool

NO_TOOLS = (
    "The embedded SmolLM2 cannot call tools, so none of these uses one. With a model that can (pick "
    f"its provider in Settings) and the example time server added on the Tools page, ask “{TOOL_PROMPT}”."
)
ADD_THE_SERVER = "The last one uses the example time server's tool: add the server on the Tools page first."


@dataclass(frozen=True)
class Suggestions:
    """The prompts to offer, and a sentence about the tool suggestion (None: nothing to say)."""

    prompts: tuple[str, ...]
    note: str | None
    intro: str = FIRST_RUN


def chat_suggestions(calls_tools: bool, enabled_tools: set[str]) -> Suggestions:
    """Three prompts; the third asks for the time server's tool when the model is sent tools."""
    if not calls_tools:
        return Suggestions(PLAIN_PROMPTS, NO_TOOLS)
    ready = any(name == EXAMPLE_TOOL or name.endswith(f"__{EXAMPLE_TOOL}") for name in enabled_tools)
    return Suggestions((*PLAIN_PROMPTS[:2], TOOL_PROMPT), None if ready else ADD_THE_SERVER)
