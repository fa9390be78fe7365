"""The Costs page in a real Chromium after a real chat with the embedded model (llama-server + SmolLM2)."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from tests.fixtures.browser import StreamlitApp, screenshot
from yiem.store import create_store_engine, usage

pytestmark = [pytest.mark.browser, pytest.mark.llama]


def metric_value(page: Any, label: str) -> str:
    """The shown value of the st.metric with this label."""
    card = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return str(card.locator('[data-testid="stMetricValue"]').inner_text()).strip()


def test_costs_page_shows_the_chat_request_and_its_tokens(streamlit_app: StreamlitApp, page: Any) -> None:
    page.goto(streamlit_app.url)
    box = page.locator('[data-testid="stChatInputTextArea"]')
    box.wait_for(state="visible")
    box.fill("Name one colour.")
    box.press("Enter")
    page.locator('[data-testid="stChatMessage"]').nth(1).wait_for(timeout=120_000)
    page.locator('[data-testid="stChatInputStopButton"]').wait_for(state="detached", timeout=120_000)

    with create_store_engine(streamlit_app.database_url).connect() as conn:
        rows = conn.execute(select(usage)).all()
    assert len(rows) == 1, streamlit_app.log()
    row = rows[0]
    assert row.output_tokens > 0 and row.input_tokens > 0 and row.price_known is False

    page.goto(f"{streamlit_app.url}/costs")
    page.locator('[data-testid="stMetric"]').first.wait_for(timeout=60_000)
    assert metric_value(page, "Requests") == "1", streamlit_app.log()
    assert metric_value(page, "Input tokens") == f"{row.input_tokens + row.cache_write_tokens:,}"
    assert metric_value(page, "Output tokens") == f"{row.output_tokens:,}"
    assert metric_value(page, "Cached input tokens") == f"{row.cache_read_tokens:,}"
    # The local model has no price: it is shown apart, and the total is not a made-up $0 of it.
    assert metric_value(page, "Total cost") == "unknown"
    page.get_by_text("for 1 of these requests: local models").first.wait_for()
    page.get_by_text("no cost to chart").wait_for()
    page.get_by_text("Tokens per hour").or_(page.get_by_text("Tokens per day")).first.wait_for()
    page.locator(".js-plotly-plot").first.wait_for()
    screenshot(page, "costs-after-chat")
    page.get_by_role("tab", name="Prices").scroll_into_view_if_needed()
    page.get_by_role("tab", name="Prices").click()
    page.get_by_text("Today's prices in the catalogue").wait_for()
    screenshot(page, "costs-after-chat-prices")
