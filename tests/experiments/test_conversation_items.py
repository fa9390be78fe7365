"""Conversation items: a saved Chat conversation "up to here" replays on the embedded model, with the
earlier turns sent, and the two replies and costs side by side; a JSONL line that is not a
conversation is refused in words."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from tests.experiments.models import PRICED, smol_variant
from yiem import Agent, ScriptedLlm
from yiem.experiments import (
    Dataset,
    DatasetError,
    ExperimentDraft,
    ExperimentStore,
    Variant,
    conversation_up_to,
    diff_lines,
    original_diffs,
    reply_diffs,
    run_experiment,
)
from yiem.providers.local_llm import LocalLlmServer
from yiem.store import ConversationStore, create_store_engine, usage
from yiem.types import AssistantMessage, UserMessage


def _chat(tmp_path: Path) -> tuple[ConversationStore, str]:
    """A real Chat conversation of two turns, saved as the Chat page saves it."""
    agent = Agent(ScriptedLlm(["Hello Ann.", "Your name is Ann."]), PRICED)
    list(agent.prompt("Hi, my name is Ann."))
    list(agent.prompt("What is my name?"))
    store = ConversationStore(create_store_engine(f"sqlite:///{tmp_path / 'app.db'}"), owner="ann")
    conversation = store.create(title="names", provider="scripted", model="m")
    for message in agent.state.messages:
        store.append_message(conversation.id, message)
    return store, conversation.id


@pytest.mark.llama
def test_a_chat_conversation_up_to_here_replays_on_another_model(
    tmp_path: Path, llama_server: LocalLlmServer
) -> None:
    store, conversation_id = _chat(tmp_path)
    item = conversation_up_to(conversation_id, store.load_messages(conversation_id), 2)
    assert item.input == "What is my name?" and item.expected == "Your name is Ann."
    assert [m.role for m in item.messages] == ["user", "assistant"]
    baseline = ScriptedLlm(
        [
            {
                "content": [{"type": "text", "text": "Your name is Ann."}],
                "usage": {"inputTokens": 30, "outputTokens": 5},
            }
        ]
    )
    variants = [
        Variant(name="scripted", llm=baseline, model=PRICED),
        smol_variant(llama_server),
    ]
    result = run_experiment(Dataset(items=[item]), variants, [])
    # The earlier turn went with the question: the model answers turn 2 knowing turn 1.
    sent = baseline.requests[0].messages
    assert [m.text for m in sent] == ["Hi, my name is Ann.", "Hello Ann.", "What is my name?"]
    smol = result.outcomes_of("smollm2")[0]
    assert smol.error is None and smol.output.strip()
    assert [m.role for m in smol.messages[:3]] == ["user", "assistant", "user"]
    assert isinstance(smol.messages[-1], AssistantMessage)
    (diff,) = reply_diffs(result, "scripted", "smollm2")
    assert diff.baseline_output == "Your name is Ann." and diff.candidate_output == smol.output
    scripted = result.outcomes_of("scripted")[0]
    assert diff.baseline_cost == scripted.cost and scripted.cost is not None and scripted.cost > 0
    assert diff.candidate_cost is None and diff.cost_change is None  # the local model has no price


def test_a_conversation_from_jsonl_ends_with_the_user(tmp_path: Path) -> None:
    line = (
        '{"id": "c1", "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", '
        '"content": [{"type": "text", "text": "Hello"}]}, {"role": "user", "content": "Again?"}], '
        '"expected": "yes"}\n'
    )
    (item,) = Dataset.from_jsonl(line).items
    assert item.input == "" and isinstance(item.messages[-1], UserMessage)
    assert Dataset.from_jsonl(Dataset(items=[item]).to_jsonl()).items == [item]
    llm = ScriptedLlm(["yes"])
    result = run_experiment(Dataset(items=[item]), [Variant(name="v", llm=llm, model=PRICED)], [])
    assert [m.text for m in llm.requests[0].messages] == ["Hi", "Hello", "Again?"]
    assert len(result.outcomes[0].messages) == 4  # the three given and the reply, no empty turn


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ('{"messages": "hello"}', "Line 1: 'messages' must be a list of messages"),
        ('{"messages": [{"role": "user", "content": 5}]}', "Line 1: message 1 is not a conversation message"),
        (
            '{"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]}',
            "ends with the assistant's reply",
        ),
        (
            '{"messages": [{"role": "toolResult", "toolCallId": "x", "toolName": "t", "content": "r"}]}',
            "answers no tool call before it",
        ),
    ],
)
def test_a_jsonl_line_that_is_not_a_conversation_is_refused_in_words(line: str, words: str) -> None:
    with pytest.raises(DatasetError, match=words):
        Dataset.from_jsonl(line)


def test_up_to_a_turn_that_is_not_there(tmp_path: Path) -> None:
    store, conversation_id = _chat(tmp_path)
    with pytest.raises(DatasetError, match="has 2 user turn"):
        conversation_up_to(conversation_id, store.load_messages(conversation_id), 3)


def test_the_refusal_names_the_files_line_not_the_items_count() -> None:
    good = '{"messages": [{"role": "user", "content": "Hi"}]}'
    text = f'{good}\n\n{good}\n{{"messages": [{{"role": "robot", "content": "x"}}]}}\n'
    with pytest.raises(DatasetError, match=r"^Line 4: message 1 is not a conversation message"):
        Dataset.from_jsonl(text)


def test_a_chat_reply_up_to_here_is_an_experiment_with_its_original_beside_the_replay(tmp_path: Path) -> None:
    chats, conversation_id = _chat(tmp_path)
    messages = chats.load_messages(conversation_id)
    draft = ExperimentDraft.from_chat("names", conversation_id, messages, 3, "ann")
    (item,) = draft.dataset.items
    assert (item.input, [m.text for m in item.messages]) == (
        "What is my name?",
        ["Hi, my name is Ann.", "Hello Ann."],
    )
    original = draft.originals[item.id]
    assert original.text == "Your name is Ann." and original.cost == messages[3].cost.total
    assert draft.chat_items == {item.id: "ann"}
    with pytest.raises(DatasetError, match="is not a reply"):
        ExperimentDraft.from_chat("names", conversation_id, messages, 2, "ann")

    store = ExperimentStore(chats.engine, "ann")
    llm = ScriptedLlm([{"content": [{"type": "text", "text": "You are Ann."}], "usage": {"outputTokens": 4}}])
    result = run_experiment(draft.dataset, [Variant(name="other", llm=llm, model=PRICED)], [], store=store)
    (diff,) = original_diffs(result, draft.originals, "other")
    assert (diff.baseline_output, diff.candidate_output) == ("Your name is Ann.", "You are Ann.")
    assert diff.baseline_cost == original.cost and diff.candidate_cost == result.outcomes[0].cost
    assert diff_lines(diff.baseline_output, diff.candidate_output)[-2:] == [
        "-Your name is Ann.",
        "+You are Ann.",
    ]
    # Only the replay's reply is a new usage row: the conversation's earlier replies were paid in Chat.
    with store.engine.connect() as conn:
        rows = conn.execute(select(usage).where(usage.c.run_id == result.run_id)).all()
    assert [row.output_tokens for row in rows] == [4]
