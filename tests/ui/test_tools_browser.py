"""The Tools page in a real Chromium: servers added from the browser, tools called from the form.

Each step waits for the exact state it then asserts (Playwright's `expect` retries until it holds),
never for an earlier sign of it: Streamlit draws a run's elements one after another, so a caption
can be on the page before the result above it is. Screenshots go to tests/artifacts/.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.fixtures.browser import (
    StreamlitApp,
    click_until,
    open_app,
    screenshot,
    script_run,
    settled,
    start_streamlit,
)
from tests.fixtures.mcp import StdioServer

pytestmark = pytest.mark.browser


@pytest.fixture
def tools_app(tmp_path: Path) -> Iterator[StreamlitApp]:
    """The app with an empty mcp.json, so servers are added from the page."""
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {}}))
    with start_streamlit(tmp_path, env={"YIEM_MCP_CONFIG": str(config)}) as app:
        yield app


def _open_tools(page: Any, app: StreamlitApp) -> None:
    open_app(page, app.url)
    # A person waits for the chat to load before reaching for another tab.
    page.locator('[data-testid="stChatInputTextArea"]').wait_for()
    page.get_by_role("link", name="Tools").click()
    page.get_by_text("Connect to MCP servers, try their tools").wait_for()


def _add_server(
    page: Any, name: str, first_tool: str, *, url: str | None = None, stdio: StdioServer | None = None
) -> None:
    """Add and connect a server from the form; done when `name` is chosen and its tools are listed."""
    adding = page.get_by_test_id("stExpander").filter(has_text="Add a server")
    expect(adding).to_be_visible()
    if adding.locator("details[open]").count() == 0:  # closed by default once a server is listed
        adding.locator("summary").click()
    expect(page.get_by_label("Name", exact=True)).to_be_visible()
    if stdio is not None:
        page.get_by_text("Command (stdio)", exact=True).click()
        page.get_by_label("Command", exact=True).fill(stdio.command)
        page.get_by_label("Arguments", exact=True).fill(" ".join(stdio.args))
    else:
        page.get_by_text("URL (Streamable HTTP)", exact=True).click()
        page.get_by_label("URL", exact=True).fill(url or "")
    page.get_by_label("Name", exact=True).fill(name)
    page.get_by_label("Name", exact=True).press("Tab")
    page.get_by_role("button", name="Add and connect").click()
    # The picker shows the new server only on the run after it connected; its tools are listed then.
    expect(page.get_by_role("combobox", name="Server")).to_have_value(name, timeout=60_000)
    tools = page.get_by_role("radiogroup", name="Tool")
    expect(tools.get_by_text(first_tool, exact=True)).to_be_visible(timeout=60_000)
    expect(page.get_by_role("button", name="Disconnect")).to_be_visible()


def _choose_tool(page: Any, title: str) -> None:
    tools = page.get_by_role("radiogroup", name="Tool")
    heading = page.get_by_role("heading", name=title)
    if not tools.get_by_role("radio", name=title, exact=True).is_checked():
        # The form of the tool before lingers until the run that draws this one ends.
        click_until(page, tools.get_by_text(title, exact=True), lambda ms: heading.wait_for(timeout=ms))
    heading.wait_for()
    settled(page)


def _result_text(page: Any, text: str) -> Any:
    """A text block of the result (the raw exchange holds the same words, but as JSON)."""
    return page.get_by_test_id("stMarkdownContainer").filter(has_text=text)


def _fill(page: Any, label: str, value: str) -> None:
    # Required fields carry a " *" after the name; the aria label keeps Markdown's escape.
    field = page.get_by_label(re.compile(rf"^{re.escape(label)}( \\\\?\*)?$"))
    # The last tool's form lingers until the run that draws the chosen one ends.
    expect(field).to_have_count(1)
    if field.input_value() == value:
        return
    field.fill(value)
    # Leaving the field sends its value: Call is clicked only once that run has ended with it.
    with script_run(page):
        field.press("Tab")
    expect(field).to_have_value(value)


def test_call_get_current_time_from_the_form(
    tools_app: StreamlitApp, page: Any, time_stdio: StdioServer
) -> None:
    _open_tools(page, tools_app)
    _add_server(page, "time", "get_current_time", stdio=time_stdio)
    _choose_tool(page, "get_current_time")
    _fill(page, "Timezone", "Europe/Zurich")
    page.get_by_role("button", name="Call").click()
    # The result's JSON itself, not the caption drawn under it (which can come first).
    # Shown twice (the text as JSON, then the structured content); the raw exchange is collapsed.
    result = page.get_by_test_id("stJson").filter(visible=True).filter(has_text="Europe/Zurich").first
    expect(result).to_contain_text('"timezone"', timeout=60_000)
    expect(result).to_contain_text('"datetime"')
    expect(page.get_by_text(re.compile(r"time · get_current_time · [\d.,]+ m?s"))).to_be_visible()
    screenshot(page, "tools-time-result")
    expect(page.get_by_text("The tool reported an error")).to_have_count(0)


def test_long_running_operation_over_http_shows_progress(
    tools_app: StreamlitApp, page: Any, everything_http_url: str
) -> None:
    _open_tools(page, tools_app)
    _add_server(page, "everything-http", "Echo Tool", url=everything_http_url)
    expect(page.get_by_text(re.compile(r"Session [0-9a-f-]{8,}"))).to_be_visible()
    _choose_tool(page, "Trigger Long Running Operation Tool")
    _fill(page, "duration", "6")
    _fill(page, "steps", "3")
    page.get_by_role("button", name="Call").click()
    progress = page.get_by_role("progressbar")
    expect(progress).to_have_count(1, timeout=30_000)
    expect(page.get_by_text(re.compile(r"Calling trigger-long-running-operation — [12] of 3"))).to_be_visible(
        timeout=30_000
    )
    screenshot(page, "tools-long-running-progress")
    expect(page.get_by_text(re.compile("Long running operation completed")).first).to_be_visible(
        timeout=60_000
    )
    # Streamlit clears the last run's elements when the new run ends, so the bar may linger a moment.
    expect(progress).to_have_count(0, timeout=30_000)
    screenshot(page, "tools-long-running-done")


def test_three_servers_added_in_a_row_each_answer_a_call(
    tools_app: StreamlitApp,
    page: Any,
    filesystem_stdio: StdioServer,
    git_stdio: StdioServer,
    everything_http_url: str,
) -> None:
    """Issue 12: adding a second server while one was listed crashed the page."""
    _open_tools(page, tools_app)
    allowed = filesystem_stdio.args[0]
    _add_server(page, "files", "Read Text File", stdio=filesystem_stdio)
    _choose_tool(page, "Read Text File")
    _fill(page, "path", f"{allowed}/hello.txt")
    page.get_by_role("button", name="Call").click()
    expect(_result_text(page, "Hello from the filesystem server.")).to_be_visible(timeout=60_000)

    repository = git_stdio.args[1]
    _add_server(page, "git", "git_status", stdio=git_stdio)
    expect(page.get_by_text("This app has encountered an error")).to_have_count(0)
    _choose_tool(page, "git_status")
    _fill(page, "Repo Path", repository)
    page.get_by_role("button", name="Call").click()
    expect(_result_text(page, "On branch main")).to_be_visible(timeout=60_000)

    _add_server(page, "everything", "Echo Tool", url=everything_http_url)
    _choose_tool(page, "Echo Tool")
    _fill(page, "message", "three servers")
    page.get_by_role("button", name="Call").click()
    expect(_result_text(page, "Echo: three servers")).to_be_visible(timeout=60_000)
    screenshot(page, "tools-three-servers")
    expect(page.get_by_text("This app has encountered an error")).to_have_count(0)


def test_first_look_through_make_run_offers_the_example_server(tmp_path: Path, page: Any) -> None:
    """Issue 12: a new user with no mcp.json met an empty page; `make run` now installs an example."""
    env = {"YIEM_MCP_CONFIG": str(tmp_path / "no-mcp.json")}
    with start_streamlit(tmp_path, env=env, make_run=True) as app:
        _open_tools(page, app)
        expect(page.get_by_text("No MCP servers yet")).to_be_visible()
        screenshot(page, "tools-first-look")
        page.get_by_role("button", name="Add the time server").click()
        expect(page.get_by_role("combobox", name="Server")).to_have_value("time", timeout=60_000)
        tools = page.get_by_role("radiogroup", name="Tool")
        expect(tools.get_by_text("get_current_time", exact=True)).to_be_visible(timeout=60_000)
        _choose_tool(page, "get_current_time")
        expect(page.get_by_role("switch", name="Use in chat")).to_be_checked()
        _fill(page, "Timezone", "Asia/Tokyo")
        page.get_by_role("button", name="Call").click()
        result = page.get_by_test_id("stJson").filter(visible=True).filter(has_text="Asia/Tokyo").first
        expect(result).to_contain_text('"datetime"', timeout=60_000)
        screenshot(page, "tools-first-look-example")
        # The whole log: app.log() keeps only its tail, for failure messages.
        assert "yiem: starting the app" in app.log_path.read_text(errors="replace")
