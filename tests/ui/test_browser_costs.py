"""The Costs page in a real Chromium after a real chat with the embedded model (llama-server + SmolLM2).

Each figure is waited for until it shows the stored value: the page draws its cards one by one, so
the first card on the page says nothing about the others.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from tests.fixtures.browser import StreamlitApp, open_app, open_tab, screenshot
from yiem.store import create_store_engine, usage

pytestmark = [pytest.mark.browser, pytest.mark.llama]


def metric_value(page: Any, label: str) -> Any:
    """The value element of the st.metric with this label (for `expect`, which waits for its text)."""
    card = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return card.locator('[data-testid="stMetricValue"]')


def _usage_rows(database_url: str, count: int, timeout_s: float = 60) -> list[Any]:
    """The stored usage rows, once there are `count` (one is written as each reply ends)."""
    deadline = time.monotonic() + timeout_s
    while True:
        with create_store_engine(database_url).connect() as conn:
            rows = list(conn.execute(select(usage)).all())
        if len(rows) >= count or time.monotonic() > deadline:
            return rows
        time.sleep(0.1)


def test_costs_page_shows_the_chat_request_and_its_tokens(streamlit_app: StreamlitApp, page: Any) -> None:
    open_app(page, streamlit_app.url)
    box = page.locator('[data-testid="stChatInputTextArea"]')
    box.wait_for(state="visible")
    box.fill("Name one colour.")
    box.press("Enter")
    page.locator('[data-testid="stChatMessage"]').nth(1).wait_for(timeout=120_000)
    page.locator('[data-testid="stChatInputStopButton"]').wait_for(state="detached", timeout=120_000)

    rows = _usage_rows(streamlit_app.database_url, 1)
    assert len(rows) == 1, streamlit_app.log()
    row = rows[0]
    assert row.output_tokens > 0 and row.input_tokens > 0 and row.price_known is False

    open_app(page, f"{streamlit_app.url}/costs")
    expect(metric_value(page, "Requests")).to_have_text("1", timeout=60_000)
    expect(metric_value(page, "Input tokens")).to_have_text(f"{row.input_tokens + row.cache_write_tokens:,}")
    expect(metric_value(page, "Output tokens")).to_have_text(f"{row.output_tokens:,}")
    expect(metric_value(page, "Cached input tokens")).to_have_text(f"{row.cache_read_tokens:,}")
    # The local model has no price: it is shown apart, and the total is not a made-up $0 of it.
    expect(metric_value(page, "Total cost")).to_have_text("unknown")
    page.get_by_text("for 1 of these requests: local models").first.wait_for()
    page.get_by_text("no cost to chart").wait_for()
    page.get_by_text("Tokens per hour").or_(page.get_by_text("Tokens per day")).first.wait_for()
    page.locator(".js-plotly-plot").first.wait_for()
    screenshot(page, "costs-after-chat")
    open_tab(page, "Prices")
    page.get_by_text("Today's prices in the catalogue").wait_for()
    screenshot(page, "costs-after-chat-prices")
