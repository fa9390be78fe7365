"""Stop in a real Chromium while a real MCP tool runs without a word of progress.

The app chats with a scripted OpenAI-compatible model on 127.0.0.1 (set in the Settings panel as
a user would) that asks for server-everything's `trigger-long-running-operation` for an hour in
one step: the tool reports nothing until then. The page shows for how long it has been running,
Stop ends it at once with an aborted result (drawn without a click), and the conversation is saved
and goes on.
Screenshots go to tests/artifacts/.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.fixtures.browser import (
    StreamlitApp,
    choose_option,
    open_app,
    open_conversation_id,
    saved_messages,
    screenshot,
    script_run,
    settled,
    start_streamlit,
)
from tests.fixtures.mcp import StdioServer
from tests.scripted_http import openai_chunk, openai_text_stream, sse
from yiem.types import AssistantMessageToolCall, TextContent, ToolResultMessage

pytestmark = pytest.mark.browser

TOOL = "trigger-long-running-operation"
CHAT_INPUT = '[data-testid="stChatInputTextArea"]'
STOP = '[data-testid="stChatInputStopButton"]'
ANSWER = "Yes, still here. The long operation was stopped."


class ToolCallingModel:
    """An OpenAI-compatible chat server: asks for the long tool when told to, else answers in words.

    Every chat request's body is kept in `requests`.
    """

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._send("application/json", [json.dumps({"data": [{"id": "scripted-tools"}]}).encode()])

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                model.requests.append(body)
                self._send("text/event-stream", model.reply(body["messages"]))

            def _send(self, kind: str, chunks: list[bytes]) -> None:
                payload = b"".join(chunks)
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def reply(self, messages: list[dict[str, Any]]) -> list[bytes]:
        last = messages[-1]
        if last["role"] == "user" and "long operation" in json.dumps(last["content"]):
            call = {
                "index": 0,
                "id": "call_long",
                "type": "function",
                "function": {"name": TOOL, "arguments": json.dumps({"duration": 3600, "steps": 1})},
            }
            return [
                openai_chunk({"role": "assistant", "content": None, "tool_calls": [call]}),
                openai_chunk({}, "tool_calls"),
                sse("[DONE]"),
            ]
        return openai_text_stream(ANSWER, usage={"prompt_tokens": 40, "completion_tokens": 12})

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def model() -> Iterator[ToolCallingModel]:
    server = ToolCallingModel()
    yield server
    server.close()


@pytest.fixture
def app_with_everything(tmp_path: Path, everything_stdio: StdioServer) -> Iterator[StreamlitApp]:
    """The app with server-everything in its mcp.json."""
    config = tmp_path / "mcp.json"
    server = {"command": everything_stdio.command, "args": list(everything_stdio.args)}
    config.write_text(json.dumps({"mcpServers": {"everything": server}}))
    with start_streamlit(tmp_path, env={"YIEM_MCP_CONFIG": str(config)}) as app:
        yield app


def _wait_idle(page: Any, timeout: float = 60_000) -> None:
    page.locator(STOP).wait_for(state="detached", timeout=timeout)
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="detached", timeout=timeout)


def _use_model_and_tool(page: Any, model: ToolCallingModel, tool: str = TOOL) -> None:
    """In the sidebar's Settings: OpenAI's API at the scripted server's URL, and `tool` on.

    Each change is done once the run it causes has ended: that run draws the widgets the next step
    uses, and a prompt typed while it runs is lost when the chat input is drawn again.
    """
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_text("Settings", exact=True).click()
    choose_option(page, sidebar.get_by_role("combobox", name=re.compile("Provider")), "OpenAI")
    for label, value in (("Base URL", model.url), (re.compile("API key"), "sk-test-not-a-real-key")):
        field = sidebar.get_by_label(label)
        field.fill(value)
        with script_run(page):
            field.press("Enter")
        expect(field).to_have_value(value)
    tools = sidebar.get_by_role("combobox", name=re.compile("Tools the model may call"))
    tools.click()
    tools.press_sequentially(tool)  # the list is long; typing filters it
    with script_run(page):
        page.get_by_role("option", name=tool).first.click()
    page.keyboard.press("Escape")
    expect(sidebar.get_by_role("button", name=f"Remove {tool}")).to_be_visible()  # chosen


def _send(page: Any, text: str) -> None:
    box = page.locator(CHAT_INPUT)
    box.wait_for(state="visible")
    # Typed while a rerun draws the input anew, the text is wiped and Enter sends nothing (in one
    # run the chat stayed empty after the tool was chosen): a person types into a still page.
    settled(page)
    box.fill(text)
    box.press("Enter")


def test_stop_ends_a_silent_mcp_tool_at_once_and_the_chat_goes_on(
    app_with_everything: StreamlitApp, model: ToolCallingModel, page: Any
) -> None:
    open_app(page, app_with_everything.url)
    page.locator(CHAT_INPUT).wait_for()
    _use_model_and_tool(page, model)

    _send(page, "Start the long operation, please.")
    # The tool says nothing for an hour; the page still counts the seconds it has been running.
    running = page.get_by_text(re.compile(rf"Running tool `?{TOOL}`?… ([2-9]|\d\d+) s"))
    running.first.wait_for(timeout=60_000)
    screenshot(page, "chat-tool-running")
    page.locator(STOP).click()
    _wait_idle(page)  # an hour's tool: only a Stop that takes effect at once gets here
    # Without a click, the page redraws what the stopped run saved: the call failed, aborted.
    failed = page.get_by_text(re.compile(rf"Tool `?{TOOL}`? failed"))
    failed.first.wait_for(timeout=30_000)
    _wait_idle(page)
    failed.first.click()
    page.get_by_text("Tool call aborted: Stopped by the user").first.wait_for()
    screenshot(page, "chat-tool-stopped")

    conversation_id = open_conversation_id(page)
    saved = saved_messages(app_with_everything, conversation_id, 3)
    assert [m.role for m in saved] == ["user", "assistant", "toolResult"], app_with_everything.log()
    assert isinstance(saved[1], AssistantMessageToolCall) and saved[1].tool_calls[0].name == TOOL
    result = saved[2]
    assert isinstance(result, ToolResultMessage) and result.is_error
    assert [b.text for b in result.content if isinstance(b, TextContent)] == [
        "Tool call aborted: Stopped by the user"
    ]

    # The chat goes on: the next prompt is answered, with the stopped call in the model's history.
    _send(page, "Are you still there?")
    # .first: as the run ends, the streamed reply and the stored one it is redrawn as can both be there.
    page.get_by_text(ANSWER).first.wait_for(timeout=60_000)
    _wait_idle(page)
    failed.first.wait_for()
    screenshot(page, "chat-after-tool-stopped")
    history = model.requests[-1]["messages"]
    assert [m["role"] for m in history] == ["user", "assistant", "tool", "user"]
    assert history[1]["tool_calls"][0]["function"]["name"] == TOOL
    assert "Tool call aborted: Stopped by the user" in json.dumps(history[2]["content"])
    assert [m.role for m in saved_messages(app_with_everything, conversation_id, 5)] == [
        "user",
        "assistant",
        "toolResult",
        "user",
        "assistant",
    ]
