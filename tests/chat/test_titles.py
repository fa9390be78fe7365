"""Titles written by the chat's model after the first reply; the first line when it cannot or should not."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select

from tests.scripted_http import ScriptedServer, json_reply
from yiem.agent import Agent
from yiem.chat import ChatSession, clean_title, user_message, write_title
from yiem.chat._titles import TITLE_INSTRUCTIONS
from yiem.events import AgentEvent
from yiem.llm import LlmClient
from yiem.providers.openai_chat import OpenAIChatClient
from yiem.scripted_llm import ScriptedLlm
from yiem.store import ConversationStore, create_store_engine, usage
from yiem.types import AgentMessage, AssistantMessage, LlmModel, ModelCost, TextContent, UserMessage

PRICED = LlmModel(
    id="scripted-1", provider="scripted", cost=ModelCost(input=3.0, output=15.0), price_known=True
)
PROMPT = "Je voudrais visiter Lyon au printemps, tu conseilles quoi ?\nJ'aime la cuisine."
FIRST_LINE = "Je voudrais visiter Lyon au printemps, tu conseilles quoi ?"


@pytest.fixture
def store(tmp_path: Path) -> ConversationStore:
    return ConversationStore(create_store_engine(f"sqlite:///{tmp_path / 'chat.db'}"))


def _first_reply(store: ConversationStore, model: LlmModel = PRICED) -> ChatSession:
    agent = Agent(ScriptedLlm(["Le Vieux Lyon et les bouchons, bien sûr."]), model)

    def run(history: list[AgentMessage], prompt: UserMessage) -> Iterator[AgentEvent]:
        agent.state.messages = list(history)
        return agent.prompt(prompt)

    chat = ChatSession(store)
    for _event in chat.run(run, user_message(PROMPT), model):
        pass
    return chat


def _usage_rows(store: ConversationStore) -> list[tuple[str, int]]:
    with store.engine.connect() as conn:
        return [(row.stop_reason, row.output_tokens) for row in conn.execute(select(usage))]


def _title(chat: ChatSession, client: LlmClient, model: LlmModel = PRICED) -> str:
    thread = chat.title_after_first_reply(client, model)
    assert thread is not None
    thread.join(timeout=60)
    assert chat.conversation is not None
    return chat.store.get(chat.conversation.id).title


def test_the_model_titles_the_conversation_and_its_usage_counts(store: ConversationStore) -> None:
    chat = _first_reply(store)
    assert chat.conversation is not None and chat.conversation.title == FIRST_LINE
    titler = ScriptedLlm(
        [{"content": "« Printemps à Lyon »", "usage": {"inputTokens": 80, "outputTokens": 6}}]
    )
    assert _title(chat, titler) == "Printemps à Lyon"
    [request] = titler.requests
    assert request.system_prompt == TITLE_INSTRUCTIONS
    assert PROMPT in request.messages[0].text and "bouchons" in request.messages[0].text
    assert request.options is not None and request.options.max_tokens
    assert ("end_turn", 6) in _usage_rows(store)  # the title's tokens are on the Costs page
    assert len(_usage_rows(store)) == 2


@pytest.mark.parametrize(
    "answer",
    [
        "",
        "   ",
        "***",
        "Sure! Here is a title:\nPrintemps à Lyon",
        "A very long title that goes on and on about Lyon, its food, its hills and rivers",
        {"content": "Printemps à", "stopReason": "length"},
        {"stopReason": "error", "errorMessage": "overloaded"},
    ],
)
def test_a_bad_answer_keeps_the_first_line(store: ConversationStore, answer: object) -> None:
    chat = _first_reply(store)
    assert _title(chat, ScriptedLlm([answer])) == FIRST_LINE
    assert len(_usage_rows(store)) == 2  # tokens spent on a useless title still count


def test_a_failing_provider_keeps_the_first_line(store: ConversationStore) -> None:
    server = ScriptedServer()
    try:
        server.script(json_reply({"error": {"message": "model not found", "type": "invalid_request"}}, 404))
        client = OpenAIChatClient(f"{server.url}/v1", api_key="sk-test")
        chat = _first_reply(store)
        assert _title(chat, client) == FIRST_LINE
        assert len(server.requests) >= 1
    finally:
        server.close()
    assert ("error", 0) in _usage_rows(store)


def test_the_embedded_toy_model_is_not_asked(store: ConversationStore) -> None:
    local = LlmModel(id="smollm2", provider="local")
    chat = _first_reply(store, local)
    titler = ScriptedLlm(["Printemps à Lyon"])
    assert chat.title_after_first_reply(titler, local) is None
    assert titler.requests == []


def test_only_the_first_reply_of_an_untouched_title_is_titled(store: ConversationStore) -> None:
    chat = _first_reply(store)
    assert chat.conversation is not None
    store.rename(chat.conversation.id, "Mon voyage")
    chat.reload()
    assert chat.title_after_first_reply(ScriptedLlm(["X"]), PRICED) is None
    chat.messages.append(UserMessage.from_text("Et en été ?"))
    assert chat.title_after_first_reply(ScriptedLlm(["X"]), PRICED) is None


def test_a_rename_while_the_model_writes_wins(store: ConversationStore) -> None:
    chat = _first_reply(store)
    assert chat.conversation is not None
    conversation_id = chat.conversation.id

    def rename_first(_context: object) -> str:
        store.rename(conversation_id, "Mon voyage")
        return "Printemps à Lyon"

    title = write_title(store, conversation_id, FIRST_LINE, ScriptedLlm([rename_first]), PRICED, PROMPT, "…")
    assert title == FIRST_LINE
    assert store.get(conversation_id).title == "Mon voyage"


def test_clean_title_takes_a_labelled_title() -> None:
    reply = AssistantMessage(content=[TextContent(text='Title: "Spring in Lyon".')], stop_reason="end_turn")
    assert clean_title(reply) == "Spring in Lyon"


def test_every_usage_row_is_the_owners(tmp_path: Path) -> None:
    store = ConversationStore(create_store_engine(f"sqlite:///{tmp_path / 'o.db'}"), owner="ann")
    chat = _first_reply(store)
    _title(chat, ScriptedLlm(["Printemps à Lyon"]))
    with store.engine.connect() as conn:
        owners = conn.execute(select(usage.c.owner, func.count()).group_by(usage.c.owner)).all()
    assert [tuple(row) for row in owners] == [("ann", 2)]
