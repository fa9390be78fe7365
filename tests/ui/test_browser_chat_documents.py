"""Attaching documents in a real Chromium with the embedded model (llama-server + SmolLM2).

SmolLM2 is a toy, but asked to repeat the document's first sentence it quotes it: 3 of 3 at the
default temperature and at 0, for this prompt and three others (measured 2026-12-02 against the
embedded llama-server). So the reply must hold the file's invented word, which only the file has.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.fixtures.browser import StreamlitApp, open_app, open_conversation_id, saved_messages, screenshot
from tests.fixtures.documents import minimal_pdf
from tests.ui.test_browser_chat import MESSAGES, _limit_replies, _send, _wait_idle
from yiem.chat import Document, document_in, typed_text
from yiem.types import AssistantMessage, TextContent, UserMessage

pytestmark = [pytest.mark.browser, pytest.mark.llama]

WORD = "Quokkazanzibar"  # in no model's vocabulary as one word: it can only come from the file
QUESTION = "Repeat the first sentence of the document word for word."


def test_an_attached_pdf_goes_to_the_model_as_a_named_block_and_the_answer_quotes_it(
    streamlit_app: StreamlitApp, page: Any, tmp_path: Path
) -> None:
    good = tmp_path / "island-notes.pdf"
    good.write_bytes(minimal_pdf([f"The island mascot is called {WORD}.", "It eats leaves."]))
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Catalog")  # cut off: no pages, no trailer
    open_app(page, streamlit_app.url)
    _limit_replies(page, 32)  # the sentence to quote is about 14 tokens

    page.get_by_text("Attach documents", exact=True).click()
    page.locator('.st-key-attach-0 input[type="file"]').set_input_files([str(good), str(broken)])
    # Before sending: the readable file's size in tokens, and why the other cannot be sent.
    expect(page.get_by_text(re.compile(r"island-notes\.pdf: about \d+ tokens"))).to_be_visible()
    expect(page.get_by_text(re.compile("“broken.pdf” cannot be read as a PDF"))).to_be_visible()
    _wait_idle(page)
    screenshot(page, "chat-documents-attached")

    _send(page, QUESTION)
    conversation_id = open_conversation_id(page)
    expect(page.get_by_text(re.compile(r"\d+ in · \d+ out")).first).to_be_visible(timeout=120_000)
    saved = saved_messages(streamlit_app, conversation_id, 2)
    assert [m.role for m in saved] == ["user", "assistant"], streamlit_app.log()
    prompt, reply = saved
    assert isinstance(prompt, UserMessage) and isinstance(reply, AssistantMessage)
    assert typed_text(prompt) == QUESTION
    documents = [document_in(b) for b in prompt.content if isinstance(b, TextContent)]
    assert documents[1:] == [
        Document(name="island-notes.pdf", text=f"The island mascot is called {WORD}.\nIt eats leaves.")
    ]
    assert not reply.error_message, reply
    assert WORD in reply.text, reply.text  # the answer quotes the document
    assert reply.usage.input_tokens > 0

    # The prompt shows the file by its name, its text folded away; the box is empty for the next one.
    expect(page.locator(MESSAGES).nth(0).get_by_text("island-notes.pdf")).to_be_visible()
    expect(page.locator(MESSAGES).nth(1)).to_contain_text(WORD)
    _wait_idle(page)
    expect(page.locator(".st-key-attach-1")).to_be_attached()
    expect(page.get_by_text(re.compile(r"island-notes\.pdf: "))).to_have_count(0)
    screenshot(page, "chat-documents-answered")

    # Now that the model runs, a file is counted by its tokenizer and checked against its window.
    huge = tmp_path / "huge.txt"
    huge.write_text(" ".join(f"item{n}" for n in range(6000)))
    page.get_by_text("Attach documents", exact=True).click()
    page.locator('.st-key-attach-1 input[type="file"]').set_input_files(str(huge))
    refused = page.get_by_text(
        re.compile(r"“huge\.txt” is about [\d.,]+[kM]? tokens, more than the model's whole")
    )
    expect(refused).to_be_visible(timeout=60_000)
    expect(refused).to_contain_text(
        re.compile(r"context window \([\d.,]+[kM]? tokens\), so it cannot be sent")
    )
