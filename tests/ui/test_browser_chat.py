"""The real app in a real Chromium, chatting with the real embedded model (llama-server + SmolLM2).

Each step waits for the exact state it asserts: a reply is drawn as it streams, then again from the
store, so its first element or its caption can be on the page before all its words are.
Screenshots go to tests/artifacts/.
"""

from __future__ import annotations

import re
import signal
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.fixtures.browser import (
    StreamlitApp,
    click_until,
    open_app,
    open_conversation_id,
    saved_messages,
    screenshot,
    script_run,
    start_streamlit,
)
from yiem.types import AssistantMessage

pytestmark = [pytest.mark.browser, pytest.mark.llama]

CHAT_INPUT = '[data-testid="stChatInputTextArea"]'
MESSAGES = '[data-testid="stChatMessage"]'


def _send(page: Any, text: str) -> None:
    box = page.locator(CHAT_INPUT)
    box.wait_for(state="visible")
    box.fill(text)
    box.press("Enter")


def _wait_idle(page: Any, timeout: float = 120_000) -> None:
    # Streamlit's status widget ("Running…", "Stop") is shown while the script runs.
    page.locator('[data-testid="stChatInputStopButton"]').wait_for(state="detached", timeout=timeout)
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="detached", timeout=timeout)


def _open_settings(page: Any) -> None:
    """Unfold Settings unless it is open (a new chat or a reload folds it)."""
    sidebar = page.locator('[data-testid="stSidebar"]')
    prompt = sidebar.get_by_label("System prompt")
    # Unfolded by a click on a settled page, and again if it stays folded: a click on Settings
    # was once lost in a busy run (ci64, as Bob, after the run that refused Ann's link).
    if not prompt.is_visible():
        click_until(
            page,
            sidebar.get_by_text("Settings", exact=True),
            lambda ms: prompt.wait_for(state="visible", timeout=ms),
            wait=15_000,
        )


def _limit_replies(page: Any, tokens: int) -> None:
    """Set the longest reply in the settings panel: short replies keep tests quick on a busy machine."""
    _open_settings(page)
    longest = page.get_by_label(re.compile("Longest reply in tokens"))
    longest.fill(str(tokens))
    # Done when the run it causes has ended: a prompt typed during that run would be lost.
    with script_run(page):
        longest.press("Enter")
    expect(longest).to_have_value(str(tokens))


def _greedy_replies(page: Any) -> None:
    """Set temperature 0 in the open settings panel, so SmolLM2 gives the same reply each run."""
    sidebar = page.locator('[data-testid="stSidebar"]')
    with script_run(page):
        sidebar.get_by_text("Provider's default temperature").click()
    slider = sidebar.get_by_role("slider")
    slider.focus()
    with script_run(page):
        slider.press("Home")
    expect(slider).to_have_value("0")


def _words(text: str) -> set[str]:
    """The words of a text, so a stored reply compares with its rendered Markdown."""
    return set(re.findall(r"[A-Za-z]{3,}", text))


def _wait_for_words(page: Any, index: int, words: set[str], timeout: float = 30_000) -> str:
    """Wait until chat message `index` shows every one of `words` (as `_words` splits them); its text.

    The text is read in the same step that sees the words: read after it, a rerun drawing the
    messages anew could hand back another message's text (final9 read the prompt's)."""
    seen = page.wait_for_function(
        """([selector, index, words]) => {
            const message = document.querySelectorAll(selector)[index];
            if (!message) return false;
            const text = message.innerText;
            const shown = new Set(text.match(/[A-Za-z]{3,}/g) || []);
            return words.every((word) => shown.has(word)) && text;
        }""",
        arg=[MESSAGES, index, sorted(words)],
        timeout=timeout,
    )
    return str(seen.json_value())


