"""The person's side of a server's questions, in a real Chromium against the real server-everything:
an elicitation form answered on the Tools page, and a sampling request approved, answered by the
app's embedded model (llama-server + SmolLM2), edited, and counted on the Costs page.

Screenshots go to tests/artifacts/.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect
from sqlalchemy import text

from tests.fixtures.browser import StreamlitApp, screenshot
from tests.fixtures.mcp import StdioServer
from tests.ui.test_tools_browser import _add_server, _choose_tool, _fill, _open_tools, _result_text, tools_app
from yiem.store import create_store_engine

pytestmark = pytest.mark.browser
__all__ = ["tools_app"]  # the fixture, imported for these tests


def test_elicitation_form_is_answered_from_the_page(
    tools_app: StreamlitApp, page: Any, everything_stdio: StdioServer
) -> None:
    _open_tools(page, tools_app)
    _add_server(page, "everything", "Trigger Elicitation Request Tool", stdio=everything_stdio)
    _choose_tool(page, "Trigger Elicitation Request Tool")
    page.get_by_role("button", name="Call").click()
    page.get_by_text("everything asks:").wait_for(timeout=30_000)
    _fill(page, "String", "Grace Hopper")
    screenshot(page, "tools-elicitation-form")
    page.get_by_role("button", name="Accept").click()
    # The result's own words, not only its first line: it is drawn block by block.
    expect(_result_text(page, "User provided the requested information").first).to_be_visible(timeout=30_000)
    expect(page.get_by_text(re.compile("Grace Hopper")).first).to_be_visible()
    expect(page.get_by_text("everything asks:")).to_have_count(0)


def test_elicitation_declined_from_the_page(
    tools_app: StreamlitApp, page: Any, everything_stdio: StdioServer
) -> None:
    _open_tools(page, tools_app)
    _add_server(page, "everything", "Trigger Elicitation Request Tool", stdio=everything_stdio)
    _choose_tool(page, "Trigger Elicitation Request Tool")
    page.get_by_role("button", name="Call").click()
    page.get_by_text("everything asks:").wait_for(timeout=30_000)
    page.get_by_role("button", name="Decline").click()
    expect(_result_text(page, "User declined to provide the requested information").first).to_be_visible(
        timeout=30_000
    )
    expect(page.get_by_text("everything asks:")).to_have_count(0)


def test_sampling_is_approved_answered_by_the_model_edited_and_counted(
    tools_app: StreamlitApp, page: Any, everything_stdio: StdioServer
) -> None:
    _open_tools(page, tools_app)
    _add_server(page, "everything", "Trigger Sampling Request Tool", stdio=everything_stdio)
    _choose_tool(page, "Trigger Sampling Request Tool")
    _fill(page, "prompt", "Say hello in three words.")
    _fill(page, "maxTokens", "16")
    page.get_by_role("button", name="Call").click()
    page.get_by_text("everything asks to use your model").wait_for(timeout=30_000)
    # Words only: an icon before them would put its name ("smart_toy") into the text read and copied.
    heading = page.get_by_test_id("stMarkdownContainer").filter(has_text="everything asks to use your model")
    expect(heading.first).to_have_text("everything asks to use your model")
    # The person sees (and may edit) the server's message and its model preferences.
    message = page.get_by_label("Message 1 (user)")
    expect(message).to_have_value(re.compile("Say hello in three words."))
    expect(page.get_by_text(re.compile("up to 16 tokens")).first).to_be_visible()
    page.get_by_role("button", name="Generate reply").click()
    reply = page.get_by_label("Reply (you may edit it before it goes back)")
    # The app's embedded model may need to start first.
    expect(reply).to_have_value(re.compile(r"\S"), timeout=180_000)
    screenshot(page, "tools-sampling-reply")
    reply.fill("Hello from the browser")
    reply.press("Tab")
    page.get_by_role("button", name="Send reply").click()
    expect(_result_text(page, "LLM sampling result").first).to_be_visible(timeout=30_000)
    expect(_result_text(page, "Hello from the browser").first).to_be_visible()
    engine = create_store_engine(tools_app.database_url)
    with engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT u.output_tokens, u.source, u.tool FROM usage u "
                "JOIN conversations c ON c.id = u.conversation_id WHERE c.title = 'MCP sampling · everything'"
            )
        ).all()
    engine.dispose()
    assert len(rows) == 1 and rows[0][0] > 0
    # Counted under the server: the Costs page's "By tool call" and its sampling filter show it.
    assert tuple(rows[0][1:]) == ("mcp-sampling", "everything")


def test_url_elicitation_is_agreed_then_the_link_offered(
    tools_app: StreamlitApp, page: Any, everything_stdio: StdioServer
) -> None:
    _open_tools(page, tools_app)
    _add_server(page, "everything", "Trigger URL Elicitation Tool", stdio=everything_stdio)
    _choose_tool(page, "Trigger URL Elicitation Tool")
    _fill(page, "url", "https://example.com/consent")
    _fill(page, "message", "Please sign the consent form")
    page.get_by_role("button", name="Call").click()
    page.get_by_text("everything asks: Please sign the consent form").wait_for(timeout=30_000)
    page.get_by_text("https://example.com/consent", exact=True).wait_for()
    page.get_by_role("button", name="Agree and open").click()
    expect(_result_text(page, "User completed the URL elicitation flow").first).to_be_visible(timeout=30_000)
    link = page.get_by_role("link", name="Open https://example.com/consent")
    expect(link).to_have_attribute("href", "https://example.com/consent")
