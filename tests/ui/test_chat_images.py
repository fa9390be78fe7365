"""Images on the Chat page that cannot be decoded: a placeholder in words, never a crash."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from yiem.scripted_llm import ScriptedLlm
from yiem.store import ConversationStore, create_store_engine
from yiem.types import (
    AgentToolCall,
    AssistantMessage,
    AssistantMessageToolCall,
    ImageContent,
    LlmModel,
    TextContent,
    ToolResultMessage,
    UserMessage,
)

ROOT = Path(__file__).resolve().parents[2]
MODEL = LlmModel(id="scripted-1", provider="scripted")
NOT_BASE64 = ImageContent(data="%%% not base64 %%%", mime_type="image/png")
NOT_A_PICTURE = ImageContent(data=base64.b64encode(b"no picture here").decode(), mime_type="image/png")
PLACEHOLDER = "cannot be shown"


def _placeholders(at: AppTest) -> list[str]:
    return [caption.value for caption in at.caption if PLACEHOLDER in caption.value]


def test_a_stored_conversation_with_bad_images_opens_with_placeholders(db_url: str) -> None:
    # What an old import or a tool could have stored: it used to crash the page every time it opened.
    store = ConversationStore(create_store_engine(db_url))
    conversation = store.create(title="Bad pictures")
    call = AgentToolCall(id="c1", name="draw")
    store.replace_messages(
        conversation.id,
        [
            UserMessage(content=[TextContent(text="look"), NOT_BASE64, NOT_A_PICTURE]),
            AssistantMessageToolCall(tool_calls=[call]),
            ToolResultMessage(tool_call_id="c1", tool_name="draw", content=[NOT_A_PICTURE]),
            AssistantMessage(content=[TextContent(text="done")]),
        ],
    )
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["c"] = conversation.id
    at.run()
    assert not at.exception, at.exception
    assert len(_placeholders(at)) == 3
    assert "done" in [m.markdown[0].value for m in at.chat_message if m.name == "assistant" and m.markdown]


def test_bad_images_from_an_mcp_tool_show_placeholders_in_chat(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = str(ROOT / "tests" / "mcp_servers" / "bad_images.py")
    (tmp_path / "mcp.json").write_text(
        json.dumps({"mcpServers": {"painter": {"command": sys.executable, "args": [server]}}})
    )
    monkeypatch.setenv("YIEM_MCP_CONFIG", str(tmp_path / "mcp.json"))
    llm = ScriptedLlm([{"toolCalls": [{"id": "c1", "name": "draw", "arguments": {}}]}, "Drawn."])
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["llm_override"] = (llm, MODEL)
    at.run()
    at.sidebar.multiselect(key="set-tools").set_value(["draw"]).run()
    at.chat_input[0].set_value("draw me something").run()
    assert not at.exception, at.exception
    assert "Drawn." in [m.markdown[0].value for m in at.chat_message if m.markdown]
    drawn = next(e for e in at.expander if "draw" in e.label)
    assert len([c for c in drawn.caption if PLACEHOLDER in c.value]) == 2


@pytest.mark.parametrize(
    "body",
    [
        b'{"messages": ' + b"[" * 50_000 + b"]" * 50_000 + b"}",
        b'{"messages": [], "version": ' + b"7" * 5000 + b"}",
        json.dumps({"messages": [{"role": "user", "content": [NOT_A_PICTURE.to_json_dict()]}]}).encode(),
    ],
    ids=["deep", "huge-int", "not-a-picture"],
)
def test_a_hostile_import_from_the_sidebar_is_refused_in_words(db_url: str, body: bytes) -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.sidebar.file_uploader(key="import-file").set_value(("hostile.json", body, "application/json")).run()
    at.sidebar.button(key="import").click().run()
    assert not at.exception, at.exception
    assert [e.value for e in at.sidebar.error if e.value.startswith("This file cannot be imported: ")]
    assert ConversationStore(create_store_engine(db_url)).list_conversations() == []
