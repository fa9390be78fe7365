"""A temporary chat over the real Agent with ScriptedLlm: nothing stored but its usage rows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select

from yiem.agent import Agent
from yiem.chat import ChatSession, ChatSessionError, user_message
from yiem.events import AgentEvent
from yiem.scripted_llm import ScriptedLlm
from yiem.store import ConversationStore, conversations, create_store_engine, messages, usage
from yiem.types import AgentMessage, LlmModel, ModelCost, UserMessage

PRICED = LlmModel(
    id="scripted-1", provider="scripted", cost=ModelCost(input=3.0, output=15.0), price_known=True
)
USAGE = {"inputTokens": 100, "outputTokens": 10}


@pytest.fixture
def store(tmp_path: Path) -> ConversationStore:
    return ConversationStore(create_store_engine(f"sqlite:///{tmp_path / 'chat.db'}"), owner="ann")


def _count(store: ConversationStore, table: object) -> int:
    with store.engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(table)).scalar_one())  # type: ignore[arg-type]


def test_turns_regenerate_and_withdraw_store_only_usage(store: ConversationStore) -> None:
    llm = ScriptedLlm([{"content": reply, "usage": USAGE} for reply in ("One", "Two", "Two again")])
    agent = Agent(llm, PRICED, system_prompt="Be brief.")

    def run(history: list[AgentMessage], prompt: UserMessage) -> Iterator[AgentEvent]:
        agent.state.messages = list(history)
        return agent.prompt(prompt)

    chat = ChatSession(store)
    chat.new(temporary=True)
    for text in ("first", "second"):
        for _event in chat.run(run, user_message(text), PRICED, "Be brief."):
            pass
    prompt = chat.regenerate(chat.last_prompt_index())
    chat.keep_prompt(prompt, PRICED.provider, PRICED.id, "Be brief.")
    for _event in chat.answer(run, PRICED):
        pass
    assert [m.role for m in chat.messages] == ["user", "assistant", "user", "assistant"]
    assert chat.messages[-1].text == "Two again"  # type: ignore[union-attr]
    assert chat.siblings[-1] == (chat.message_ids[-1],)  # no alternative to go back to: none is kept
    assert llm.requests[-1].messages[0].text == "first"  # the model saw the whole temporary chat
    assert chat.conversation_id is None and chat.system_prompt == "Be brief."
    assert (_count(store, conversations), _count(store, messages)) == (0, 0)
    with store.engine.connect() as conn:
        rows = conn.execute(select(usage.c.conversation_id, usage.c.owner, usage.c.cost_total)).all()
    assert [(row[0], row[1]) for row in rows] == [(None, "ann")] * 3
    assert all(row[2] > 0 for row in rows)  # priced: the Costs page sums them
    with pytest.raises(ChatSessionError):
        chat.fork(1)
    chat.keep_prompt(user_message("third"), PRICED.provider, PRICED.id)
    assert chat.withdraw_prompt().text == "third"  # a refused send comes back; still nothing stored
    assert len(chat.messages) == 4 and _count(store, conversations) == 0


def test_opening_a_saved_conversation_ends_the_temporary_chat(store: ConversationStore) -> None:
    saved = store.create(title="Saved")
    chat = ChatSession(store)
    chat.new(temporary=True)
    chat.open(saved.id)
    assert not chat.temporary
    chat.new()
    assert not chat.temporary
