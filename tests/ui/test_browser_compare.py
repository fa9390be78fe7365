"""The Compare page in a real Chromium, with the embedded llama-server (SmolLM2) as the columns.

Two columns with different system prompts on a llama-server with two slots answer at the same time
(the store's timelines show each column's first token before the other column's last), each shows
its figures, and a third column pointed at a dead URL says why it failed while they finish. Then a
blind vote hides the names, records the vote, reveals them and the leaderboard draws its heatmap.
Screenshots go to tests/artifacts/.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.fixtures.browser import StreamlitApp, choose_option, open_app, screenshot, script_run
from tests.fixtures.ports import free_port
from yiem.compare import ComparisonStore, VoteStore
from yiem.providers.local_llm import LocalLlmServer
from yiem.store import create_store_engine
from yiem.timeline import Span
from yiem.types import AssistantMessage, AssistantMessageToolCall

pytestmark = [pytest.mark.browser, pytest.mark.llama, pytest.mark.timeout(1500)]

PROMPT = '[data-testid="stChatInputTextArea"]'
LONG = 300_000
# Long enough that neither reply can end before the other's first token, even if SmolLM2 keeps
# going: the prompt asks for many lines and the replies stop at this many tokens.
REPLY_TOKENS = "32"


def _send(page: Any, text: str) -> None:
    box = page.locator(PROMPT)
    box.wait_for(state="visible")
    box.fill(text)
    box.press("Enter")


def _commit(locator: Any, value: str, key: str = "Enter") -> None:
    """Type a new value and wait for the run it causes (a later change made during it could be lost)."""
    with script_run(locator.page):
        locator.fill(value)
        locator.press(key)
    expect(locator).to_have_value(value)


def _choose(page: Any, combobox: Any, option: str) -> None:
    """Pick `option`, typed to filter the list (it draws only its first few), and wait for the run."""
    choose_option(page, combobox, option, typed=True)


def _set_column(page: Any, index: int, base_url: str, model: str, system: str) -> None:
    """Column `index`'s settings: llama.cpp's provider at `base_url`, the model, a system prompt."""
    box = page.get_by_test_id("stExpander").filter(has_text=f"Column {index + 1}:")
    box.get_by_text(f"Column {index + 1}:").click()
    _choose(page, box.get_by_role("combobox", name="Provider"), "llama.cpp server")
    _commit(box.get_by_label("Base URL"), base_url)
    _commit(box.get_by_label("Model", exact=True), model)  # a server of one's own starts with none
    _commit(box.get_by_label("System prompt"), system, key="Tab")
    _commit(box.get_by_label(re.compile("Longest reply in tokens")), REPLY_TOKENS)


def _latest_llm_span(store: ComparisonStore, conversation_id: str) -> Span:
    replies = [
        m
        for m in store.transcript(conversation_id)
        if isinstance(m, AssistantMessage | AssistantMessageToolCall) and m.timeline is not None
    ]
    assert replies, f"no reply with a timeline saved in {conversation_id}"
    timeline = replies[-1].timeline
    assert timeline is not None
    return next(span for span in timeline.spans if span.kind == "llm")


def test_columns_stream_at_once_a_dead_one_fails_then_a_blind_vote(
    streamlit_app: StreamlitApp, page: Any, llama_server_parallel: LocalLlmServer
) -> None:
    open_app(page, f"{streamlit_app.url}/compare")
    main = page  # the chat input sits outside the main block
    expect(main.get_by_text("No votes yet")).to_be_visible(timeout=60_000)
    _commit(main.get_by_role("spinbutton", name="Columns"), "3")
    server = llama_server_parallel.openai_base_url
    _set_column(page, 0, server, "smollm2", "You answer like a pirate.")
    _set_column(page, 1, server, "smollm2", "You answer very formally.")
    dead = f"http://127.0.0.1:{free_port()}/v1"
    _set_column(page, 2, dead, "gone", "You never get to answer.")
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="detached", timeout=LONG)
    _send(page, "Count from one to thirty in words, one number per line.")

    # The dead column says why in words, and the other two still finish with their figures.
    expect(main.get_by_text(re.compile(r"Could not reach llamacpp"))).to_be_visible(timeout=LONG)
    # Drawn once every column has ended: a column's link appears after its answer is saved.
    expect(main.get_by_role("link", name="Continue in Chat")).to_have_count(3, timeout=LONG)
    expect(main.get_by_role("button", name="Stop")).to_have_count(0)
    # The two that answered show how long they took in the one caption format (yiem.amounts).
    took = main.get_by_text(re.compile(r"\d+ out · \d+ cached · .* · [\d.,]+ (ms|s)( ·|$)"))
    expect(took.first).to_be_visible()
    assert took.count() >= 2
    expect(main.get_by_text(re.compile(r"TTFT \d"))).to_have_count(2)  # the dead one got no token
    expect(main.get_by_text("price unknown", exact=False)).to_have_count(3)
    expect(main.get_by_text(re.compile(r"Could not reach llamacpp"))).to_be_visible()
    screenshot(page, "compare_columns")

    # Both streamed at once: each column's first token came before the other column's last one.
    engine = create_store_engine(streamlit_app.database_url)
    saved = ComparisonStore(engine)
    (record,) = saved.list_comparisons()
    pirate, formal = (_latest_llm_span(saved, c.conversation_id) for c in record.columns[:2])
    assert pirate.first_token is not None and formal.first_token is not None
    assert pirate.first_token < formal.end and formal.first_token < pirate.end, (pirate, formal)

    _commit(main.get_by_role("spinbutton", name="Columns"), "2")
    main.get_by_text("Blind vote").click()
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="detached", timeout=LONG)
    _send(page, "Say goodbye.")
    expect(main.get_by_role("button", name="A is better")).to_be_visible(timeout=LONG)
    expect(main.get_by_text("Model A", exact=True)).to_be_visible()
    main.get_by_role("button", name="A is better").click()
    expect(main.get_by_text("Vote recorded")).to_be_visible(timeout=60_000)
    expect(main.locator('[data-testid="stPlotlyChart"]')).to_be_visible(timeout=60_000)
    screenshot(page, "compare_vote")
    votes = VoteStore(engine).votes()
    assert [(v.verdict, v.prompt) for v in votes] == [("left", "Say goodbye.")]
    assert {v.left_model for v in votes} | {v.right_model for v in votes} == {"llamacpp/smollm2"}
