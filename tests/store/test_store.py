"""The store: schema versions, conversations, messages written one at a time, usage rows."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine, inspect, select, text

from yiem.store import (
    SCHEMA_VERSION,
    ConversationNotFoundError,
    ConversationStore,
    SchemaTooNewError,
    StoreError,
    StoreUnavailableError,
    create_store_engine,
    current_schema_version,
    usage,
)
from yiem.types import (
    AgentToolCall,
    AssistantMessage,
    AssistantMessageToolCall,
    ImageContent,
    LlmModel,
    LlmUsage,
    ModelCost,
    ReasoningContent,
    TextContent,
    ToolResultMessage,
    UserMessage,
)


@pytest.fixture
def db_url(any_store_url: str) -> str:
    """Every store test runs on SQLite and again on PostgreSQL (tests/fixtures/postgres.py)."""
    return any_store_url


@pytest.fixture
def store(db_url: str) -> ConversationStore:
    return ConversationStore(create_store_engine(db_url))


PRICED = LlmModel(
    id="gpt-test",
    provider="openai",
    cost=ModelCost(input=2.0, output=8.0, cache_read=0.5, cache_write=0.0),
    price_known=True,
)


def _reply(text: str = "hello", **fields: object) -> AssistantMessage:
    return AssistantMessage(
        content=[TextContent(text=text)],
        api="openai-completions",
        provider="openai",
        model="gpt-test",
        usage=LlmUsage(input_tokens=1000, output_tokens=500, cache_read_tokens=200, reasoning_tokens=50),
        **fields,  # type: ignore[arg-type]
    )


def test_fresh_database_is_stamped_with_the_latest_version(db_url: str) -> None:
    engine = create_store_engine(db_url)
    with engine.connect() as conn:
        assert current_schema_version(conn) == SCHEMA_VERSION
        assert {"conversations", "messages", "usage", "schema_version"} <= set(
            inspect(conn).get_table_names()
        )


# The first skeleton's tables (no version table, no newer indexes), as each dialect spelled them.
_SKELETON = """
CREATE TABLE conversations (id VARCHAR(36) PRIMARY KEY, title TEXT NOT NULL,
  provider VARCHAR(100) NOT NULL, model VARCHAR(200) NOT NULL, system_prompt TEXT NOT NULL,
  created_ms BIGINT NOT NULL, updated_ms BIGINT NOT NULL);
CREATE TABLE messages (id {serial}, conversation_id VARCHAR(36) NOT NULL,
  position INTEGER NOT NULL, role VARCHAR(20) NOT NULL, data TEXT NOT NULL,
  created_ms BIGINT NOT NULL);
