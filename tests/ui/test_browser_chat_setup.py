"""Each conversation keeps its own setup, in a real Chromium with the embedded model (SmolLM2).

Two conversations are sent with different setups; the first one's link, opened in a fresh browser
and reloaded, shows its own setup in Settings (not the later, last-used one); a new session with
no link starts from the last-used setup.
"""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

from tests.fixtures.browser import (
    StreamlitApp,
    open_app,
    open_conversation_id,
    saved_messages,
    screenshot,
    script_run,
    start_streamlit,
)
from tests.fixtures.mcp import StdioServer
from tests.ui.test_browser_chat import _greedy_replies, _limit_replies, _open_settings, _send, _wait_idle
from yiem.chat import stored_setup
from yiem.model_setup import ModelSetup
from yiem.store import ConversationStore, create_store_engine

pytestmark = [pytest.mark.browser, pytest.mark.llama]

TOOL = "get_current_time"
CAPTION = re.compile(r"\d+ in · \d+ out · \d+ cached · price unknown")


def _sidebar(page: Any) -> Any:
    return page.locator('[data-testid="stSidebar"]')


def _commit(page: Any, field: Any, key: str) -> None:
    """Press `key` in `field` and wait for the run it causes: an edit made during that run is lost."""
    with script_run(page):
        field.press(key)


def _set_system_prompt(page: Any, text: str) -> None:
    area = _sidebar(page).get_by_label("System prompt")
    area.fill(text)
    _commit(page, area, "Control+Enter")
    expect(area).to_have_value(text)


def _click_and_wait(page: Any, target: Any) -> None:
    with script_run(page):
        target.click()


def _pick_tool(page: Any, app: StreamlitApp) -> None:
    tools = _sidebar(page).get_by_role("combobox", name=re.compile("Tools the model may call"))
    chip = _sidebar(page).locator(".st-key-set-tools").get_by_text(TOOL)
    for _attempt in range(3):  # a rerun in flight can close the list before the pick lands
        tools.click()
        tools.press_sequentially(TOOL)
        with contextlib.suppress(PlaywrightError):
            page.get_by_role("option", name=TOOL).first.click(timeout=30_000)
        page.keyboard.press("Escape")
        with contextlib.suppress(PlaywrightError):
            chip.wait_for(timeout=30_000)
            break
    else:
        raise AssertionError(f"the tool was never picked:\n{app.log()}")
    _wait_idle(page)


def _send_and_wait(page: Any, app: StreamlitApp, text: str, replies: int) -> str:
    _send(page, text)
    expect(page.get_by_text(CAPTION).nth(replies - 1)).to_be_visible(timeout=180_000)
    conversation_id = open_conversation_id(page)
    saved = saved_messages(app, conversation_id, 2)
    assert [m.role for m in saved] == ["user", "assistant"], app.log()
    _wait_idle(page)
    return conversation_id


def _expect_shown(page: Any, setup: ModelSetup) -> None:
    """The Settings panel shows `setup` (opened first if it is folded)."""
    sidebar = _sidebar(page)
    _open_settings(page)
    expect(sidebar.get_by_label("System prompt")).to_have_value(setup.system_prompt)
    default = sidebar.get_by_role("checkbox", name="Provider's default temperature")
    if setup.temperature is None:
        expect(default).to_be_checked()
        expect(sidebar.get_by_role("slider")).to_have_count(0)
    else:
        expect(default).not_to_be_checked()
        expect(sidebar.get_by_role("slider")).to_have_value(f"{setup.temperature:g}")
    longest = sidebar.get_by_label(re.compile("Longest reply in tokens"))
    expect(longest).to_have_value(str(setup.max_tokens or 0))
    expect(sidebar.get_by_role("radio", name=setup.tool_execution)).to_be_checked()
    chips = sidebar.locator(".st-key-set-tools [data-tag]")
    expect(chips).to_have_count(len(setup.tools))
    for tool in setup.tools:
        expect(chips.filter(has_text=tool)).to_have_count(1)


def _stored(app: StreamlitApp, conversation_id: str) -> ModelSetup | None:
    conversation = ConversationStore(create_store_engine(app.database_url)).get(conversation_id)
    return stored_setup(conversation.setup)


def test_a_conversation_reopens_with_its_own_setup_and_a_new_one_starts_from_the_last(
    tmp_path: Path, chromium: Any, page: Any, time_stdio: StdioServer
) -> None:
    config = {"mcpServers": {"time": {"command": time_stdio.command, "args": list(time_stdio.args)}}}
    (tmp_path / "mcp.json").write_text(json.dumps(config))
    with start_streamlit(tmp_path, env={"YIEM_MCP_CONFIG": str(tmp_path / "mcp.json")}) as app:
        open_app(page, app.url)
        sidebar = _sidebar(page)
        _open_settings(page)
        # The first conversation: a pirate at temperature 0 (the slider's lowest), sequential tools.
        _set_system_prompt(page, "Answer like a pirate.")
        _greedy_replies(page)
        _limit_replies(page, 24)
        _click_and_wait(page, sidebar.get_by_text("sequential", exact=True))
        pirate = ModelSetup(
            provider="local",
            model_id="smollm2",
            system_prompt="Answer like a pirate.",
            temperature=0.0,
            max_tokens=24,
            tool_execution="sequential",
        )
        first = _send_and_wait(page, app, "Say ahoy.", 1)
        assert _stored(app, first) == pirate

        # The second, sent later (so the last used): terse, default temperature, one tool, parallel.
        _click_and_wait(page, sidebar.get_by_role("button", name="New chat"))
        expect(page.locator('[data-testid="stChatMessage"]')).to_have_count(0)
        _open_settings(page)
        _set_system_prompt(page, "Be terse.")
        _click_and_wait(page, sidebar.get_by_text("Provider's default temperature"))
        _limit_replies(page, 16)
        _click_and_wait(page, sidebar.get_by_text("parallel", exact=True))
        _pick_tool(page, app)
        terse = ModelSetup(
            provider="local", model_id="smollm2", system_prompt="Be terse.", max_tokens=16, tools=[TOOL]
        )
        second = _send_and_wait(page, app, "Say hi.", 1)
        assert second != first
        assert _stored(app, second) == terse

        context = chromium.new_context(viewport={"width": 1280, "height": 900})
        try:
            # The first one's link in a fresh browser: its own setup, not the last-used one.
            fresh = context.new_page()
            open_app(fresh, f"{app.url}/?c={first}")
            expect(fresh.locator('[data-testid="stChatMessage"]').first).to_contain_text("Say ahoy.")
            _expect_shown(fresh, pirate)
            screenshot(fresh, "chat-setup-restored-from-link")
            fresh.reload()
            expect(fresh.locator('[data-testid="stChatMessage"]').first).to_contain_text("Say ahoy.")
            _expect_shown(fresh, pirate)
            # The page that sent them, reloaded on the second: that one's setup.
            page.reload()
            expect(page.locator('[data-testid="stChatMessage"]').first).to_contain_text("Say hi.")
            _expect_shown(page, terse)
            # A new session without a link starts a new chat from the last-used setup.
            newcomer = context.new_page()
            open_app(newcomer, app.url)
            expect(newcomer.locator('[data-testid="stChatMessage"]')).to_have_count(0)
            _expect_shown(newcomer, terse)
            screenshot(newcomer, "chat-setup-new-chat-from-last")
        finally:
            context.close()
