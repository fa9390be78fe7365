"""The real app in Chromium with the embedded SmolLM2 and a real MCP tool enabled: an answer, no error.

SmolLM2's chat template has no tools, so the page sends the message without them and says so
(before, the tools were sent: llama-server ignored them, or answered 500 when started with a tool
template and the toy model wrote a malformed call).
"""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Error as PlaywrightError

from tests.fixtures.browser import (
    open_app,
    open_conversation_id,
    saved_messages,
    screenshot,
    script_run,
    start_streamlit,
)
from tests.fixtures.mcp import StdioServer
from yiem.types import AssistantMessage

pytestmark = [pytest.mark.browser, pytest.mark.llama]

CHAT_INPUT = '[data-testid="stChatInputTextArea"]'
MESSAGES = '[data-testid="stChatMessage"]'
TOOL = "get_current_time"


def _wait_idle(page: Any, timeout: float = 300_000) -> None:
    page.locator('[data-testid="stChatInputStopButton"]').wait_for(state="detached", timeout=timeout)
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="detached", timeout=timeout)


def test_a_tool_enabled_with_the_embedded_model_gets_an_answer(
    tmp_path: Path, page: Any, time_stdio: StdioServer
) -> None:
    config = {"mcpServers": {"time": {"command": time_stdio.command, "args": list(time_stdio.args)}}}
    (tmp_path / "mcp.json").write_text(json.dumps(config))
    with start_streamlit(tmp_path, env={"YIEM_MCP_CONFIG": str(tmp_path / "mcp.json")}) as app:
        open_app(page, app.url)
        sidebar = page.locator('[data-testid="stSidebar"]')
        sidebar.get_by_text("Settings", exact=True).click()
        longest = sidebar.get_by_label(re.compile("Longest reply in tokens"))
        longest.fill("24")  # short replies keep the test quick on a busy machine
        with script_run(page):  # a pick made during the run this causes could be dropped
            longest.press("Enter")
        tools = sidebar.get_by_role("combobox", name=re.compile("Tools the model may call"))
        # The page says, before anything is sent, that this model gets no tools.
        note = page.get_by_text(re.compile("SmolLM2 cannot call tools")).first
        for _attempt in range(3):  # a rerun in flight can close the list before the pick lands
            tools.click()
            tools.press_sequentially(TOOL)  # typing filters the list
            option = page.get_by_role("option", name=TOOL).first
            with contextlib.suppress(PlaywrightError):
                option.click(timeout=30_000)
            page.keyboard.press("Escape")
            with contextlib.suppress(PlaywrightError):
                note.wait_for(timeout=60_000)
                break
        else:
            screenshot(page, "chat-local-model-tool-not-picked")
            raise AssertionError(f"the tool was never picked, or the page never said so:\n{app.log()}")

        box = page.locator(CHAT_INPUT)
        box.fill("What time is it in Paris?")
        box.press("Enter")
        caption = page.get_by_text(re.compile(r"\d+ in · \d+ out · \d+ cached · price unknown"))
        caption.first.wait_for(timeout=300_000)
        _wait_idle(page)
        screenshot(page, "chat-local-model-with-a-tool")
        assert page.locator('[data-testid="stAlertContentError"]').count() == 0, app.log()
        assert page.locator('[data-testid="stException"]').count() == 0, app.log()
        saved = saved_messages(app, open_conversation_id(page), 2)
        assert [m.role for m in saved] == ["user", "assistant"], app.log()
        reply = saved[1]
        assert isinstance(reply, AssistantMessage) and reply.error_message is None
        assert reply.text.strip() and reply.stop_reason in ("stop", "end_turn", "max_tokens", "length")
