"""The core's agent loop end to end over real HTTP: both clients, the real llama-server, a real tool.

SmolLM2 only calls tools when nudged, so the clients below add the test device from the issue
on the first turn (an assistant turn opened with `<tool_call>` and a forced tool choice);
everything else is the real client, the real server and the real loop (FR-003, SP-019, SP-021).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.providers.test_openai_chat import weather_tool
from yiem.events import AgentEndEvent, MessageUpdateEvent, ToolExecutionEndEvent, ToolExecutionStartEvent
from yiem.llm import GenerationOptions
from yiem.loop import run_agent_loop
from yiem.providers import AnthropicClient, OpenAIChatClient
from yiem.providers._http import HttpLlmClient, HttpRequest
from yiem.providers.local_llm import LocalLlmServer
from yiem.types import (
    AgentContext,
    AgentLoopConfig,
    AssistantMessageToolCall,
    LlmModel,
    TextContent,
    ToolResultMessage,
    UserMessage,
)

pytestmark = pytest.mark.llama


def nudged(client_class: type[HttpLlmClient], tool_choice: Any) -> type[HttpLlmClient]:
    """`client_class`, adding the test device to the first turn's request (before any tool result)."""

    class Nudged(client_class):  # type: ignore[valid-type,misc]
        def build_request(
            self, model: LlmModel, context: AgentContext, options: GenerationOptions, streaming: bool
        ) -> HttpRequest:
            request: HttpRequest = super().build_request(model, context, options, streaming)
            if not any(isinstance(message, ToolResultMessage) for message in context.messages):
                request.body["messages"].append({"role": "assistant", "content": "<tool_call>\n"})
                request.body["tool_choice"] = tool_choice
            return request

    return Nudged


NudgedOpenAI = nudged(OpenAIChatClient, "required")
NudgedAnthropic = nudged(AnthropicClient, {"type": "any"})


@pytest.mark.parametrize("client_class", [NudgedOpenAI, NudgedAnthropic], ids=["openai", "anthropic"])
def test_loop_runs_a_real_tool_call_end_to_end(
    llama_server_tools: LocalLlmServer, client_class: type[HttpLlmClient]
) -> None:
    base = llama_server_tools.openai_base_url if client_class is NudgedOpenAI else llama_server_tools.base_url
    client = client_class(base)
    context = AgentContext(
        system_prompt="You are a helpful assistant.",
        tools={"get_weather": weather_tool()},
        messages=[UserMessage(content=[TextContent(text="What is the weather in Paris?")])],
    )
    config = AgentLoopConfig(temperature=0, max_tokens=160, max_turns=2)
    events: list[Any] = list(run_agent_loop(context, client, llama_server_tools.llm_model(), config))

    started = [event for event in events if isinstance(event, ToolExecutionStartEvent)]
    ended = [event for event in events if isinstance(event, ToolExecutionEndEvent)]
    assert started and all(event.tool_call.name == "get_weather" for event in started)
    assert all(isinstance(event.args.get("city"), str) for event in started)
    assert [event.result.is_error for event in ended] == [False] * len(ended)
    assert any(isinstance(event, MessageUpdateEvent) and event.kind == "toolcall" for event in events)

    end = events[-1]
    assert isinstance(end, AgentEndEvent)
    asked = end.messages[0]
    assert isinstance(asked, AssistantMessageToolCall)
    results = [message for message in end.messages if isinstance(message, ToolResultMessage)]
    assert [result.tool_call_id for result in results] == [call.id for call in asked.tool_calls]
    assert results[0].content[0].text.startswith("Sunny in ")  # type: ignore[union-attr]
    reply = end.messages[-1]
    # The second request (with the tool results) was accepted and answered.
    assert reply.role == "assistant" and reply.error_message is None, reply.error_message
    assert end.stop_reason in ("stop", "length", "max_turns")
