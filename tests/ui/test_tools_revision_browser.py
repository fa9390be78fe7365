"""Protocol 2026-07-28 on the Tools page, in a real Chromium: a stateless server on the official
Python SDK 2.3 beside server-everything (2025-11-25), each showing its revision; the stateless
one's tool called, its questions (an elicitation, a sampling request answered by the app's
embedded model) answered on the page, and a resource subscription's update shown.

Screenshots go to tests/artifacts/.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.fixtures.browser import StreamlitApp, choose_option, screenshot, script_run
from tests.ui.test_tools_browser import _add_server, _choose_tool, _fill, _open_tools, _result_text, tools_app

pytestmark = pytest.mark.browser
__all__ = ["tools_app"]  # the fixture, imported for these tests


def _revision(page: Any, version: str) -> Any:
    return page.get_by_test_id("stMarkdownContainer").filter(
        has_text=re.compile(rf"Protocol revision\s*{version}")
    )


def _tab(page: Any, name: str) -> None:
    with script_run(page):
        page.get_by_role("tab", name=name).click()


def test_a_stateless_server_beside_a_2025_one_each_with_its_revision(
    tools_app: StreamlitApp, page: Any, sdk_stateless_http_url: str, everything_http_url: str
) -> None:
    _open_tools(page, tools_app)
    _add_server(page, "sdk", "add", url=sdk_stateless_http_url)
    expect(_revision(page, "2026-07-28").first).to_be_visible()
    expect(page.get_by_text("none (stateless revision)")).to_be_visible()
    _choose_tool(page, "add")
    _fill(page, "A", "2")
    _fill(page, "B", "3")
    page.get_by_role("button", name="Call").click()
    expect(page.get_by_text(re.compile(r"sdk · add · [\d.,]+ m?s"))).to_be_visible(timeout=60_000)

    # The server's question comes back as an input-required result, shown like any other question.
    _choose_tool(page, "greet")
    page.get_by_role("button", name="Call").click()
    page.get_by_text("sdk asks:").wait_for(timeout=30_000)
    _fill(page, "Full Name", "Ada Lovelace")
    screenshot(page, "tools-2026-elicitation")
    page.get_by_role("button", name="Accept").click()
    expect(_result_text(page, "Hello, Ada Lovelace!").first).to_be_visible(timeout=30_000)
    expect(page.get_by_text("sdk asks:")).to_have_count(0)

    _choose_tool(page, "ask_model")
    page.get_by_role("button", name="Call").click()
    page.get_by_text("sdk asks to use your model").wait_for(timeout=30_000)
    expect(page.get_by_label("Message 1 (user)")).to_have_value(re.compile("Say hello in three words."))
    page.get_by_role("button", name="Generate reply").click()
    reply = page.get_by_label("Reply (you may edit it before it goes back)")
    expect(reply).to_have_value(re.compile(r"\S"), timeout=180_000)  # the embedded model may start first
    reply.fill("Hello from yiem")
    reply.press("Tab")
    page.get_by_role("button", name="Send reply").click()
    expect(_result_text(page, "The model said: Hello from yiem").first).to_be_visible(timeout=30_000)

    # A subscription rides the subscriptions/listen stream; the update shows in the Log tab.
    _tab(page, "Resources")
    page.get_by_role("button", name="Subscribe to updates").click()
    expect(page.get_by_text(re.compile("Subscribed: updates show in the Log tab"))).to_be_visible()
    _tab(page, "Tools")
    _choose_tool(page, "set_note")
    _fill(page, "Text", "tea at five")
    page.get_by_role("button", name="Call").click()
    expect(_result_text(page, "noted").first).to_be_visible(timeout=30_000)
    _tab(page, "Log")
    page.get_by_role("button", name="Update").click()
    updated = page.get_by_text(re.compile("Resource note://today was updated")).filter(visible=True)
    expect(updated.first).to_be_visible(timeout=30_000)
    expect(page.get_by_text(re.compile(r"protocol revision\s*2026-07-28"))).to_be_visible()
    screenshot(page, "tools-2026-subscription-update")

    _tab(page, "Tools")
    _add_server(page, "everything", "Echo Tool", url=everything_http_url)
    expect(_revision(page, "2025-11-25").first).to_be_visible()
    expect(page.get_by_text(re.compile(r"Session [0-9a-f-]{8,}"))).to_be_visible()
    screenshot(page, "tools-2025-beside-2026")
    choose_option(page, page.get_by_role("combobox", name="Server"), "sdk")
    expect(_revision(page, "2026-07-28").first).to_be_visible()
    expect(page.get_by_text("This app has encountered an error")).to_have_count(0)
