"""What a view may ask of the Tools page, in a real Chromium: tests/mcp_servers/panel_view.py's `panel`.

The view writes each answer it gets into its own page, where the test reads it: the host's theme, the
tool's result, a read-only call (answered at once), a call that may change things (refused here), a
link (opened), and its size (the frame follows it). Its calls land in the History and the Log tab.
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
    count_script_runs,
    screenshot,
    script_run,
    start_streamlit,
)
from tests.fixtures.mcp_apps import panel_view_stdio, servers_env
from tests.mcp_servers.panel_view import LINK, PANEL_HEIGHT
from tests.ui.test_browser_mcp_apps import VIEW_FRAME, _call_tool

pytestmark = pytest.mark.browser


@pytest.fixture
def panel_app(tmp_path: Path) -> Iterator[StreamlitApp]:
    with start_streamlit(tmp_path, env=servers_env(tmp_path, {"panel": panel_view_stdio()})) as app:
        yield app


def _history(page: Any, tool: str) -> Any:
    return page.get_by_test_id("stExpander").filter(has_text=f"panel · {tool} —")


def test_a_views_calls_are_answered_refused_and_recorded_and_its_link_opens(
    page: Any, panel_app: StreamlitApp
) -> None:
    # The link the view asks for is answered here, so the new tab needs no network.
    page.context.route(f"{LINK}**", lambda route: route.fulfill(body="the docs", content_type="text/plain"))
    _call_tool(page, panel_app, "panel", "Panel")
    view = page.frame_locator(VIEW_FRAME)
    expect(view.locator("#result")).to_have_text("result: panel ready", timeout=60_000)
    expect(view.locator("#theme")).to_have_text("theme: light")
    # The frame takes the height the view reported, not the default it was drawn at.
    expect(page.locator(VIEW_FRAME)).to_have_css("height", f"{PANEL_HEIGHT}px", timeout=60_000)

    # A read-only tool: answered at once, without asking, and recorded like the form's own calls.
    click_in_view(view, view.get_by_role("button", name="Count"))
    expect(view.locator("#count")).to_have_text("count: counted 1", timeout=60_000)
    expect(page.get_by_text("The view wants to call")).to_have_count(0)

    # A tool that may change things waits for the person, who refuses: the view gets the error.
    click_in_view(view, view.get_by_role("button", name="Bump"))
    expect(page.get_by_text("The view wants to call bump")).to_be_visible(timeout=60_000)
    with script_run(page):
        page.get_by_role("button", name="Refuse").click()
    expect(view.locator("#bump")).to_have_text("bump: error: The person refused the call.", timeout=60_000)
    expect(page.get_by_text("The view wants to call")).to_have_count(0)

    # A link opens in a new tab only when the person chooses to.
    click_in_view(view, view.get_by_role("button", name="Open the docs"))
    expect(page.get_by_text(f"The view wants to open a link: {LINK}")).to_be_visible(timeout=60_000)
    with page.expect_popup() as opened:
        page.get_by_role("link", name="Open the link").click()
    expect(opened.value).to_have_url(LINK)
    expect(view.locator("#link")).to_have_text("link: opened", timeout=60_000)
    screenshot(page, "mcp-apps-panel-view")

    with script_run(page):
        page.get_by_role("tab", name="History").click()
    expect(_history(page, "panel")).to_have_count(1, timeout=60_000)  # the form's call
    expect(_history(page, "count")).to_have_count(1)  # the view's read-only call
    expect(_history(page, "bump")).to_have_count(0)  # refused: never sent

    with script_run(page):
        page.get_by_role("tab", name="Log").click()
    with page.expect_download() as exported:
        page.get_by_role("button", name="Export JSON").click()
    messages = json.loads(Path(exported.value.path()).read_text())["messages"]
    calls = [m["message"]["params"]["name"] for m in messages if m["message"].get("method") == "tools/call"]
    assert calls == ["panel", "count"], calls  # the view's call went over the page's own session
    search = page.get_by_label("Search messages")
    search.fill('"count"')
    with script_run(page):
        search.press("Enter")
    table = page.get_by_test_id("stDataFrame")
    # The grid is drawn on a canvas; its cells are also in a table inside it, for screen readers.
    call_rows = table.locator("td", has_text="tools/call (request #")
    expect(call_rows).to_have_count(1, timeout=60_000)  # the view's call; the form's has no "count"


def test_the_hosts_dark_theme_reaches_the_view(chromium: Any, panel_app: StreamlitApp) -> None:
    context = chromium.new_context(viewport={"width": 1280, "height": 900}, color_scheme="dark")
    page = context.new_page()
    count_script_runs(page)
    try:
        _call_tool(page, panel_app, "panel", "Panel")
        view = page.frame_locator(VIEW_FRAME)
        expect(view.locator("#result")).to_have_text("result: panel ready", timeout=60_000)
        expect(view.locator("#theme")).to_have_text("theme: dark", timeout=60_000)
    finally:
        context.close()
