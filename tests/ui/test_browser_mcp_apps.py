"""MCP Apps views on the Tools page in a real Chromium: the official basic example, and a hostile view.

The view runs in a sandboxed frame inside the page; Playwright reaches into it with a frame locator.
Each step waits for the state it asserts. Screenshots go to tests/artifacts/.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.fixtures.browser import (
    StreamlitApp,
    choose_option,
    click_in_view,
    hold_component_script,
    open_app,
    screenshot,
    script_run,
    start_streamlit,
)
from tests.fixtures.mcp import StdioServer
from tests.fixtures.mcp_apps import hostile_view_stdio, servers_env
from tests.ui.test_browser_accessibility import blocking_violations, describe
from ui.app_view import INITIAL_HEIGHT

pytestmark = pytest.mark.browser

_IDLE = """() => document.querySelector('[data-testid="stApp"]')
    .getAttribute('data-test-script-state') === 'notRunning'"""
VIEW_FRAME = 'iframe[title^="The view of"]'
# What the official SDK reports as the view's height (App.setupSizeChangedNotifications).
_CONTENT_HEIGHT = """(html) => { const was = html.style.height; html.style.height = 'max-content';
    const height = Math.ceil(html.getBoundingClientRect().height);
    html.style.height = was; return height; }"""


@pytest.fixture
def views_app(tmp_path: Path, basic_view_stdio: StdioServer) -> Iterator[StreamlitApp]:
    """The app with two servers configured: the basic example and our hostile view."""
    env = servers_env(tmp_path, {"basic": basic_view_stdio, "hostile": hostile_view_stdio()})
    with start_streamlit(tmp_path, env=env) as app:
        yield app


def _call_tool(page: Any, app: StreamlitApp, server: str, tool: str) -> None:
    choose_tool(page, app, server, tool)
    with script_run(page):
        page.get_by_role("button", name="Call", exact=True).click()


def choose_tool(page: Any, app: StreamlitApp, server: str, tool: str) -> None:
    """Open the Tools page on `server` with `tool` chosen, its form drawn."""
    open_app(page, f"{app.url}/tools")
    picker = page.get_by_role("combobox", name="Server")
    expect(picker).to_be_visible(timeout=60_000)
    if picker.input_value() != server:
        choose_option(page, picker, server)
    expect(page.get_by_role("button", name="Disconnect")).to_be_visible(timeout=60_000)
    tools = page.get_by_role("radiogroup", name="Tool")
    expect(tools.get_by_text(tool, exact=True)).to_be_visible(timeout=60_000)
    if not tools.get_by_role("radio", name=tool, exact=True).is_checked():
        with script_run(page):
            tools.get_by_text(tool, exact=True).click()
    page.get_by_role("heading", name=tool).wait_for()


def test_the_basic_example_draws_its_view_which_calls_back_through_the_page(
    page: Any, views_app: StreamlitApp
) -> None:
    _call_tool(page, views_app, "basic", "Get Time")
    view = page.frame_locator(VIEW_FRAME)
    time_shown = view.locator("#server-time")
    expect(time_shown).not_to_have_text("Loading...", timeout=60_000)  # the tool's result reached the view
    first = time_shown.inner_text()
    screenshot(page, "mcp-apps-basic-view")
    # The frame follows the size the view reports (its content's height, as the SDK measures it in an
    # animation frame, which Chromium runs only once the frame is on screen), not its first height.
    page.locator(VIEW_FRAME).scroll_into_view_if_needed()
    content = view.locator("html").evaluate(_CONTENT_HEIGHT)
    assert content != INITIAL_HEIGHT, "the basic example's content is as tall as the default frame"
    expect(page.locator(VIEW_FRAME)).to_have_css("height", f"{content}px", timeout=60_000)

    # get-time is not marked read-only, so the view's own call waits for the person.
    click_in_view(view, view.get_by_role("button", name="Get Server Time"))
    expect(page.get_by_text("The view wants to call")).to_be_visible(timeout=60_000)
    page.get_by_role("button", name="Allow the call").click()
    expect(time_shown).not_to_have_text(first, timeout=60_000)

    click_in_view(view, view.get_by_role("button", name="Open Link"))
    expect(page.get_by_text("The view wants to open a link: https://modelcontextprotocol.io/")).to_be_visible(
        timeout=60_000
    )
    page.get_by_role("button", name="Don't open").click()
    expect(page.get_by_text("The view wants to open a link")).to_have_count(0, timeout=60_000)

    click_in_view(view, view.get_by_role("button", name="Send Message"))
    expect(page.get_by_text("The view suggests a message for the chat")).to_be_visible(timeout=60_000)
    expect(page.get_by_text("This is message text.")).to_be_visible()

    with script_run(page):
        page.get_by_role("tab", name="History").click()
    history = page.get_by_test_id("stExpander").filter(has_text="basic · get-time")
    expect(history).to_have_count(2, timeout=60_000)  # the form's call and the view's


def test_the_view_tab_says_what_the_view_may_do(page: Any, views_app: StreamlitApp) -> None:
    _call_tool(page, views_app, "basic", "Get Time")
    expect(page.frame_locator(VIEW_FRAME).locator("#server-time")).not_to_have_text(
        "Loading...", timeout=60_000
    )
    page.wait_for_function(_IDLE, timeout=120_000)
    violations = blocking_violations(page)
    assert not violations, f"axe-core with a view open:\n{describe(violations)}"
    # The view's tabs switch in the browser, without a rerun.
    page.get_by_role("tab", name="View", exact=True).click()
    expect(page.get_by_text("It may not connect anywhere.")).to_be_visible()
    expect(page.get_by_text("It asks for no browser permission")).to_be_visible()


def test_a_view_whose_script_loads_only_after_the_call_returned_is_drawn_with_its_result(
    page: Any, views_app: StreamlitApp
) -> None:
    # As on a busy machine (ci47): the view's script loads only after the runs that followed Call.
    let_bridge_run = hold_component_script(page, "yiem-view-note")
    _call_tool(page, views_app, "basic", "Get Time")
    expect(page.get_by_text("The structured content matches the tool's output schema.")).to_be_visible(
        timeout=60_000
    )
    page.wait_for_function(_IDLE, timeout=120_000)
    let_bridge_run()
    expect(page.frame_locator(VIEW_FRAME).locator("#server-time")).not_to_have_text(
        "Loading...", timeout=60_000
    )
    expect(page.locator(VIEW_FRAME)).to_have_count(1)


def test_a_hostile_view_reaches_no_other_origin_no_cookie_no_page_and_no_permission(
    page: Any, views_app: StreamlitApp
) -> None:
    page.context.add_cookies([{"name": "yiem-secret", "value": "s3cret", "url": views_app.url}])
    _call_tool(page, views_app, "hostile", "probe")
    view = page.frame_locator(VIEW_FRAME)
    expect(view.locator("#fetch")).to_have_text("fetch: blocked", timeout=60_000)
    expect(view.locator("#cookie")).to_have_text("cookie: blocked")
    expect(view.locator("#parent")).to_have_text("parent: blocked")
    expect(view.locator("#clipboard")).to_have_text("clipboard: blocked")
    expect(page.get_by_text("The view tried to reach http://127.0.0.1:9/steal")).to_be_visible(timeout=60_000)
    page.locator(VIEW_FRAME).scroll_into_view_if_needed()  # the wait for its size starts on screen
    expect(page.get_by_text("The view has not reported its size")).to_be_visible(timeout=60_000)
    expect(view.locator("#location")).to_have_text("location: blocked")
    expect(
        page.get_by_text("The view asked for the geolocation permission, which its resource does not declare")
    ).to_be_visible(timeout=60_000)
    screenshot(page, "mcp-apps-hostile-view")

    click_in_view(view, view.get_by_role("button", name="Flood the host"))
    expect(page.get_by_text("sent too many messages; yiem stopped listening to it")).to_be_visible(
        timeout=60_000
    )
