"""The Compare page in a real Chromium, with the embedded llama-server (SmolLM2) as both columns.

Two columns with different system prompts answer and each shows its figures; a blind vote hides
the names, records the vote, reveals them and the leaderboard
draws its heatmap. Screenshots go to tests/artifacts/.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.fixtures.browser import StreamlitApp, open_app, screenshot
from yiem.compare import VoteStore
from yiem.store import create_store_engine

pytestmark = [pytest.mark.browser, pytest.mark.llama]

PROMPT = '[data-testid="stChatInputTextArea"]'


def _send(page: Any, text: str) -> None:
    box = page.locator(PROMPT)
    box.fill(text)
    box.press("Enter")


def test_two_local_columns_then_a_blind_vote(streamlit_app: StreamlitApp, page: Any) -> None:
    open_app(page, f"{streamlit_app.url}/compare")
    main = page  # the chat input sits outside the main block
    expect(main.get_by_text("No votes yet")).to_be_visible(timeout=60_000)
    for index, system in enumerate(["You answer like a pirate.", "You answer very formally."]):
        main.get_by_text(f"Column {index + 1}:").click()
        area = main.get_by_label("System prompt").nth(index)
        area.fill(system)
        area.press("Tab")
        # Short replies: the embedded server answers one column after the other on a busy machine.
        longest = main.get_by_label(re.compile("Longest reply in tokens")).nth(index)
        longest.fill("32")
        longest.press("Enter")
        expect(longest).to_have_value("32")
    _send(page, "Say hello.")
    # Both columns end with their figures, drawn by the page's timer once they finish.
    expect(main.get_by_text("s total")).to_have_count(2, timeout=180_000)
    expect(main.get_by_text(re.compile(r"TTFT \d"))).to_have_count(2)
    expect(main.get_by_text("price unknown", exact=False)).to_have_count(2)
    screenshot(page, "compare_columns")

    main.get_by_text("Blind vote").click()
    _send(page, "Say goodbye.")
    expect(main.get_by_role("button", name="A is better")).to_be_visible(timeout=180_000)
    expect(main.get_by_text("Model A", exact=True)).to_be_visible()
    main.get_by_role("button", name="A is better").click()
    expect(main.get_by_text("Vote recorded")).to_be_visible(timeout=60_000)
    expect(main.locator('[data-testid="stPlotlyChart"]')).to_be_visible(timeout=60_000)
    screenshot(page, "compare_vote")
    votes = VoteStore(create_store_engine(streamlit_app.database_url)).votes()
    assert [(v.verdict, v.prompt) for v in votes] == [("left", "Say goodbye.")]
    assert {v.left_model for v in votes} | {v.right_model for v in votes} == {"local/smollm2"}
