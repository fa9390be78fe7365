"""The Costs page's filters kept in the URL by hand, picked in Chromium: the figures and the URL follow
each pick, and the box is drawn anew on it (the page's run reads the pick; no handler does)."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import expect
from sqlalchemy import insert

from tests.fixtures.browser import StreamlitApp, choose_option, open_app
from tests.fixtures.costs import KNOWN_CONVERSATIONS, KNOWN_ROWS
from tests.ui.test_browser_costs import metric_value
from yiem.store import conversations, create_store_engine, usage

pytestmark = [pytest.mark.browser]

PARIS = "period=Custom+dates&dates=2026-10-25&dates=2026-10-26&tz=Europe%2FParis"


def _query(page: Any) -> dict[str, list[str]]:
    return parse_qs(urlparse(page.url).query)


def test_a_conversation_picked_in_the_filter_is_the_one_the_figures_and_the_url_show(
    streamlit_app: StreamlitApp, page: Any
) -> None:
    engine = create_store_engine(streamlit_app.database_url)
    with engine.begin() as conn:
        conn.execute(insert(conversations), KNOWN_CONVERSATIONS)
        conn.execute(insert(usage), KNOWN_ROWS)
    engine.dispose()
    open_app(page, f"{streamlit_app.url}/costs?{PARIS}")
    requests = metric_value(page, "Requests")
    expect(requests).to_have_text("4", timeout=60_000)
    box = page.get_by_role("combobox", name="Conversation")

    choose_option(page, box, "Local chat")
    expect(requests).to_have_text("1")  # conv-b: one request of the local model
    expect(metric_value(page, "Total cost")).to_have_text("unknown")
    expect(page).to_have_url(re.compile(r"conversation=conv-b"))
    expect(box).to_have_value("Local chat")

    choose_option(page, box, "Plan the trip")
    expect(requests).to_have_text("2")
    expect(page).to_have_url(re.compile(r"conversation=conv-a"))
    choose_option(page, box, "All conversations")
    expect(requests).to_have_text("4")
    expect(page).not_to_have_url(re.compile(r"conversation="))
    assert _query(page)["tz"] == ["Europe/Paris"]  # the other filters stay in the URL
