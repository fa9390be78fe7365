"""The real app in a real Chromium, chatting with the real embedded model (llama-server + SmolLM2).

Screenshots go to tests/artifacts/.
"""

from __future__ import annotations

import re
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.browser import StreamlitApp, screenshot, start_streamlit
from yiem.store import ConversationStore, create_store_engine
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


def _limit_replies(page: Any, tokens: int) -> None:
    """Set the longest reply in the settings panel: short replies keep tests quick on a busy machine."""
    page.get_by_text("Settings", exact=True).click()
    longest = page.get_by_label(re.compile("Longest reply in tokens"))
    longest.fill(str(tokens))
    longest.press("Enter")
    page.wait_for_timeout(500)  # the number input commits on Enter and reruns the script
    _wait_idle(page)


def _words(text: str) -> set[str]:
    """The words of a text, so a stored reply compares with its rendered Markdown."""
    return set(re.findall(r"[A-Za-z]{3,}", text))


def _saved_messages(app: StreamlitApp, conversation_id: str, count: int = 0) -> list[Any]:
    """The stored messages, once there are at least `count` (the app saves them as each one ends)."""
    store = ConversationStore(create_store_engine(app.database_url))
    deadline = time.monotonic() + 30
    while True:
        found = store.load_messages(conversation_id)
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def test_chat_with_the_local_model_then_reload(streamlit_app: StreamlitApp, page: Any) -> None:
    page.goto(streamlit_app.url)
    _limit_replies(page, 48)
    _send(page, "Say hello in one short sentence.")
    page.locator(MESSAGES).nth(1).wait_for(timeout=120_000)
    caption = page.get_by_text(re.compile(r"\d+ in · \d+ out · \d+ cached · price unknown"))
    caption.first.wait_for(timeout=120_000)
    _wait_idle(page)
    reply = page.locator(MESSAGES).nth(1).inner_text()
    screenshot(page, "chat-local-reply")
    assert "?c=" in page.url, streamlit_app.log()
    conversation_id = page.url.split("?c=")[1].split("&")[0]
    saved = _saved_messages(streamlit_app, conversation_id, 2)
    assert [m.role for m in saved] == ["user", "assistant"]
    assert isinstance(saved[1], AssistantMessage) and saved[1].text.strip()
    assert saved[1].usage.output_tokens <= 48
    assert _words(saved[1].text) <= _words(reply)

    page.reload()
    page.locator(MESSAGES).nth(1).wait_for()
    assert "Say hello in one short sentence." in page.locator(MESSAGES).nth(0).inner_text()
    assert _words(saved[1].text) <= _words(page.locator(MESSAGES).nth(1).inner_text())
    assert page.get_by_text("Say hello in one short sentence.", exact=True).count() >= 1
    screenshot(page, "chat-after-reload")


def test_stop_keeps_the_partial_reply(streamlit_app: StreamlitApp, page: Any) -> None:
    page.goto(streamlit_app.url)
    _send(page, "Write a very long story about a dragon and a knight, in ten chapters.")
    reply = page.locator(MESSAGES).nth(1)
    # Stop once a few words have streamed in.
    # Only the reply's own words count: not the "Waiting for the model…" caption a slow model brings.
    page.wait_for_function(
        """() => {
            const all = document.querySelectorAll('[data-testid="stChatMessage"]');
            if (all.length < 2) return false;
            const text = Array.from(all[1].querySelectorAll('[data-testid="stMarkdownContainer"]'))
                .filter((el) => !el.closest('[data-testid="stCaptionContainer"]'))
                .map((el) => el.innerText).join(" ");
            return text.trim().split(/\\s+/).filter(Boolean).length >= 8;
        }""",
        timeout=120_000,
    )
    page.locator('[data-testid="stChatInputStopButton"]').click()
    _wait_idle(page, 30_000)
    shown = " ".join(
        reply.locator(
            '[data-testid="stMarkdownContainer"]:not([data-testid="stCaptionContainer"] *)'
        ).all_inner_texts()
    )
    screenshot(page, "chat-stopped")
    conversation_id = page.url.split("?c=")[1].split("&")[0]
    saved = _saved_messages(streamlit_app, conversation_id, 2)
    assert [m.role for m in saved] == ["user", "assistant"], streamlit_app.log()
    partial = saved[1]
    assert isinstance(partial, AssistantMessage)
    assert partial.stop_reason == "aborted"
    assert len(partial.text.split()) >= 3
    # What was on screen when Stop landed is what was saved (the last word may have been mid-stream).
    on_screen = re.findall(r"[A-Za-z]{3,}", shown)[:-1]
    assert on_screen and set(on_screen) <= _words(partial.text)
    # Without a click, the page redraws the stopped reply from the store, marked as stopped.
    page.get_by_text(re.compile("Stopped")).first.wait_for(timeout=30_000)
    _wait_idle(page)
    screenshot(page, "chat-stopped-redrawn")

    page.reload()
    page.locator(MESSAGES).nth(1).wait_for()
    assert _words(partial.text) <= _words(page.locator(MESSAGES).nth(1).inner_text())
    page.get_by_text(re.compile("Stopped")).first.wait_for()
    screenshot(page, "chat-stopped-after-reload")


def test_a_killed_app_loses_only_the_reply_in_flight(tmp_path: Path, page: Any) -> None:
    """SIGKILL the server mid-reply, start it again: the prompt is there, the chat goes on."""
    with start_streamlit(tmp_path) as first:
        page.goto(first.url)
        _send(page, "Write a very long story about a lighthouse keeper.")
        page.wait_for_function(
            """() => {
                const all = document.querySelectorAll('[data-testid="stChatMessage"]');
                return all.length > 1 && all[1].innerText.trim().split(/\\s+/).length >= 5;
            }""",
            timeout=120_000,
        )
        conversation_id = page.url.split("?c=")[1].split("&")[0]
        first.process.send_signal(signal.SIGKILL)
        first.process.wait(timeout=30)
    saved = _saved_messages(first, conversation_id)
    assert [m.role for m in saved] == ["user"]
    with start_streamlit(tmp_path) as second:
        page.goto(f"{second.url}/?c={conversation_id}")
        page.locator(MESSAGES).first.wait_for()
        assert "lighthouse keeper" in page.locator(MESSAGES).first.inner_text()
        screenshot(page, "chat-after-kill")
        _limit_replies(page, 32)
        page.get_by_role("button", name="Regenerate the last reply").click()
        page.get_by_text(re.compile(r"\d+ in · \d+ out")).first.wait_for(timeout=120_000)
        _wait_idle(page)
        assert [m.role for m in _saved_messages(second, conversation_id, 2)] == ["user", "assistant"]
