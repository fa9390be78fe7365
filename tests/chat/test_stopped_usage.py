"""A reply stopped mid-stream costs what it used: an estimate, marked as such in the store."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from yiem.agent import Agent
from yiem.chat import ChatSession, RunAgent, user_message
from yiem.events import AgentEvent, MessageUpdateEvent
from yiem.model_setup import ModelSetup, connect
from yiem.providers.local_llm import LocalLlmServer, count_tokens
from yiem.scripted_llm import ScriptedLlm
from yiem.store import ConversationStore, create_store_engine, usage
from yiem.types import AgentMessage, AssistantMessage, LlmModel, ModelCost, UserMessage

PRICED = LlmModel(
    id="scripted-1", provider="scripted", cost=ModelCost(input=3.0, output=15.0), price_known=True
)


@pytest.fixture
def store(tmp_path: Path) -> ConversationStore:
    return ConversationStore(create_store_engine(f"sqlite:///{tmp_path / 'chat.db'}"))


def _runner(agent: Agent) -> RunAgent:
    def run(history: list[AgentMessage], prompt: UserMessage) -> Iterator[AgentEvent]:
        agent.state.messages = list(history)
        return agent.prompt(prompt.content[0].text)  # type: ignore[union-attr]

    return run


def _stop_after(events: Iterator[AgentEvent], agent: Agent, deltas: int) -> None:
    """Read the run, pressing Stop once `deltas` text deltas have arrived; read on to its end."""
    seen = 0
    for event in events:
        if isinstance(event, MessageUpdateEvent) and event.kind == "text":
            seen += 1
            if seen == deltas:
                agent.abort("Stopped by the user")


def _usage_rows(store: ConversationStore) -> list[dict[str, object]]:
    with store.engine.connect() as conn:
        return [dict(row._mapping) for row in conn.execute(select(usage))]


def test_a_stopped_reply_of_a_remote_model_is_estimated_from_its_characters(store: ConversationStore) -> None:
    agent = Agent(ScriptedLlm(["word " * 200], chunk_size=5, delay=0.01), PRICED, system_prompt="Be brief.")
    chat = ChatSession(store)
    _stop_after(
        chat.run(_runner(agent), user_message("Tell me a long story."), PRICED, "Be brief."), agent, 3
    )
    reply = chat.messages[-1]
    assert isinstance(reply, AssistantMessage) and reply.stop_reason == "aborted"
    partial = reply.text
    assert 0 < len(partial) < len("word " * 200)
    [row] = _usage_rows(store)
    assert row["estimated"] is True or row["estimated"] == 1
    assert row["output_tokens"] == math.ceil(len(partial) / 4)
    assert row["input_tokens"] == math.ceil(len("Be brief.\nTell me a long story.") / 4)
    # Priced like any reply, so the Costs page counts it.
    assert row["cost_total"] == pytest.approx((row["input_tokens"] * 3.0 + row["output_tokens"] * 15.0) / 1e6)


def test_a_finished_reply_is_not_an_estimate(store: ConversationStore) -> None:
    reply = {"role": "assistant", "content": "done", "usage": {"inputTokens": 7, "outputTokens": 1}}
    agent = Agent(ScriptedLlm([reply]), PRICED)
    chat = ChatSession(store)
    list(chat.run(_runner(agent), user_message("hi"), PRICED))
    [row] = _usage_rows(store)
    assert not row["estimated"] and (row["input_tokens"], row["output_tokens"]) == (7, 1)


@pytest.mark.llama
def test_a_stopped_reply_of_the_embedded_model_is_counted_by_its_tokenizer(
    store: ConversationStore, llama_server: LocalLlmServer
) -> None:
    settings = ModelSetup(provider="llamacpp", base_url=llama_server.openai_base_url, model_id="smollm2")
    client, _ = connect(settings)
    model = llama_server.llm_model()
    agent = Agent(client, model)
    chat = ChatSession(store)
    prompt = "Write a long story about a lighthouse keeper and the sea, in many paragraphs."
    _stop_after(chat.run(_runner(agent), user_message(prompt), model), agent, 5)
    reply = chat.messages[-1]
    assert isinstance(reply, AssistantMessage) and reply.stop_reason == "aborted", reply
    assert reply.text
    [row] = _usage_rows(store)
    assert row["estimated"]
    # Counted by the server's own tokenizer, not by the characters rule.
    assert row["output_tokens"] == count_tokens(llama_server.base_url, reply.text) > 0
    assert row["input_tokens"] == count_tokens(llama_server.base_url, prompt) > 0
