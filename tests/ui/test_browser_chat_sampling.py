"""A server's sampling request inline in Chat, in a real Chromium against the real server-everything.

A scripted OpenAI-compatible chat model on 127.0.0.1 calls `trigger-sampling-request`; the
server's request appears in the Chat page while the run waits, with its messages. Approved, it is
answered by the model chosen in Settings for sampling: the real llama-server with SmolLM2, set up
as a "llama.cpp server" (another provider than the chat's); the person edits the reply, it goes
back to the server, whose result reaches the chat model, and the usage is counted under the
server. Declined, the tool gets the refusal in words and the run goes on.
Screenshots go to tests/artifacts/.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect
from sqlalchemy import text

from tests.fixtures.browser import (
    StreamlitApp,
    choose_option,
    fresh,
    open_app,
    open_conversation_id,
    saved_messages,
    screenshot,
    script_run,
)
from tests.scripted_http import openai_chunk, openai_text_stream, sse
from tests.ui.test_browser_chat_stop import (
    ToolCallingModel,
    _send,
    _use_model_and_tool,
    _wait_idle,
    app_with_everything,
)
from tests.ui.test_browser_compare import _commit
from yiem.providers.local_llm import LocalLlmServer
from yiem.store import create_store_engine
from yiem.types import TextContent, ToolResultMessage

pytestmark = pytest.mark.browser
__all__ = ["app_with_everything"]  # the fixture, imported for these tests

TOOL = "trigger-sampling-request"
PROMPT = "Name the colour of the sky in one word."
ANSWER = "The server has its reply."
ASKS = "everything asks to use your model"


class SamplingModel(ToolCallingModel):
    """Asks for the sampling tool when told to; after its result, answers in words."""

    def reply(self, messages: list[dict[str, Any]]) -> list[bytes]:
        if messages[-1]["role"] == "user":
            arguments = json.dumps({"prompt": PROMPT, "maxTokens": 12})
            call = {
                "index": 0,
                "id": "call_sample",
                "type": "function",
                "function": {"name": TOOL, "arguments": arguments},
            }
            return [
                openai_chunk({"role": "assistant", "content": None, "tool_calls": [call]}),
                openai_chunk({}, "tool_calls"),
                sse("[DONE]"),
            ]
        return openai_text_stream(ANSWER, usage={"prompt_tokens": 60, "completion_tokens": 6})


@pytest.fixture
def chat_model() -> Iterator[SamplingModel]:
    server = SamplingModel()
    yield server
    server.close()


def _sample_with(page: Any, llama: LocalLlmServer) -> None:
    """In the open Settings panel: servers' sampling answered by a llama.cpp server at `llama`."""
    sidebar = page.locator('[data-testid="stSidebar"]')
    sampling = sidebar.get_by_role("combobox", name=re.compile("Model for MCP servers' sampling"))
    choose_option(page, sampling, "llama.cpp server")
    field = sidebar.get_by_label("Sampling base URL")
    field.fill(llama.openai_base_url)
    with script_run(page):
        field.press("Enter")
    _commit(sidebar.get_by_label("Sampling model", exact=True), llama.alias)


def _tool_result(app: StreamlitApp, page: Any) -> tuple[str, list[Any]]:
    conversation_id = open_conversation_id(page)
    saved = saved_messages(app, conversation_id, 4)
    assert [m.role for m in saved] == ["user", "assistant", "toolResult", "assistant"], app.log()
    result = saved[2]
    assert isinstance(result, ToolResultMessage)
    return " ".join(b.text for b in result.content if isinstance(b, TextContent)), saved


