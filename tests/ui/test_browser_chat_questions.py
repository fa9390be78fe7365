"""A server's question inline in Chat, in a real Chromium against the real server-everything.

A scripted OpenAI-compatible model on 127.0.0.1 calls `trigger-elicitation-request` (enabled for
the chat); the server's form appears in the Chat page while the run waits, the person fills it in
(each keystroke's rerun must not end the run) and accepts, and the answer reaches the server,
whose result goes back to the model. Screenshots go to tests/artifacts/.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.fixtures.browser import StreamlitApp, fresh, open_conversation_id, saved_messages, screenshot
from tests.scripted_http import openai_chunk, openai_text_stream, sse
from tests.ui.test_browser_chat_stop import (
    ToolCallingModel,
    _send,
    _use_model_and_tool,
    _wait_idle,
    app_with_everything,
)
from yiem.store import ConversationStore, create_store_engine
from yiem.types import TextContent, ToolResultMessage

pytestmark = pytest.mark.browser
__all__ = ["app_with_everything"]  # the fixture, imported for these tests

TOOL = "trigger-elicitation-request"
ANSWER = "Thank you, Grace."


class AskingModel(ToolCallingModel):
    """Asks for the elicitation tool when told to; after its result, answers in words."""

    def reply(self, messages: list[dict[str, Any]]) -> list[bytes]:
        if messages[-1]["role"] == "user":
            call = {
                "index": 0,
                "id": "call_ask",
                "type": "function",
                "function": {"name": TOOL, "arguments": "{}"},
            }
            return [
                openai_chunk({"role": "assistant", "content": None, "tool_calls": [call]}),
                openai_chunk({}, "tool_calls"),
                sse("[DONE]"),
            ]
        return openai_text_stream(ANSWER, usage={"prompt_tokens": 60, "completion_tokens": 5})


@pytest.fixture
def asking_model() -> Iterator[AskingModel]:
    server = AskingModel()
    yield server
    server.close()


def test_a_chat_tool_s_question_is_answered_inline_and_the_run_goes_on(
    app_with_everything: StreamlitApp, asking_model: AskingModel, page: Any
) -> None:
    page.goto(app_with_everything.url)
    page.locator('[data-testid="stChatInputTextArea"]').wait_for()
    _use_model_and_tool(page, asking_model, TOOL)

    _send(page, "Ask me for my details, please.")
    page.get_by_text("everything asks:").wait_for(timeout=60_000)
    question = page.locator('[data-testid="stChatMessage"]').filter(has_text="everything asks:")
    expect(question.get_by_role("button", name="Decline")).to_be_visible()
    expect(question.get_by_role("button", name="Cancel")).to_be_visible()
    # Typed while the live run redraws the form every tick: no waiting between typing and leaving
    # the field (a wait for the run to end found the field redrawn at each try). Leaving it reruns,
    # which parks the run; the form comes back as typed, below the reply: while that rerun draws,
    # the faded field of the run before is still on the page, so only the current run's is taken.
    field = fresh(page).get_by_label(re.compile(r"^String( \\\\?\*)?$"))
    expect(field).to_have_count(1)
    field.fill("Grace Hopper")
    field.press("Tab")
    expect(field).to_have_value("Grace Hopper")
    screenshot(page, "chat-elicitation-inline")
    fresh(page).get_by_role("button", name="Accept").click()
    page.get_by_text(ANSWER).first.wait_for(timeout=60_000)
    _wait_idle(page)
    expect(page.get_by_text("everything asks:")).to_have_count(0)
    screenshot(page, "chat-elicitation-answered")

    conversation_id = open_conversation_id(page)
    saved = saved_messages(app_with_everything, conversation_id, 4)
    roles = ["user", "assistant", "toolResult", "assistant"]
    assert [m.role for m in saved] == roles, app_with_everything.log()
    result = saved[2]
    assert isinstance(result, ToolResultMessage) and not result.is_error
    words = " ".join(b.text for b in result.content if isinstance(b, TextContent))
    assert "User provided the requested information" in words and "Grace Hopper" in words
    # The model got the server's result, with the person's answer in it.
    sent = asking_model.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool"]
    assert "Grace Hopper" in json.dumps(sent[2]["content"])


def test_stop_while_a_question_is_open_ends_the_run(
    app_with_everything: StreamlitApp, asking_model: AskingModel, page: Any
) -> None:
    page.goto(app_with_everything.url)
    page.locator('[data-testid="stChatInputTextArea"]').wait_for()
    _use_model_and_tool(page, asking_model, TOOL)

    _send(page, "Ask me for my details, please.")
    page.get_by_text("everything asks:").wait_for(timeout=60_000)
    # Streamlit stops the script for a Stop as for a click; no page run takes the run up, so it ends.
    page.locator('[data-testid="stChatInputStopButton"]').click()
    expect(page.get_by_text("everything asks:")).to_have_count(0, timeout=60_000)
    _wait_idle(page)
    conversation_id = open_conversation_id(page)
    store = ConversationStore(create_store_engine(app_with_everything.database_url))
    saved = saved_messages(app_with_everything, conversation_id, 3)
    assert [m.role for m in saved][:3] == ["user", "assistant", "toolResult"], app_with_everything.log()
    result = saved[2]
    assert isinstance(result, ToolResultMessage)
    words = " ".join(b.text for b in result.content if isinstance(b, TextContent))
    assert "Grace" not in words and ("cancel" in words.lower() or "aborted" in words.lower()), words
    assert len(asking_model.requests) == 1  # the run went no further
    assert [m.role for m in store.load_messages(conversation_id)] == [m.role for m in saved]  # it has ended
