"""Chat under AppTest: message search with its snippet, temporary chats, titles written by the model."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from streamlit.testing.v1 import AppTest

from yiem.scripted_llm import ScriptedLlm
from yiem.store import ConversationStore, conversations, create_store_engine, messages, usage
from yiem.types import AssistantMessage, LlmModel, ModelCost, TextContent, UserMessage

ROOT = Path(__file__).resolve().parents[2]
PRICED = LlmModel(
    id="scripted-1", provider="scripted", cost=ModelCost(input=3.0, output=15.0), price_known=True
)
USAGE = {"inputTokens": 1000, "outputTokens": 200}


def _app(llm: ScriptedLlm, **state: Any) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["llm_override"] = (llm, PRICED)
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def _count(db_url: str, table: Any) -> int:
    with create_store_engine(db_url).connect() as conn:
        return int(conn.execute(select(func.count()).select_from(table)).scalar_one())


def test_a_word_only_in_a_reply_finds_the_conversation_with_its_snippet(db_url: str) -> None:
    store = ConversationStore(create_store_engine(db_url))
    found = store.create(title="About animals")
    store.add_message(found.id, UserMessage.from_text("Which animal smiles?"))
    reply = "The quokka of *Rottnest* Island [smiles](http://x) a lot."
    store.add_message(found.id, AssistantMessage(content=[TextContent(text=reply)]))
    store.create(title="Other")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.sidebar.text_input(key="search").set_value("rottnest").run()
    assert not at.exception, at.exception
    labels = [b.label for b in at.sidebar.button if b.key and b.key.startswith("open-")]
    assert labels == ["About animals"]
    snippets = [c.value for c in at.sidebar.caption if "quokka" in c.value]
    # The matching word in bold; the reply's own Markdown shown as text, not as a link.
    assert snippets == [r"The quokka of \***Rottnest**\* Island \[smiles\]\(http\://x\) a lot\."], snippets


def test_a_temporary_chat_saves_no_conversation_but_its_usage(db_url: str) -> None:
    at = _app(
        ScriptedLlm([{"content": "Secret answer", "usage": USAGE}, {"content": "Again", "usage": USAGE}])
    )
    at.sidebar.toggle(key="temporary-chat").set_value(True).run()
    assert any("Temporary chat" in c.value for c in at.caption)
    at.chat_input[0].set_value("Nobody should keep this").run()
    assert not at.exception, at.exception
    assert any("Secret answer" in str(m.value) for m in at.markdown)
    at.button(key="regenerate").click().run()
    assert any("Again" in str(m.value) for m in at.markdown)
    assert "c" not in at.query_params
    assert _count(db_url, conversations) == 0
    assert _count(db_url, messages) == 0
    assert _count(db_url, usage) == 2  # both replies are on the Costs page
    with create_store_engine(db_url).connect() as conn:
        assert conn.execute(select(usage.c.conversation_id)).scalars().all() == [None, None]
    # Turned off, the chat starts afresh and is saved again.
    at.sidebar.toggle(key="temporary-chat").set_value(False).run()
    assert not any("Nobody should keep this" in str(m.value) for m in at.markdown)


def test_the_chats_model_titles_the_conversation_after_the_first_reply(db_url: str) -> None:
    titler = ScriptedLlm([{"content": "Apple varieties", "usage": USAGE}])
    at = _app(ScriptedLlm([{"content": "Try a Cox.", "usage": USAGE}]), llm_title_override=titler)
    at.chat_input[0].set_value("which apples are good for baking, and why").run()
    assert not at.exception, at.exception
    # The title is written in the background; the page may already have seen it finish and
    # forgotten the thread, so wait on the store, not on the thread.
    store = ConversationStore(create_store_engine(db_url))
    deadline = time.monotonic() + 60
    while [c.title for c in store.list_conversations()] != ["Apple varieties"]:
        assert time.monotonic() < deadline, store.list_conversations()
        time.sleep(0.05)
    at.run()
    labels = [b.label for b in at.sidebar.button if b.key and b.key.startswith("open-")]
    assert labels == ["Apple varieties"]
    assert _count(db_url, usage) == 2  # the title's request counts too