@pytest.mark.llama
def test_a_sampling_request_is_answered_inline_by_the_sampling_model_and_counted(
    app_with_everything: StreamlitApp, chat_model: SamplingModel, llama_server: LocalLlmServer, page: Any
) -> None:
    open_app(page, app_with_everything.url)
    page.locator('[data-testid="stChatInputTextArea"]').wait_for()
    _use_model_and_tool(page, chat_model, TOOL)
    _sample_with(page, llama_server)

    _send(page, "Ask the server to sample, please.")
    page.get_by_text(ASKS).wait_for(timeout=60_000)
    question = page.locator('[data-testid="stChatMessage"]').filter(has_text=ASKS)
    # The server's message and preferences are shown, and who answers.
    expect(question.get_by_label("Message 1 (user)")).to_have_value(re.compile(re.escape(PROMPT)))
    expect(
        question.get_by_text(
            re.compile(rf"up to 12 tokens · answered by llama\.cpp server `?{llama_server.alias}")
        ).first
    ).to_be_visible()
    question.get_by_role("button", name="Generate reply").click()
    reply = page.get_by_label("Reply (you may edit it before it goes back)")
    expect(reply).to_have_value(re.compile(r"\S"), timeout=180_000)
    screenshot(page, "chat-sampling-reply")
    send = page.get_by_role("button", name="Send reply")
    for _attempt in range(3):  # a click made while the edit's rerun hands the run over can be lost
        reply.fill("Blue, said the person")
        reply.press("Tab")  # the edit reaches the page before the click
        send.click()
        with contextlib.suppress(PlaywrightError):
            expect(page.get_by_text(ASKS)).to_have_count(0, timeout=30_000)
            break
        if not send.is_visible():  # answered after all, the redraw only slow
            break
    page.get_by_text(ANSWER).first.wait_for(timeout=180_000)
    _wait_idle(page)
    expect(page.get_by_text(ASKS)).to_have_count(0)
    screenshot(page, "chat-sampling-answered")

    words, _ = _tool_result(app_with_everything, page)
    assert "LLM sampling result" in words and "Blue, said the person" in words, words
    # The chat model got the server's result, with the person's reply in it.
    sent = chat_model.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool"]
    assert "Blue, said the person" in json.dumps(sent[2]["content"])
    # The sampling model's usage is counted under the server, with its own provider and model.
    engine = create_store_engine(app_with_everything.database_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                text(
                    "SELECT provider, model, source, tool, output_tokens FROM usage "
                    "WHERE source = 'mcp-sampling'"
                )
            ).all()
    finally:
        engine.dispose()
    assert len(rows) == 1, rows
    provider, model, source, tool, output_tokens = rows[0]
    assert (provider, model, source, tool) == ("llamacpp", llama_server.alias, "mcp-sampling", "everything")
    assert output_tokens > 0


def _ask_to_sample(app: StreamlitApp, chat_model: SamplingModel, page: Any) -> None:
    """Chat with the sampling tool enabled, until the server's question is on the page."""
    open_app(page, app.url)
    page.locator('[data-testid="stChatInputTextArea"]').wait_for()
    _use_model_and_tool(page, chat_model, TOOL)
    _send(page, "Ask the server to sample, please.")
    page.get_by_text(ASKS).wait_for(timeout=60_000)


def test_a_declined_sampling_request_refuses_in_words_and_the_run_goes_on(
    app_with_everything: StreamlitApp, chat_model: SamplingModel, page: Any
) -> None:
    _ask_to_sample(app_with_everything, chat_model, page)
    question = page.locator('[data-testid="stChatMessage"]').filter(has_text=ASKS)
    question.get_by_role("button", name="Decline").click()
    page.get_by_text(ANSWER).first.wait_for(timeout=60_000)
    _wait_idle(page)
    expect(page.get_by_text(ASKS)).to_have_count(0)

    words, saved = _tool_result(app_with_everything, page)
    assert "declined to let the server use the model" in words, words
    assert saved[2].is_error
    # The refusal reached the chat model in words, and it answered.
    sent = chat_model.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool"]
    assert "declined to let the server use the model" in json.dumps(sent[2]["content"])
    engine = create_store_engine(app_with_everything.database_url)
    try:
        with engine.connect() as conn:
            count = conn.execute(text("SELECT COUNT(*) FROM usage WHERE source = 'mcp-sampling'")).scalar()
    finally:
        engine.dispose()
    assert count == 0  # no model was asked


def test_reruns_in_quick_succession_while_a_question_is_open_keep_the_run(
    app_with_everything: StreamlitApp, chat_model: SamplingModel, page: Any
) -> None:
    # Each edit reruns the page, which parks the run for the next page run to take up; an edit
    # made while a page run waited for that hand-over stopped it after it took the run, and lost it.
    _ask_to_sample(app_with_everything, chat_model, page)
    # After a rerun the question is drawn below the reply, outside its chat message, and the box
    # moves with it: while a rerun draws, the faded box of the run before is still on the page.
    system = fresh(page.get_by_test_id("stMainBlockContainer")).get_by_label("System prompt")
    for attempt in range(20):  # no wait between edits: each lands while the last one's rerun hands over
        system.fill(f"Answer in {attempt + 1} words.")
        system.press("Tab")
    # Still there, and the last edit kept: the run was handed on at every rerun.
    expect(system).to_have_value("Answer in 20 words.", timeout=60_000)
    fresh(page).get_by_role("button", name="Decline").click()
    page.get_by_text(ANSWER).first.wait_for(timeout=60_000)
    _wait_idle(page)
    words, _ = _tool_result(app_with_everything, page)
    assert "declined to let the server use the model" in words, words
