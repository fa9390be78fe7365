"""The official richer MCP Apps examples drawn on the Tools page in a real Chromium.

server-budget-allocator draws its chart and sliders from the tool's result; server-cohort-heatmap
draws a heatmap and, when its controls change, calls its server's tool through the page.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.fixtures.browser import StreamlitApp, screenshot, start_streamlit
from tests.fixtures.mcp import StdioServer
from tests.ui.test_browser_mcp_apps import VIEW_FRAME, _call_tool

pytestmark = pytest.mark.browser


@pytest.fixture
def rich_app(
    tmp_path: Path, budget_view_stdio: StdioServer, cohort_view_stdio: StdioServer
) -> Iterator[StreamlitApp]:
    servers = {
        "budget": {"command": budget_view_stdio.command, "args": list(budget_view_stdio.args)},
        "cohort": {"command": cohort_view_stdio.command, "args": list(cohort_view_stdio.args)},
    }
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    with start_streamlit(tmp_path, env={"YIEM_MCP_CONFIG": str(config)}) as app:
        yield app


def test_the_cohort_heatmap_asks_its_server_through_the_page_and_draws_each_answer(
    page: Any, rich_app: StreamlitApp
) -> None:
    _call_tool(page, rich_app, "cohort", "Get Cohort Retention Data")
    # Drawn under the result, below the window: a person scrolls to it, and Chromium runs no
    # animation frames (which these views draw in) in a frame off screen.
    page.locator(VIEW_FRAME).scroll_into_view_if_needed(timeout=60_000)
    view = page.frame_locator(VIEW_FRAME)
    expect(view.get_by_text("Cohort Retention Analysis")).to_be_visible(timeout=60_000)
    # The view fetches its data with its own tools/call, which is not marked read-only: it waits.
    expect(page.get_by_text("The view wants to call")).to_be_visible(timeout=60_000)
    expect(view.get_by_text("Loading...")).to_be_visible()
    page.get_by_role("button", name="Allow the call").click()
    expect(view.get_by_text("Loading...")).to_have_count(0, timeout=60_000)
    screenshot(page, "mcp-apps-cohort-heatmap")

    view.get_by_role("combobox").first.select_option(label="Revenue Retention")
    expect(page.get_by_text("The view wants to call")).to_be_visible(timeout=60_000)
    expect(page.get_by_text('"metric": "revenue"')).to_be_visible()
    page.get_by_role("button", name="Allow the call").click()
    expect(page.get_by_text("The view wants to call")).to_have_count(0, timeout=60_000)
    page.get_by_role("tab", name="History").click()
    calls = page.get_by_test_id("stExpander").filter(has_text="cohort · get-cohort-data")
    expect(calls).to_have_count(3, timeout=60_000)  # the form's call and the view's two


def test_the_budget_allocator_draws_its_chart_and_sliders_from_the_result(
    page: Any, rich_app: StreamlitApp
) -> None:
    _call_tool(page, rich_app, "budget", "Get Budget Data")
    # Drawn under the result, below the window: a person scrolls to it, and Chromium runs no
    # animation frames (which these views draw in) in a frame off screen.
    page.locator(VIEW_FRAME).scroll_into_view_if_needed(timeout=60_000)
    view = page.frame_locator(VIEW_FRAME)
    expect(view.get_by_text("Budget Allocator")).to_be_visible(timeout=60_000)
    expect(view.locator("#status-bar")).not_to_have_text("Allocated: $0 / $0", timeout=60_000)
    expect(view.locator("#sliders-container input[type=range]").first).to_be_visible()
    screenshot(page, "mcp-apps-budget-allocator")