def test_chat_with_the_local_model_then_reload(streamlit_app: StreamlitApp, page: Any) -> None:
    open_app(page, streamlit_app.url)
    _limit_replies(page, 48)
    _send(page, "Say hello in one short sentence.")
    caption = page.get_by_text(re.compile(r"\d+ in · \d+ out · \d+ cached · price unknown"))
    expect(caption.first).to_be_visible(timeout=120_000)
    conversation_id = open_conversation_id(page)
    saved = saved_messages(streamlit_app, conversation_id, 2)
    assert [m.role for m in saved] == ["user", "assistant"], streamlit_app.log()
    assert isinstance(saved[1], AssistantMessage) and saved[1].text.strip()
    assert saved[1].usage.output_tokens <= 48
    reply = _wait_for_words(page, 1, _words(saved[1].text))
    screenshot(page, "chat-local-reply")
    assert _words(saved[1].text) <= _words(reply)

    page.reload()
    expect(page.locator(MESSAGES).nth(0)).to_contain_text("Say hello in one short sentence.")
    assert _words(saved[1].text) <= _words(_wait_for_words(page, 1, _words(saved[1].text)))
    screenshot(page, "chat-after-reload")


def test_stop_keeps_the_partial_reply(streamlit_app: StreamlitApp, page: Any) -> None:
    open_app(page, streamlit_app.url)
    _send(page, "Write a very long story about a dragon and a knight, in ten chapters.")
    # Stop once a few words have streamed in; the words are read here, before the click, because
    # the page redraws the stopped reply with a notice and buttons whose labels are Markdown too (ci41).
    # Only the reply's own words count: not the "Waiting for the model…" caption a slow model brings.
    streamed = page.wait_for_function(
        """() => {
            const all = document.querySelectorAll('[data-testid="stChatMessage"]');
            if (all.length < 2) return false;
            const text = Array.from(all[1].querySelectorAll('[data-testid="stMarkdownContainer"]'))
                .filter((el) => !el.closest('[data-testid="stCaptionContainer"]'))
                .map((el) => el.innerText).join(" ");
            return text.trim().split(/\\s+/).filter(Boolean).length >= 8 && text;
        }""",
        timeout=120_000,
    ).json_value()
    page.locator('[data-testid="stChatInputStopButton"]').click()
    _wait_idle(page, 30_000)
    screenshot(page, "chat-stopped")
    conversation_id = open_conversation_id(page)
    saved = saved_messages(streamlit_app, conversation_id, 2)
    assert [m.role for m in saved] == ["user", "assistant"], streamlit_app.log()
    partial = saved[1]
    assert isinstance(partial, AssistantMessage)
    assert partial.stop_reason == "aborted"
    assert len(partial.text.split()) >= 3
    # Every word on screen before the click was saved (the last one may have been mid-stream).
    on_screen = re.findall(r"[A-Za-z]{3,}", streamed)[:-1]
    assert on_screen and set(on_screen) <= _words(partial.text)
    # Without a click, the page redraws the stopped reply from the store, marked as stopped.
    page.get_by_text(re.compile("Stopped")).first.wait_for(timeout=30_000)
    _wait_idle(page)
    screenshot(page, "chat-stopped-redrawn")

    page.reload()
    assert _words(partial.text) <= _words(_wait_for_words(page, 1, _words(partial.text)))
    page.get_by_text(re.compile("Stopped")).first.wait_for()
    screenshot(page, "chat-stopped-after-reload")


def test_a_killed_app_loses_only_the_reply_in_flight(tmp_path: Path, page: Any) -> None:
    """SIGKILL the server mid-reply, start it again: the prompt is there, the chat goes on."""
    with start_streamlit(tmp_path) as first:
        open_app(page, first.url)
        _send(page, "Write a very long story about a lighthouse keeper.")
        page.wait_for_function(
            """() => {
                const all = document.querySelectorAll('[data-testid="stChatMessage"]');
                return all.length > 1 && all[1].innerText.trim().split(/\\s+/).length >= 5;
            }""",
            timeout=120_000,
        )
        conversation_id = open_conversation_id(page)
        first.process.send_signal(signal.SIGKILL)
        first.process.wait(timeout=30)
    saved = saved_messages(first, conversation_id)
    assert [m.role for m in saved] == ["user"]
    with start_streamlit(tmp_path) as second:
        open_app(page, f"{second.url}/?c={conversation_id}")
        expect(page.locator(MESSAGES).first).to_contain_text("lighthouse keeper")
        screenshot(page, "chat-after-kill")
        _limit_replies(page, 32)
        page.get_by_role("button", name="Regenerate the last reply").click()
        page.get_by_text(re.compile(r"\d+ in · \d+ out")).first.wait_for(timeout=120_000)
        _wait_idle(page)
        assert [m.role for m in saved_messages(second, conversation_id, 2)] == ["user", "assistant"]
