"""Several app replicas on one PostgreSQL database: each sees what the others have committed."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import pytest
from sqlalchemy import Engine, create_engine, func, insert, select, text

from yiem.costs import UsageFilter, counts, top_conversations
from yiem.store import SCHEMA_VERSION, ConversationStore, create_store_engine, current_schema_version, usage
from yiem.types import AssistantMessage, LlmModel, LlmUsage, ModelCost, TextContent, UserMessage

T = TypeVar("T")

PRICED = LlmModel(id="gpt-test", provider="openai", cost=ModelCost(input=2.0, output=8.0), price_known=True)


def _reply(text: str) -> AssistantMessage:
    return AssistantMessage(
        content=[TextContent(text=text)],
        api="openai-completions",
        provider="openai",
        model="gpt-test",
        usage=LlmUsage(input_tokens=1000, output_tokens=500),
        duration_ms=800.0,
    )


def _user(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text=text)])


def _at_once(count: int, work: Callable[[int], T]) -> list[T]:
    """Run `work(0..count-1)` in threads released together, as replicas starting at the same moment."""
    gate = threading.Barrier(count)

    def released(index: int) -> T:
        gate.wait(timeout=30)
        return work(index)

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(released, range(count)))


@pytest.fixture
def replicas(postgres_url: str) -> list[Engine]:
    """Two engines (two app replicas, each with its own connection pool) on one database."""
    return [create_store_engine(postgres_url), create_store_engine(postgres_url)]


def test_replicas_see_each_others_conversations_and_usage(replicas: list[Engine]) -> None:
    one, two = (ConversationStore(engine) for engine in replicas)
    conversation = one.create(title="Started on replica one", provider="openai", model="gpt-test")
    one.append_message(conversation.id, _user("hello"))
    one.append_message(conversation.id, _reply("hi from one"), PRICED)

    assert [c.title for c in two.list_conversations()] == ["Started on replica one"]
    assert [m.text for m in two.load_messages(conversation.id) if isinstance(m, AssistantMessage)] == [
        "hi from one"
    ]
    # A shared link opened on the other replica continues the same conversation.
    two.append_message(conversation.id, _user("and again"))
    two.append_message(conversation.id, _reply("hi from two"), PRICED)
    two.rename(conversation.id, "Continued on replica two")
    assert len(one.load_messages(conversation.id)) == 4
    assert one.get(conversation.id).title == "Continued on replica two"

    # Both replies' usage is on the dashboard of either replica: 2 x (1000 x $2 + 500 x $8) / 1M.
    for engine in replicas:
        seen = counts(engine, UsageFilter())
        assert (seen.requests, seen.input_tokens, seen.output_tokens) == (2, 2000, 1000)
        assert seen.cost_total == pytest.approx(0.012)
        top = top_conversations(engine, UsageFilter())
        assert [(row.label, row.totals.requests) for row in top] == [("Continued on replica two", 2)]

    two.delete(conversation.id)
    assert not one.exists(conversation.id)
    assert counts(replicas[0], UsageFilter()).requests == 2  # money spent stays spent


def test_replicas_appending_at_once_keep_every_message_in_one_order(replicas: list[Engine]) -> None:
    stores = [ConversationStore(engine) for engine in replicas]
    conversation = stores[0].create(title="busy")
    per_writer = 15

    def write(index: int) -> list[int]:
        store = stores[index % 2]
        return [store.append_message(conversation.id, _user(f"{index}-{n}")) for n in range(per_writer)]

    positions = _at_once(4, write)
    assert sorted(p for written in positions for p in written) == list(range(4 * per_writer))
    for written in positions:
        assert written == sorted(written)  # each writer's messages keep their order
    texts = [m.content[0].text for m in stores[1].load_messages(conversation.id)]  # type: ignore[union-attr]
    assert sorted(texts) == sorted(f"{i}-{n}" for i in range(4) for n in range(per_writer))


def test_replicas_starting_together_on_an_empty_database_migrate_once(postgres_url: str) -> None:
    """Every replica migrates on start; starting several at once must neither fail nor double the schema."""
    engines = _at_once(4, lambda _index: create_store_engine(postgres_url))
    with engines[0].connect() as conn:
        assert current_schema_version(conn) == SCHEMA_VERSION
        assert conn.execute(select(func.count()).select_from(usage)).scalar() == 0
    store = ConversationStore(engines[3])
    conversation = store.create(title="after the race")
    assert ConversationStore(engines[1]).get(conversation.id).title == "after the race"
    for engine in engines:
        engine.dispose()


def test_a_replica_keeps_working_after_the_server_drops_its_connections(
    replicas: list[Engine], postgres_url: str
) -> None:
    """A database restart, failover or idle timeout ends pooled connections; the next request still works."""
    store = ConversationStore(replicas[0])
    conversation = store.create(title="before the drop")
    store.append_message(conversation.id, _user("kept"))
    admin = create_engine(postgres_url)
    with admin.connect() as conn:
        dropped = conn.execute(
            text(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        ).scalar()
    admin.dispose()
    assert dropped  # the replicas' pooled connections were there, and are gone
    assert [c.title for c in store.list_conversations()] == ["before the drop"]
    assert store.append_message(conversation.id, _user("after")) == 1


def test_a_replica_starts_while_another_is_writing(replicas: list[Engine], postgres_url: str) -> None:
    """Starting (and migrating) neither waits for another replica's write in flight nor holds up the next."""
    store = ConversationStore(replicas[0])
    conversation = store.create(title="busy")
    with replicas[0].connect() as writer, writer.begin():
        writer.execute(insert(usage).values(created_ms=1, conversation_id=conversation.id))  # not committed
        # Waiting for a table lock would fail after 2 s instead of hanging the test.
        starting = create_store_engine(f"{postgres_url}?options=-c%20lock_timeout%3D2000")
        assert ConversationStore(starting).get(conversation.id).title == "busy"
        starting.dispose()
