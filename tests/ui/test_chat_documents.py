"""A prompt with an attached document on the Chat page (AppTest with ScriptedLlm): drawn by the file's
name, and kept with the new version when the prompt is edited."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from yiem.chat import Document, document_in, typed_text, user_message, with_documents
from yiem.scripted_llm import ScriptedLlm
from yiem.store import ConversationStore, create_store_engine
from yiem.types import AssistantMessage, LlmModel, TextContent

ROOT = Path(__file__).resolve().parents[2]
REPORT = Document(name="report.md", text="# Sales\nUp 12% in March.")


def test_an_edited_prompt_keeps_its_document_and_shows_it_by_name(db_url: str) -> None:
    store = ConversationStore(create_store_engine(db_url))
    conversation = store.create(title="Sales")
    store.append_message(conversation.id, with_documents(user_message("Summarise it."), [REPORT]))
    store.append_message(conversation.id, AssistantMessage(content=[TextContent(text="Sales rose.")]))
    llm = ScriptedLlm(["March was good."])
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["llm_override"] = (llm, LlmModel(id="scripted-1", provider="scripted"))
    at.query_params["c"] = conversation.id
    at.run()
    assert not at.exception, at.exception
    # Folded away under its name, not spilled into the prompt's text.
    [prompt] = [m for m in at.chat_message if m.name == "user"]
    assert [e.label for e in prompt.expander] == ["report.md"]
    assert [block.value for block in prompt.markdown] == ["Summarise it."]

    where = f"{conversation.id}-0"
    at.button(key=f"edit-{where}").click().run()
    assert at.text_area(key=f"edit-text-{where}").value == "Summarise it."  # only what was typed
    at.text_area(key=f"edit-text-{where}").set_value("One line on it, please.").run()
    at.button(key=f"edit-send-{where}").click().run()
    assert not at.exception, at.exception
    sent = llm.requests[0].messages[-1]
    assert typed_text(sent) == "One line on it, please."
    assert [document_in(b) for b in sent.content if isinstance(b, TextContent)][1:] == [REPORT]
    assert [m.text for m in store.load_messages(conversation.id)][1:] == ["March was good."]