CREATE UNIQUE INDEX ix_messages_conversation_position ON messages (conversation_id, position);
INSERT INTO conversations VALUES ('c1', 'kept', '', '', '', 1, 1)
"""


def test_unversioned_database_from_before_migrations_is_upgraded(db_url: str) -> None:
    """A database made by the first skeleton (no version table, no newer indexes) migrates in place."""
    old = create_engine(db_url)
    serial = "SERIAL PRIMARY KEY" if old.dialect.name == "postgresql" else "INTEGER PRIMARY KEY"
    with old.begin() as conn:
        for statement in _SKELETON.format(serial=serial).split(";"):
            conn.execute(text(statement))
    old.dispose()
    engine = create_store_engine(db_url)
    with engine.connect() as conn:
        assert current_schema_version(conn) == SCHEMA_VERSION
        assert "ix_conversations_updated" in {i["name"] for i in inspect(conn).get_indexes("conversations")}
        assert "usage" in inspect(conn).get_table_names()
    assert ConversationStore(engine).get("c1").title == "kept"
    assert ConversationStore(engine).append_message("c1", _reply(), PRICED) == 0
    ConversationStore(engine).update_settings(
        "c1", provider="p" * 150, model="m" * 300
    )  # once VARCHAR(100/200)
    assert ConversationStore(engine).get("c1").model == "m" * 300


def test_database_from_a_newer_yiem_is_refused(db_url: str) -> None:
    engine = create_store_engine(db_url)
    with engine.begin() as conn:
        conn.execute(text("UPDATE schema_version SET version = :v"), {"v": SCHEMA_VERSION + 5})
    with pytest.raises(SchemaTooNewError, match="newer than this yiem"):
        create_store_engine(db_url)


def test_reopening_keeps_data_and_version(db_url: str) -> None:
    first = ConversationStore(create_store_engine(db_url))
    conversation = first.create(title="persisted")
    second = ConversationStore(create_store_engine(db_url))
    assert second.get(conversation.id).title == "persisted"


def test_conversations_create_list_search_rename_delete(store: ConversationStore) -> None:
    alpha = store.create(title="Alpha plans", provider="openai", model="gpt-test", system_prompt="Be brief.")
    time.sleep(0.005)  # distinct `updated` milliseconds, so "newest first" has one answer
    beta = store.create(title="beta 100% done")
    time.sleep(0.005)
    store.create(title="gamma_x")
    assert store.list_conversations()[0].title == "gamma_x"  # newest first
    assert [c.id for c in store.list_conversations("ALPHA")] == [alpha.id]
    assert [c.id for c in store.list_conversations("100%")] == [beta.id]
    assert [c.id for c in store.list_conversations("%")] == [beta.id]  # LIKE wildcards are literal
    assert store.list_conversations("a_p") == []  # `_` would match the space in "Alpha plans"
    time.sleep(0.005)
    store.rename(alpha.id, "Renamed")
    assert store.get(alpha.id).title == "Renamed"
    assert store.get(alpha.id).system_prompt == "Be brief."
    assert store.list_conversations()[0].id == alpha.id  # renaming touches `updated`
    store.delete(beta.id)
    assert not store.exists(beta.id)
    with pytest.raises(ConversationNotFoundError):
        store.get(beta.id)
    with pytest.raises(ConversationNotFoundError):
        store.rename(beta.id, "x")
    with pytest.raises(ConversationNotFoundError):
        store.delete(beta.id)


def test_update_settings_changes_only_what_is_given(store: ConversationStore) -> None:
    conversation = store.create(provider="openai", model="a", system_prompt="s")
    store.update_settings(conversation.id, model="b")
    got = store.get(conversation.id)
    assert (got.provider, got.model, got.system_prompt) == ("openai", "b", "s")


def test_every_message_type_round_trips_as_typed_messages(store: ConversationStore) -> None:
    """SP-001..SP-004 messages come back from the store exactly as saved, in order."""
    conversation = store.create()
    saved = [
        UserMessage(
            content=[TextContent(text="sum 2 and 3"), ImageContent(data="aGk=", mime_type="image/png")]
        ),
        AssistantMessageToolCall(
            content=[ReasoningContent(text="use the tool")],
            tool_calls=[AgentToolCall(id="call_1", name="get-sum", arguments={"a": 2, "b": 3})],
        ),
        ToolResultMessage(
            tool_call_id="call_1", tool_name="get-sum", content=[TextContent(text="5")], details={"n": 5}
        ),
        _reply("It is 5."),
    ]
    positions = [store.append_message(conversation.id, message, PRICED) for message in saved]
    assert positions == [0, 1, 2, 3]
    loaded = store.load_messages(conversation.id)
    assert [type(m) for m in loaded] == [type(m) for m in saved]
    assert [m.model_dump() for m in loaded] == [m.model_dump() for m in saved]


def test_messages_are_stored_as_json_with_the_spec_field_names(store: ConversationStore) -> None:
    conversation = store.create()
    store.append_message(conversation.id, ToolResultMessage(tool_call_id="c", tool_name="t", is_error=True))
    with store.engine.connect() as conn:
        data = conn.execute(text("SELECT data, role FROM messages")).one()
    assert '"toolCallId":"c"' in data.data and '"isError":true' in data.data
    assert data.role == "toolResult"


def test_a_usage_row_per_assistant_message_with_cost_from_the_model(store: ConversationStore) -> None:
    conversation = store.create()
    store.append_message(conversation.id, UserMessage(content=[TextContent(text="hi")]))
    store.append_message(
        conversation.id, _reply(duration_ms=1234.0, ttft_ms=56.0, stop_reason="length"), PRICED
    )
    store.append_message(
        conversation.id,
        _reply("", stop_reason="error", error_message="HTTP 401: invalid key"),
        LlmModel(id="local", provider="llama.cpp", price_known=False),
    )
    with store.engine.connect() as conn:
        rows = conn.execute(select(usage).order_by(usage.c.id)).mappings().all()
    assert len(rows) == 2
    first, second = rows
    assert first["conversation_id"] == conversation.id
    assert (first["provider"], first["api"], first["model"]) == ("openai", "openai-completions", "gpt-test")
    assert (first["input_tokens"], first["output_tokens"], first["cache_read_tokens"]) == (1000, 500, 200)
    assert first["reasoning_tokens"] == 50
    assert first["cost_input"] == pytest.approx(0.002)
    assert first["cost_output"] == pytest.approx(0.004)
    assert first["cost_cache_read"] == pytest.approx(0.0001)
    assert first["cost_total"] == pytest.approx(0.0061)
    assert first["price_known"] is True
    assert (first["latency_ms"], first["ttft_ms"], first["stop_reason"]) == (1234.0, 56.0, "length")
    assert first["error"] is None
    assert second["price_known"] is False and second["cost_total"] == 0.0
    assert (second["stop_reason"], second["error"]) == ("error", "HTTP 401: invalid key")


def _keeps_long_names(store: ConversationStore) -> None:
    provider, model = "https://" + "h" * 300 + "/v1", "/models/" + "m" * 500 + ".gguf"
    conversation = store.create(provider=provider, model=model)
    reply = _reply(stop_reason="s" * 80).model_copy(
        update={"provider": provider, "model": model, "api": "a" * 80}
    )
    store.append_message(conversation.id, reply, LlmModel(id=model, provider=provider))
    assert (store.get(conversation.id).provider, store.get(conversation.id).model) == (provider, model)
    with store.engine.connect() as conn:
        row = conn.execute(
            select(usage.c.provider, usage.c.model, usage.c.api, usage.c.stop_reason).where(
                usage.c.conversation_id == conversation.id
            )
        ).one()
    assert tuple(row) == (provider, model, "a" * 80, "s" * 80)


def test_long_provider_and_model_names_are_kept_whole(store: ConversationStore) -> None:
    """Names come from servers, users and imports: no length limit (PostgreSQL would refuse one)."""
    _keeps_long_names(store)


def test_a_version_2_database_takes_long_names_after_migrating(db_url: str) -> None:
    engine = create_store_engine(db_url)
    with engine.begin() as conn:
        if engine.dialect.name == "postgresql":  # the lengths version 2 declared; SQLite never enforced them
            for table, column, length in [
                ("conversations", "provider", 100),
                ("conversations", "model", 200),
                ("usage", "provider", 100),
                ("usage", "api", 50),
                ("usage", "model", 200),
                ("usage", "stop_reason", 50),
            ]:
                conn.execute(text(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE VARCHAR({length})"))
        conn.execute(text("UPDATE schema_version SET version = 2"))
    engine.dispose()
    store = ConversationStore(create_store_engine(db_url))
    with store.engine.connect() as conn:
        assert current_schema_version(conn) == SCHEMA_VERSION
    _keeps_long_names(store)


def test_cost_already_on_the_message_is_kept(store: ConversationStore) -> None:
    from yiem.types import UsageCost

    conversation = store.create()
    store.append_message(conversation.id, _reply(cost=UsageCost(input=1.0, total=1.5)), PRICED)
    with store.engine.connect() as conn:
        row = conn.execute(select(usage.c.cost_input, usage.c.cost_total)).one()
    assert (row.cost_input, row.cost_total) == (1.0, 1.5)


def test_append_to_a_missing_conversation_says_so(store: ConversationStore) -> None:
    with pytest.raises(ConversationNotFoundError, match="not saved"):
        store.append_message("nope", UserMessage(content=[TextContent(text="hi")]))


def test_delete_keeps_usage_rows(store: ConversationStore) -> None:
    conversation = store.create()
    store.append_message(conversation.id, _reply(), PRICED)
    store.delete(conversation.id)
    with store.engine.connect() as conn:
        assert conn.execute(select(usage.c.model)).scalars().all() == ["gpt-test"]
        assert conn.execute(text("SELECT count(*) FROM messages")).scalar() == 0


def test_replace_messages_for_import(store: ConversationStore) -> None:
    conversation = store.create()
    store.append_message(conversation.id, UserMessage(content=[TextContent(text="old")]))
    store.replace_messages(conversation.id, [_reply("a"), _reply("b")])
    assert [m.text for m in store.load_messages(conversation.id)] == ["a", "b"]  # type: ignore[union-attr]


def test_a_corrupt_stored_message_is_reported_in_words(store: ConversationStore) -> None:
    conversation = store.create()
    store.append_message(conversation.id, UserMessage(content=[TextContent(text="hi")]))
    with store.engine.begin() as conn:
        conn.execute(text('UPDATE messages SET data = \'{"role": "user", "content": 5}\''))
    with pytest.raises(StoreError, match="Message 0 of conversation"):
        store.load_messages(conversation.id)


_WRITER = textwrap.dedent(
    """
    import sys
    from yiem.store import ConversationStore, create_store_engine
    from yiem.types import TextContent, UserMessage

    store = ConversationStore(create_store_engine(sys.argv[1]))
    conversation_id = sys.argv[2]
    mode = sys.argv[3]
    if mode == "one-then-wait":
        store.append_message(conversation_id, UserMessage(content=[TextContent(text="first")]))
        print("saved", flush=True)
        sys.stdin.readline()  # killed here, before the second message
        store.append_message(conversation_id, UserMessage(content=[TextContent(text="second")]))
    else:
        n = 0
        while True:
            message = UserMessage(content=[TextContent(text="x" * 5000 + str(n))])
            store.append_message(conversation_id, message)
            n += 1
            if n == 5:
                print("writing", flush=True)
    """
)


def _start_writer(db_url: str, conversation_id: str, mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _WRITER, db_url, conversation_id, mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )


def test_sigkill_between_two_messages_loses_nothing_written_before(
    store: ConversationStore, db_url: str
) -> None:
    conversation = store.create(title="crash")
    writer = _start_writer(db_url, conversation.id, "one-then-wait")
    assert writer.stdout is not None
    assert writer.stdout.readline().strip() == "saved"
    writer.send_signal(signal.SIGKILL)
    writer.wait(timeout=30)
    assert writer.returncode == -signal.SIGKILL
    reopened = ConversationStore(create_store_engine(db_url))
    assert [m.content[0].text for m in reopened.load_messages(conversation.id)] == ["first"]  # type: ignore[union-attr]


def test_sigkill_during_a_stream_of_writes_leaves_only_whole_messages(
    store: ConversationStore, db_url: str
) -> None:
    conversation = store.create()
    writer = _start_writer(db_url, conversation.id, "loop")
    assert writer.stdout is not None
    assert writer.stdout.readline().strip() == "writing"
    writer.send_signal(signal.SIGKILL)
    writer.wait(timeout=30)
    reopened = ConversationStore(create_store_engine(db_url))
    loaded = reopened.load_messages(conversation.id)  # every row parses: no half-written message
    assert len(loaded) >= 5
    assert [m.content[0].text[5000:] for m in loaded] == [str(n) for n in range(len(loaded))]  # type: ignore[union-attr]
    if reopened.engine.dialect.name == "sqlite":  # PostgreSQL rolls back a dropped client's transaction
        with reopened.engine.connect() as conn:
            assert conn.execute(text("PRAGMA integrity_check")).scalar() == "ok"
    assert reopened.append_message(conversation.id, UserMessage(content=[TextContent(text="after")])) == len(
        loaded
    )


def test_two_sessions_see_only_what_the_other_has_committed(db_url: str) -> None:
    """A message still being written by one session is invisible to another until it is saved."""
    one = ConversationStore(create_store_engine(db_url))
    two = ConversationStore(create_store_engine(db_url))
    conversation = one.create(title="shared link")
    one.append_message(conversation.id, UserMessage(content=[TextContent(text="saved")]))
    with one.engine.connect() as conn:
        transaction = conn.begin()
        conn.execute(
            text(
                "INSERT INTO messages (conversation_id, position, role, data, created_ms) "
                'VALUES (:c, 1, \'user\', \'{"role":"user","content":[]}\', 0)'
            ),
            {"c": conversation.id},
        )
        assert len(two.load_messages(conversation.id)) == 1
        transaction.rollback()
    assert len(two.load_messages(conversation.id)) == 1
    assert [c.title for c in two.list_conversations()] == ["shared link"]


def test_api_keys_have_no_column_anywhere(db_url: str) -> None:
    engine = create_store_engine(db_url)
    columns = {
        column["name"]
        for table in inspect(engine).get_table_names()
        for column in inspect(engine).get_columns(table)
    }
    assert not {name for name in columns if "key" in name or "secret" in name or name == "token"}


def test_extra_unknown_table_is_left_alone(db_url: str) -> None:
    engine = create_engine(db_url)
    other = MetaData()
    Table("other", other, Column("id", Integer, primary_key=True), Column("v", String(5)))
    other.create_all(engine)
    create_store_engine(db_url)
    assert "other" in inspect(create_engine(db_url)).get_table_names()


def test_a_database_that_cannot_be_opened_is_reported_in_words(tmp_path: Path) -> None:
    with socket.socket() as closed:  # bound, never listening: connections to it are refused
        closed.bind(("127.0.0.1", 0))
        url = f"postgresql+psycopg://yiem:s3cret@127.0.0.1:{closed.getsockname()[1]}/yiem"
        with pytest.raises(
            StoreUnavailableError, match="Could not open the database at postgresql"
        ) as raised:
            create_store_engine(url)
    assert "s3cret" not in str(raised.value) and "***" in str(raised.value)
    (tmp_path / "file").write_text("")
    with pytest.raises(StoreUnavailableError, match="unable to open database file"):
        create_store_engine(f"sqlite:///{tmp_path / 'file' / 'yiem.db'}")  # a folder that is a file
    with pytest.raises(StoreUnavailableError, match="cannot be used"):
        create_store_engine("nosuchdb://host/yiem")


def test_a_plain_postgresql_url_uses_the_installed_driver(postgres_url: str) -> None:
    """SQLAlchemy's default PostgreSQL driver is psycopg2; `postgresql://` gets psycopg 3, which is pinned."""
    engine = create_store_engine(postgres_url.replace("postgresql+psycopg://", "postgresql://"))
    assert engine.dialect.driver == "psycopg"
    assert ConversationStore(engine).create(title="plain").title == "plain"
    engine.dispose()
