"""A view on the Tools page is loaded when its tool is chosen, before Call, in real Chromium.

The server holds each call until the test writes its release file, so the test sees the view loaded
and waiting, before the call and while it runs; then that same frame (not a new one) is sent the
input and the result, and a call that fails takes the frame away and says so in words.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.fixtures.browser import StreamlitApp, script_run, start_streamlit
from tests.fixtures.mcp import ROOT
from tests.ui.test_browser_mcp_apps import _IDLE, VIEW_FRAME, _call_tool, choose_tool

pytestmark = pytest.mark.browser


@pytest.fixture
def waiting_app(tmp_path: Path) -> Iterator[tuple[StreamlitApp, Path]]:
    release = tmp_path / "release"
    script = ROOT / "tests" / "mcp_servers" / "waiting_view.py"
    servers = {"waiting": {"command": sys.executable, "args": [str(script), "--release-file", str(release)]}}
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    with start_streamlit(tmp_path, env={"YIEM_MCP_CONFIG": str(config)}) as app:
        yield app, release


def _waiting_view(page: Any) -> Any:
    """The view's frame, once its document is drawn and waiting for the result."""
    view = page.frame_locator(VIEW_FRAME)
    expect(view.locator("#state")).to_have_text("waiting for the result", timeout=60_000)
    return view


def _mark_frame(page: Any) -> Any:
    """Mark the view's frame element shown now, to tell it from a new one; a locator inside it."""
    # The frame sits inside the component's shadow root, which Playwright's locators pierce.
    page.locator(VIEW_FRAME).evaluate("(frame) => frame.setAttribute('data-test-mark', 'first')")
    return page.frame_locator(f'{VIEW_FRAME}[data-test-mark="first"]')


def test_the_view_loads_while_its_call_runs_and_the_same_frame_gets_the_result(
    page: Any, waiting_app: tuple[StreamlitApp, Path]
) -> None:
    app, release = waiting_app
    _call_tool(page, app, "waiting", "wait")
    expect(page.get_by_role("button", name="Cancel")).to_be_visible(timeout=60_000)  # the call runs
    view = _waiting_view(page)
    expect(view.locator("#input")).to_have_text("input received")
    expect(page.get_by_text("it shows the result as soon as the call returns")).to_be_visible()
    marked = _mark_frame(page)
    release.write_text("go")
    expect(marked.locator("#state")).to_have_text("result: waited", timeout=60_000)
    expect(page.get_by_text("it shows the result as soon as the call returns")).to_have_count(0)
    expect(page.locator(VIEW_FRAME)).to_have_count(1)


def test_the_view_is_loaded_when_its_tool_is_chosen_and_answered_only_once_it_is_called(
    page: Any, waiting_app: tuple[StreamlitApp, Path]
) -> None:
    app, release = waiting_app
    choose_tool(page, app, "waiting", "wait")
    view = _waiting_view(page)
    expect(page.get_by_text("it shows the result when you call the tool")).to_be_visible()
    expect(view.locator("#asked")).to_have_text("asking")
    page.wait_for_function(_IDLE, timeout=60_000)
    expect(view.locator("#input")).to_have_text("no input")  # nothing is sent before the call
    expect(view.locator("#asked")).to_have_text("asking")  # and what the view asks waits for it
    marked = _mark_frame(page)
    release.write_text("go")
    with script_run(page):
        page.get_by_role("button", name="Call", exact=True).click()
    expect(marked.locator("#state")).to_have_text("result: waited", timeout=60_000)
    expect(marked.locator("#input")).to_have_text("input received")
    expect(marked.locator("#asked")).to_have_text("answered")
    expect(page.locator(VIEW_FRAME)).to_have_count(1)


def test_a_call_that_fails_after_its_view_was_mounted_takes_the_view_away_in_words(
    page: Any, waiting_app: tuple[StreamlitApp, Path]
) -> None:
    app, release = waiting_app
    _call_tool(page, app, "waiting", "wait-then-fail")
    _waiting_view(page)
    release.write_text("go")
    failed = page.get_by_test_id("stAlertContentError").filter(has_text="the server gave up on purpose")
    expect(failed).to_be_visible(timeout=60_000)
    words = "The call returned no result, so the view of wait-then-fail is not drawn."
    expect(page.get_by_text(words)).to_be_visible()
    expect(page.locator(VIEW_FRAME)).to_have_count(0)
