"""`python -m yiem`: with no arguments a short demo of the agent loop (ScriptedLlm plays the model, a
Python function is the tool); `python -m yiem check COLLECTION` runs saved checks and
`python -m yiem experiments run SPEC` an exported experiment (see `--help`).
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

import click

from yiem.agent import Agent
from yiem.amounts import dollars
from yiem.checks._cli import check_command
from yiem.events import (
    AgentEndEvent,
    AgentEvent,
    MessageEndEvent,
    MessageUpdateEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
)
from yiem.experiments_cli import experiments_group
from yiem.scripted_llm import ScriptedLlm
from yiem.types import AbortSignal, AgentTool, LlmModel, ModelCost

WEATHER = {"Bangkok": 31, "Oslo": -3, "Lima": 19}


def get_weather(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal) -> str:
    """The demo's tool: today's temperature in a few cities."""
    city = arguments["city"]
    if city not in WEATHER:
        raise LookupError(f"No weather for {city}; try one of {', '.join(WEATHER)}")
    return f"{WEATHER[city]}°C in {city}"


WEATHER_TOOL = AgentTool(
    name="get_weather",
    description="Today's temperature in a city",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    execute=get_weather,
)


def _call(call_id: str, city: str) -> dict[str, Any]:
    arguments = f'{{"city": "{city}"}}'
    return {"id": call_id, "type": "function", "function": {"name": "get_weather", "arguments": arguments}}


# Two replies in two of the formats extraction accepts: SP-017 (nested message) and SP-018.3 (blocks).
SCRIPT: list[Any] = [
    {
        "finish_reason": "tool_calls",
        "message": {
            "reasoning_content": "The user asks about two cities; I will look both up.",
            "tool_calls": [_call("call_1", "Bangkok"), _call("call_2", "Paris")],
        },
        "usage": {"prompt_tokens": 120, "completion_tokens": 40},
    },
    {
        "content": [{"type": "text", "text": "Bangkok is at 31°C today. I have no weather for Paris."}],
        "usage": {"inputTokens": 190, "outputTokens": 18},
    },
]

DEMO_MODEL = LlmModel(
    id="scripted-demo",
    name="Scripted demo model",
    provider="scripted",
    cost=ModelCost(input=3, output=15),
    price_known=True,
)


def describe(event: AgentEvent) -> str | None:
    """One line for an event; None for the deltas, which are printed inline."""
    if isinstance(event, ToolExecutionStartEvent):
        return f"[{event.type}] {event.tool_call.name}({event.args})"
    if isinstance(event, ToolExecutionEndEvent):
        status = "error" if event.is_error else "ok"
        text = "".join(getattr(block, "text", "") for block in event.result.content)
        return f"[{event.type}] {event.tool_call.name} -> {status}: {text}"
    if isinstance(event, MessageEndEvent):
        message = event.message
        extra = ""
        if message.role == "assistant":
            cost = getattr(message, "cost", None)
            extra = f" stop={message.stop_reason} tokens={message.usage.total_tokens}"
            extra += f" cost={dollars(cost.total)}" if cost is not None else ""
        return f"[{event.type}] {message.role}{extra}"
    if isinstance(event, AgentEndEvent):
        return f"[{event.type}] stop_reason={event.stop_reason} messages={len(event.messages)}"
    return f"[{event.type}]"


def main(out: TextIO = sys.stdout) -> int:
    agent = Agent(ScriptedLlm(SCRIPT, chunk_size=6), DEMO_MODEL, system_prompt="You report the weather.")
    agent.state.tools[WEATHER_TOOL.name] = WEATHER_TOOL
    prompt = "How warm is it in Bangkok and Paris?"
    print(f"user: {prompt}", file=out)
    streaming = False
    for event in agent.prompt(prompt):
        if isinstance(event, MessageUpdateEvent):
            if event.kind != "toolcall":
                out.write(event.delta)
                streaming = True
            continue
        if streaming:
            out.write("\n")
            streaming = False
        line = describe(event)
        if line:
            print(line, file=out)
    return 0 if agent.state.error_message is None else 1


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.pass_context
def cli(context: click.Context) -> None:
    """yiem from the command line: with no command, a short demo of the agent loop."""
    if context.invoked_subcommand is None:
        context.exit(main())


cli.add_command(check_command)
cli.add_command(experiments_group)


if __name__ == "__main__":
    cli()
