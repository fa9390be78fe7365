"""Issue 12: text holding a lone surrogate (JSON `"\\ud800"`) is replaced, never fatal, wherever a
message is serialised: the store, an export, the OpenAI format sent to a server."""

from __future__ import annotations

import json
from pathlib import Path

from tests.scripted_http import ScriptedServer, openai_text_stream, sse_reply
from yiem import (
    AgentContext,
    AgentToolCall,
    AssistantMessageToolCall,
    LlmModel,
    TextContent,
    ToolResultMessage,
    UserMessage,
    to_openai_messages,
)

LONE = json.loads('"a\\ud800b"')  # what json.loads makes of a server's or a file's "\ud800"
REPLACED = "a\ufffdb"


def _messages() -> list[object]:
    return [
        UserMessage(content=[TextContent(text=LONE)]),
        AssistantMessageToolCall(
            content=[TextContent(text=LONE)],
            tool_calls=[AgentToolCall(id="c1", name="echo", arguments={"text": LONE, "list": [LONE]})],
            error_message=LONE,
        ),
        ToolResultMessage(tool_call_id="c1", tool_name="echo", content=[TextContent(text=LONE)]),
    ]


def test_a_message_serialises_with_the_surrogate_replaced() -> None:
    for message in _messages():
        text = message.to_json()  # type: ignore[attr-defined]
        text.encode("utf-8")
        assert REPLACED in json.loads(text)["content"][0]["text"]
        json.dumps(message.to_json_dict(), ensure_ascii=False).encode("utf-8")  # type: ignore[attr-defined]
    # The fast path is untouched: ordinary text is what pydantic writes.
    plain = UserMessage(content=[TextContent(text="héllo")])
    assert plain.to_json() == plain.model_dump_json(by_alias=True)


def test_the_store_keeps_a_message_with_a_lone_surrogate(tmp_path: Path) -> None:
    from yiem.store import ConversationStore, create_store_engine

    store = ConversationStore(create_store_engine(f"sqlite:///{tmp_path / 'yiem.db'}"))
    conversation = store.create(title="surrogates")
    for message in _messages():
        store.append_message(conversation.id, message)  # type: ignore[arg-type]
    loaded = store.load_messages(conversation.id)
    assert [message.text for message in loaded] == [REPLACED] * 3  # type: ignore[union-attr]
    assert loaded[1].tool_calls[0].arguments == {"text": REPLACED, "list": [REPLACED]}  # type: ignore[union-attr]


def test_an_export_holds_the_replacement(tmp_path: Path) -> None:
    from yiem.chat import Transcript, export_json, export_markdown

    transcript = Transcript(title=LONE, messages=_messages())  # type: ignore[arg-type]
    for exported in (export_json(transcript), export_markdown(transcript)):
        exported.encode("utf-8")
        assert REPLACED in exported


def test_the_openai_format_reaches_the_server(scripted_server: ScriptedServer) -> None:
    from yiem.providers import OpenAIChatClient

    context = AgentContext(messages=_messages())  # type: ignore[arg-type]
    json.dumps(to_openai_messages(context), ensure_ascii=False).encode("utf-8")
    scripted_server.script(sse_reply(openai_text_stream("fine")))
    message = OpenAIChatClient(scripted_server.url + "/v1").complete(LlmModel(id="m"), context)
    assert message.text == "fine", message.error_message
    sent = scripted_server.requests[0].body["messages"]
    assert sent[0]["content"][0]["text"] == REPLACED
    assert json.loads(sent[1]["tool_calls"][0]["function"]["arguments"]) == {
        "text": REPLACED,
        "list": [REPLACED],
    }
