"""Saved comparisons: hidden transcripts, usage rows tagged "compare", reopening, owners apart."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, select

from tests.scripted_http import Reply, ScriptedServer, openai_text_stream
from yiem import costs
from yiem.compare import COMPARE_SOURCE, Comparison, ComparisonNotFoundError, ComparisonStore
from yiem.model_setup import ModelSetup
from yiem.store import ConversationStore, create_store_engine, usage
from yiem.types import AssistantMessage, UserMessage

USAGE = {"prompt_tokens": 12, "completion_tokens": 3}


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    scripted = ScriptedServer()
    yield scripted
    scripted.close()


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    return create_store_engine(f"sqlite:///{tmp_path / 'yiem.db'}")


def _answer(word: str) -> Reply:
    return Reply(headers={"Content-Type": "text/event-stream"}, chunks=openai_text_stream(word, usage=USAGE))


def _column(server: ScriptedServer, system: str) -> ModelSetup:
    return ModelSetup(
        provider="llamacpp", base_url=f"{server.url}/v1", model_id="scripted", system_prompt=system
    )


def _run(comparison: Comparison, prompt: str) -> None:
    comparison.start(prompt)
    assert comparison.wait(timeout=30)
    assert [c.status for c in comparison.columns] == ["done"] * len(comparison.columns), [
        c.error for c in comparison.columns
    ]


def test_a_comparison_is_saved_with_hidden_transcripts_and_compare_usage(
    server: ScriptedServer, engine: Engine
) -> None:
    server.script(_answer("ahoy"), _answer("ahoy"))
    store = ComparisonStore(engine)
    comparison = Comparison([_column(server, "pirate"), _column(server, "formal")], store=store)
    _run(comparison, "Say hello.")
    assert comparison.record_id is not None
    record = store.get(comparison.record_id)
    assert record.title == "Say hello." and record.prompts == ["Say hello."]
    assert [c.spec.system_prompt for c in record.columns] == ["pirate", "formal"]
    ids = [c.conversation_id for c in record.columns]
    assert ids == [c.conversation_id for c in comparison.columns] and len(set(ids)) == 2
    # Kept out of Chat's list, but each holds its column's prompt and answer.
    chat = ConversationStore(engine)
    assert chat.list_conversations() == []
    for conversation_id in ids:
        assert chat.get(conversation_id).hidden
        saved = chat.load_messages(conversation_id)
        assert [type(m) for m in saved] == [UserMessage, AssistantMessage]
        assert saved[1].text == "ahoy"
    # One usage row per column, tagged with the page; the Costs filter counts exactly those.
    with engine.connect() as conn:
        rows = conn.execute(select(usage.c.conversation_id, usage.c.source)).all()
    assert sorted(rows) == sorted((cid, COMPARE_SOURCE) for cid in ids)
    everything = costs.UsageFilter(start_ms=0, end_ms=2**62)
    assert costs.counts(engine, everything).requests == 2
    # A reply made in Chat counts in all usage, never under the Compare page.
    in_chat = chat.create(title="a chat")
    chat.append_message(in_chat.id, saved[1], None)
    assert costs.counts(engine, everything).requests == 3
    compare_only = costs.UsageFilter(start_ms=0, end_ms=2**62, source=COMPARE_SOURCE)
    assert costs.counts(engine, compare_only).requests == 2
    assert costs.source_options(engine) == [COMPARE_SOURCE]
    assert costs.source_options(engine, "someone@example.com") == []


def test_a_reopened_comparison_shows_its_last_turn_and_continues_each_conversation(
    server: ScriptedServer, engine: Engine
) -> None:
    server.script(_answer("first"), _answer("first"))
    store = ComparisonStore(engine)
    comparison = Comparison([_column(server, "a"), _column(server, "b")], store=store)
    _run(comparison, "One?")
    assert comparison.record_id is not None
    assert [r.id for r in store.list_comparisons()] == [comparison.record_id]

    reopened = Comparison.reopen(store.get(comparison.record_id), store)
    assert [c.text for c in reopened.columns] == ["first", "first"]
    assert all(isinstance(c.turn[0], UserMessage) for c in reopened.columns)
    server.script(_answer("second"), _answer("second"))
    _run(reopened, "Two?")
    # Each column's request carried its own earlier turn under its own system prompt.
    for request in server.requests[2:]:
        sent = request.body["messages"]
        assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
        assert sent[1]["content"] in ("One?", [{"type": "text", "text": "One?"}])
    assert store.get(comparison.record_id).prompts == ["One?", "Two?"]
    for column in reopened.columns:
        assert column.conversation_id is not None
        assert len(store.transcript(column.conversation_id)) == 4


def test_another_person_cannot_read_or_list_a_comparison(server: ScriptedServer, engine: Engine) -> None:
    server.script(_answer("x"), _answer("x"))
    mine = ComparisonStore(engine, "ann@example.com")
    comparison = Comparison([_column(server, "a"), _column(server, "b")], store=mine)
    _run(comparison, "Hi")
    assert comparison.record_id is not None
    theirs = ComparisonStore(engine, "bob@example.com")
    assert theirs.list_comparisons() == []
    with pytest.raises(ComparisonNotFoundError, match="not yours"):
        theirs.get(comparison.record_id)
    with pytest.raises(ComparisonNotFoundError):
        theirs.add_prompt(comparison.record_id, "sneaky")
    assert mine.get(comparison.record_id).prompts == ["Hi"]
