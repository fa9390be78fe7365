"""The person's side of a server's questions, in a real Chromium against the real server-everything:
an elicitation form answered on the Tools page, and a sampling request approved, answered by the
app's embedded model (llama-server + SmolLM2), edited, and counted on the Costs page.

Screenshots go to tests/artifacts/.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from sqlalchemy import text

from tests.fixtures.browser import StreamlitApp, screenshot
from tests.fixtures.mcp import StdioServer
from tests.ui.test_tools_browser import _add_server, _choose_tool, _fill, _open_tools, tools_app
from yiem.store import create_store_engine

pytestmark = pytest.mark.browser
__all__ = ["tools_app"]  # the fixture, imported for these tests


def test_elicitation_form_is_answered_from_the_page(
    tools_app: StreamlitApp, page: Any, everything_stdio: StdioServer
) -> None:
    _open_tools(page, tools_app)
    _add_server(page, "everything", stdio=everything_stdio)
    _choose_tool(page, "Trigger Elicitation Request Tool")
    page.get_by_role("button", name="Call").click()
    page.get_by_text("everything asks:").wait_for(timeout=30_000)
    _fill(page, "String", "Grace Hopper")
    screenshot(page, "tools-elicitation-form")
    page.get_by_role("button", name="Accept").click()
    page.get_by_text(re.compile("User provided the requested information")).first.wait_for(timeout=30_000)
    body = page.inner_text("body")
    assert "Grace Hopper" in body, tools_app.log()
    assert "everything asks:" not in body


def test_elicitation_declined_from_the_page(
    tools_app: StreamlitApp, page: Any, everything_stdio: StdioServer
) -> None:
    _open_tools(page, tools_app)
    _add_server(page, "everything", stdio=everything_stdio)
    _choose_tool(page, "Trigger Elicitation Request Tool")
    page.get_by_role("button", name="Call").click()
    page.get_by_text("everything asks:").wait_for(timeout=30_000)
    page.get_by_role("button", name="Decline").click()
    page.get_by_text("User declined to provide the requested information").first.wait_for(timeout=30_000)
    assert "everything asks:" not in page.inner_text("body")


def test_sampling_is_approved_answered_by_the_model_edited_and_counted(
    tools_app: StreamlitApp, page: Any, everything_stdio: StdioServer
) -> None:
    _open_tools(page, tools_app)
    _add_server(page, "everything", stdio=everything_stdio)
    _choose_tool(page, "Trigger Sampling Request Tool")
    _fill(page, "prompt", "Say hello in three words.")
    _fill(page, "maxTokens", "16")
    page.get_by_role("button", name="Call").click()
    page.get_by_text("everything asks to use your model").wait_for(timeout=30_000)
    # The person sees (and may edit) the server's message and its model preferences.
    assert "Say hello in three words." in page.get_by_label("Message 1 (user)").input_value()
    assert "up to 16 tokens" in page.inner_text("body")
    page.get_by_role("button", name="Generate reply").click()
    reply = page.get_by_label("Reply (you may edit it before it goes back)")
    reply.wait_for(timeout=180_000)  # the app's embedded model may need to start first
    assert reply.input_value().strip(), tools_app.log()
    screenshot(page, "tools-sampling-reply")
    reply.fill("Hello from the browser")
    reply.press("Tab")
    page.get_by_role("button", name="Send reply").click()
    page.get_by_text(re.compile("LLM sampling result")).first.wait_for(timeout=30_000)
    assert "Hello from the browser" in page.inner_text("body")
    engine = create_store_engine(tools_app.database_url)
    with engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT u.output_tokens FROM usage u JOIN conversations c ON c.id = u.conversation_id "
                "WHERE c.title = 'MCP sampling · everything'"
            )
        ).all()
    engine.dispose()
    assert len(rows) == 1 and rows[0][0] > 0
