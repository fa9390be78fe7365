"""The Tools page in a real Chromium: servers added from the browser, tools called from the form.

Screenshots go to tests/artifacts/.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.browser import StreamlitApp, screenshot, start_streamlit
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
    page.goto(app.url)
    # A person waits for the chat to load before reaching for another tab.
    page.locator('[data-testid="stChatInputTextArea"]').wait_for()
    page.get_by_role("link", name="Tools").click()
    page.get_by_text("Connect to MCP servers, try their tools").wait_for()


def _add_server(page: Any, name: str, *, url: str | None = None, stdio: StdioServer | None = None) -> None:
    if stdio is not None:
        page.get_by_text("Command (stdio)", exact=True).click()
        page.get_by_label("Command", exact=True).fill(stdio.command)
        page.get_by_label("Arguments", exact=True).fill(" ".join(stdio.args))
    else:
        page.get_by_label("URL", exact=True).fill(url or "")
    page.get_by_label("Name", exact=True).fill(name)
    page.get_by_label("Name", exact=True).press("Tab")
    page.get_by_role("button", name="Add and connect").click()
    page.get_by_role("button", name="Disconnect").wait_for(timeout=60_000)


def _choose_tool(page: Any, title: str) -> None:
    page.get_by_role("radiogroup", name="Tool").get_by_text(title, exact=True).click()
    page.get_by_role("heading", name=title).wait_for()


def _fill(page: Any, label: str, value: str) -> None:
    # Required fields carry a " *" after the name; the aria label keeps Markdown's escape.
    field = page.get_by_label(re.compile(rf"^{re.escape(label)}( \\\\?\*)?$"))
    field.fill(value)
    field.press("Tab")


def test_call_get_current_time_from_the_form(
    tools_app: StreamlitApp, page: Any, time_stdio: StdioServer
) -> None:
    _open_tools(page, tools_app)
    _add_server(page, "time", stdio=time_stdio)
    _choose_tool(page, "get_current_time")
    _fill(page, "Timezone", "Europe/Zurich")
    page.get_by_role("button", name="Call").click()
    # The caption under a result names the server, the tool and the duration.
    page.get_by_text(re.compile(r"time · get_current_time · [\d.,]+ m?s")).wait_for(timeout=60_000)
    screenshot(page, "tools-time-result")
    body = page.inner_text("body")
    assert '"timezone"' in body and '"Europe/Zurich"' in body and '"datetime"' in body, tools_app.log()
    assert "The tool reported an error" not in body


def test_long_running_operation_over_http_shows_progress(
    tools_app: StreamlitApp, page: Any, everything_http_url: str
) -> None:
    _open_tools(page, tools_app)
    _add_server(page, "everything-http", url=everything_http_url)
    session = page.get_by_text(re.compile(r"Session [0-9a-f-]{8,}"))
    session.wait_for()
    _choose_tool(page, "Trigger Long Running Operation Tool")
    _fill(page, "duration", "6")
    _fill(page, "steps", "3")
    page.get_by_role("button", name="Call").click()
    progress = page.get_by_text(re.compile(r"Calling trigger-long-running-operation — [12] of 3"))
    progress.wait_for(timeout=30_000)
    assert page.get_by_role("progressbar").count() == 1
    screenshot(page, "tools-long-running-progress")
    page.get_by_text(re.compile("Long running operation completed")).first.wait_for(timeout=60_000)
    # Streamlit clears the last run's elements when the new run ends, so the bar may linger a moment.
    page.get_by_role("progressbar").wait_for(state="detached", timeout=30_000)
    screenshot(page, "tools-long-running-done")
