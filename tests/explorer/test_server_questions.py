"""Server questions (elicitation, sampling) parked for the person, answered against the real
server-everything; sampling replies come from the real embedded model (llama-server + SmolLM2)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.fixtures.mcp import StdioServer
from yiem.explorer import (
    ServerQuestion,
    ServerQuestions,
    model_hints,
    sample_reply,
    sampling_messages,
    sampling_result,
)
from yiem.mcp import CallToolResult, ElicitationResult, McpClient, SamplingRequest
from yiem.providers import OpenAIChatClient
from yiem.providers.local_llm import LocalLlmServer
from yiem.types import AssistantMessage, UserMessage


@pytest.fixture
def questions() -> ServerQuestions:
    return ServerQuestions(timeout=60)


@pytest.fixture
def client(everything_stdio: StdioServer, questions: ServerQuestions) -> Iterator[McpClient]:
    with McpClient.stdio(
        everything_stdio.command, everything_stdio.args, **questions.handlers("everything")
    ) as found:
        found.list_tools()
        yield found


def _call_in_background(call: Callable[[], CallToolResult]) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []

    def run() -> None:
        try:
            out.append(call())
        except Exception as exc:
            out.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, out


def _first_question(questions: ServerQuestions, server: str = "everything") -> ServerQuestion:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = questions.pending(server)
        if found:
            return found[0]
        time.sleep(0.02)
    raise AssertionError("the server asked nothing")


def test_an_elicitation_waits_for_the_person_past_the_idle_timeout(
    client: McpClient, questions: ServerQuestions
) -> None:
    """The call's idle timeout (1 s) does not run while the server waits on the person (2 s here)."""
    thread, out = _call_in_background(lambda: client.call_tool("trigger-elicitation-request", timeout=1.0))
    question = _first_question(questions)
    assert question.kind == "elicitation" and question.server == "everything"
    assert "email" in question.elicitation.requested_schema["properties"]
    time.sleep(2.0)
    question.answer(ElicitationResult(action="accept", content={"name": "Grace Hopper", "check": True}))
    thread.join(30)
    (result,) = out
    assert isinstance(result, CallToolResult), result
    assert "Grace Hopper" in result.text
    assert questions.pending() == []


def test_a_refused_sampling_request_reaches_the_server_as_an_error(
    client: McpClient, questions: ServerQuestions
) -> None:
    thread, out = _call_in_background(
        lambda: client.call_tool("trigger-sampling-request", {"prompt": "Say hi"})
    )
    question = _first_question(questions)
    assert question.kind == "sampling" and "Say hi" in str(question.sampling.messages)
    question.refuse("The person declined to let the server use the model.")
    thread.join(30)
    (result,) = out
    assert "declined to let the server use the model" in str(result)


def test_sampling_answered_by_the_real_model(
    client: McpClient, questions: ServerQuestions, llama_server: LocalLlmServer
) -> None:
    model = llama_server.llm_model()
    llm = OpenAIChatClient(llama_server.openai_base_url)
    thread, out = _call_in_background(
        lambda: client.call_tool("trigger-sampling-request", {"prompt": "What is 2 + 2?", "maxTokens": 20})
    )
    question = _first_question(questions)
    # The person edits the request before it goes to the model.
    edited = question.sampling.model_copy(update={"system_prompt": "Answer in one short sentence."})
    reply = sample_reply(edited, llm, model)
    assert reply.stop_reason != "error", reply.error_message
    assert reply.text.strip() and reply.usage.output_tokens > 0
    question.answer(sampling_result(reply.text + " (checked)", reply, model))
    thread.join(30)
    (result,) = out
    assert isinstance(result, CallToolResult), result
    assert "(checked)" in result.text and model.id in result.text


def test_sampling_messages_and_model_hints_in_words() -> None:
    request = SamplingRequest.model_validate(
        {
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "Hello"}},
                {"role": "assistant", "content": {"type": "text", "text": "Hi"}},
                {"role": "user", "content": {"type": "audio", "data": "AA==", "mimeType": "audio/wav"}},
            ],
            "maxTokens": 50,
            "modelPreferences": {"hints": [{"name": "claude"}], "speedPriority": 0.5},
        }
    )
    first, second, third = sampling_messages(request)
    assert isinstance(first, UserMessage) and first.content[0].text == "Hello"  # type: ignore[union-attr]
    assert isinstance(second, AssistantMessage) and second.text == "Hi"
    assert "audio content left out" in str(third)
    assert model_hints(request) == "prefers claude; speed 0.5"
    assert model_hints(SamplingRequest()) == "no model preferences"
