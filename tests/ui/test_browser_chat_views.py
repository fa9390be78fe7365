"""An MCP App view inside a Chat tool call, in a real Chromium: the official basic example's `get-time`.

A scripted OpenAI-compatible model on 127.0.0.1 calls `get-time`; the reply's tool call offers the
tool's view, drawn from the stored result, which puts a message in the chat input (never sending
it), and draws again when the conversation is reopened. Screenshots go to tests/artifacts/.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.fixtures.browser import (
    StreamlitApp,
    click_in_view,
    open_app,
    open_conversation_id,
    saved_messages,
    screenshot,
    script_run,
    start_streamlit,
)
from tests.fixtures.mcp import StdioServer
from tests.fixtures.mcp_apps import panel_view_stdio, servers_env
from tests.scripted_http import openai_chunk, openai_text_stream, sse
from tests.ui.test_browser_chat_stop import (
    CHAT_INPUT,
    ToolCallingModel,
    _send,
    _use_model_and_tool,
    _wait_idle,
)
from yiem.types import ToolResultMessage

pytestmark = pytest.mark.browser

TOOL = "get-time"
ANSWER = "Here is the time, with its view."
VIEW_FRAME = 'iframe[title^="The view of"]'


class TimeAskingModel(ToolCallingModel):
    """Calls `get-time` (or the tool set as `tool`) for a new question; after its result, answers in words."""

    tool = TOOL

    def reply(self, messages: list[dict[str, Any]]) -> list[bytes]:
        if messages[-1]["role"] == "user":
            call = {
                "index": 0,
                "id": "call_time",
                "type": "function",
                "function": {"name": self.tool, "arguments": "{}"},
            }
            return [
                openai_chunk({"role": "assistant", "content": None, "tool_calls": [call]}),
                openai_chunk({}, "tool_calls"),
                sse("[DONE]"),
            ]
        return openai_text_stream(ANSWER, usage={"prompt_tokens": 50, "completion_tokens": 8})


@pytest.fixture
def time_model() -> Iterator[TimeAskingModel]:
    server = TimeAskingModel()
    yield server
    server.close()


@pytest.fixture
def app_with_views(tmp_path: Path, basic_view_stdio: StdioServer) -> Iterator[StreamlitApp]:
    with start_streamlit(tmp_path, env=servers_env(tmp_path, {"basic": basic_view_stdio})) as app:
        yield app


@pytest.fixture
def app_with_panel(tmp_path: Path) -> Iterator[StreamlitApp]:
    with start_streamlit(tmp_path, env=servers_env(tmp_path, {"panel": panel_view_stdio()})) as app:
        yield app


def _open_view(page: Any) -> Any:
    toggle = page.get_by_text("Show the tool's view")
    expect(toggle).to_be_visible(timeout=60_000)
    with script_run(page):
        toggle.click()
    return page.frame_locator(VIEW_FRAME)


def _ask_for_the_time(page: Any, app: StreamlitApp, model: TimeAskingModel) -> tuple[str, str]:
    """The scripted model calls get-time and answers; (the conversation's id, the time the server said)."""
    open_app(page, app.url)
    page.locator(CHAT_INPUT).wait_for()
    _use_model_and_tool(page, model, TOOL)
    _send(page, "What time is it on the server?")
    page.get_by_text(ANSWER).first.wait_for(timeout=60_000)
    _wait_idle(page)
    conversation_id = open_conversation_id(page)
    result = saved_messages(app, conversation_id, 4)[2]
    assert isinstance(result, ToolResultMessage)
    return conversation_id, result.text.strip()


def test_a_tool_with_a_view_draws_it_in_the_chat_and_again_when_reopened(
    app_with_views: StreamlitApp, time_model: TimeAskingModel, page: Any
) -> None:
    conversation_id, stamp = _ask_for_the_time(page, app_with_views, time_model)
    view = _open_view(page)
    expect(view.locator("#server-time")).to_have_text(stamp, timeout=60_000)  # the stored result reached it
    screenshot(page, "mcp-apps-chat-view")

    # The view tells the page it is ready as its result is posted; a person clicks once that rerun has
    # ended. The click goes through click_in_view: headless Chromium can drop a click on a fresh frame
    # (ci8's message never offered; the view's own listener saw no click when it recurred).
    _wait_idle(page)
    click_in_view(view, view.get_by_role("button", name="Send Message"))
    with script_run(page):
        page.get_by_role("button", name="Put it in the chat input").click()
    expect(page.locator(CHAT_INPUT)).to_have_value("This is message text.", timeout=60_000)
    assert len(saved_messages(app_with_views, conversation_id, 4)) == 4  # put in the input, not sent

    open_app(page, f"{app_with_views.url}/?c={conversation_id}")
    view = _open_view(page)
    expect(view.locator("#server-time")).to_have_text(stamp, timeout=60_000)


def test_a_reopened_chat_whose_server_is_gone_draws_the_kept_copy_and_says_so(
    tmp_path: Path, app_with_views: StreamlitApp, time_model: TimeAskingModel, page: Any
) -> None:
    conversation_id, stamp = _ask_for_the_time(page, app_with_views, time_model)
    expect(_open_view(page).locator("#server-time")).to_have_text(stamp, timeout=60_000)  # seen once: kept

    # The same store, served by an app whose mcp.json no longer has the server.
    later = tmp_path / "later"
    later.mkdir()
    (later / "mcp.json").write_text(json.dumps({"mcpServers": {}}))
    env = {"YIEM_MCP_CONFIG": str(later / "mcp.json"), "YIEM_DATABASE_URL": app_with_views.database_url}
    with start_streamlit(later, env=env) as again:
        open_app(page, f"{again.url}/?c={conversation_id}")
        view = _open_view(page)
        expect(
            page.get_by_text("basic is not connected now: this is the copy of its view kept on")
        ).to_be_visible(timeout=60_000)
        expect(view.locator("#server-time")).to_have_text(stamp, timeout=60_000)
        screenshot(page, "mcp-apps-chat-view-copy")


def test_a_view_in_the_chat_calls_a_tool_meant_only_for_it_on_the_pages_session(
    app_with_panel: StreamlitApp, time_model: TimeAskingModel, page: Any
) -> None:
    time_model.tool = "panel"  # tests/mcp_servers/panel_view.py's, whose view has a tool only for it
    open_app(page, app_with_panel.url)
    page.locator(CHAT_INPUT).wait_for()
    _use_model_and_tool(page, time_model, "panel")
    _send(page, "Show me the panel.")
    page.get_by_text(ANSWER).first.wait_for(timeout=60_000)
    _wait_idle(page)
    view = _open_view(page)
    expect(view.locator("#result")).to_have_text("result: panel ready", timeout=60_000)
    # panel-refresh is not offered to the model, but it is the view's own to call (and read-only).
    click_in_view(view, view.get_by_role("button", name="Refresh"))
    expect(view.locator("#refresh")).to_have_text("refresh: refreshed", timeout=60_000)
    screenshot(page, "mcp-apps-chat-view-own-tool")

    # The call ran on the session the Tools page shows: it is in its History (same browser session).
    with script_run(page):
        page.get_by_role("link", name="Tools").click()
    with script_run(page):
        page.get_by_role("tab", name="History").click()
    calls = page.get_by_test_id("stExpander").filter(has_text="panel · panel-refresh —")
    expect(calls).to_have_count(1, timeout=60_000)
