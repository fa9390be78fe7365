"""The Chat page when the database fails after start: words on the page, the unsent prompt kept."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import make_url
from streamlit.testing.v1 import AppTest

from yiem.scripted_llm import ScriptedLlm
from yiem.store import ConversationStore, create_store_engine
from yiem.tool_registry import ToolRegistry
from yiem.types import LlmModel, UserMessage

ROOT = Path(__file__).resolve().parents[2]
MODEL = LlmModel(id="scripted-1", provider="scripted")


def _app(llm: ScriptedLlm, **state: Any) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["llm_override"] = (llm, MODEL)
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def _path(db_url: str) -> str:
    database = make_url(db_url).database
    assert database
    return database


def _input_text(at: AppTest) -> str | None:
    """The text the page put back into the chat input (None when it is left empty)."""
    proto = at.chat_input[0].proto
    return proto.value if proto.set_value else None


def _errors(at: AppTest) -> str:
    return "\n".join(str(error.value) for error in at.error)


@pytest.fixture
def writer_lock(db_url: str) -> Iterator[sqlite3.Connection]:
    """A second program's connection to the app's database; `BEGIN IMMEDIATE` on it locks out writers."""
    create_store_engine(db_url).dispose()  # the file and its tables exist before the lock is taken
    other = sqlite3.connect(_path(db_url), isolation_level=None, check_same_thread=False)
    yield other
    if other.in_transaction:
        other.execute("ROLLBACK")
    other.close()


def test_a_send_while_another_program_locks_the_database_keeps_the_prompt(
    db_url: str, writer_lock: sqlite3.Connection
) -> None:
    at = _app(ScriptedLlm(["never sent"]))
    writer_lock.execute("BEGIN IMMEDIATE")
    at.chat_input[0].set_value("Please keep this prompt").run()
    assert not at.exception, at.exception
    assert "locked" in _errors(at) and "Try again in a moment" in _errors(at), _errors(at)
    assert _input_text(at) == "Please keep this prompt"
    # Once the other program lets go, the same prompt goes through.
    writer_lock.execute("ROLLBACK")
    at.chat_input[0].set_value("Please keep this prompt").run()
    assert not at.exception, at.exception
    saved = ConversationStore(create_store_engine(db_url)).load_messages(at.query_params["c"])
    assert [m.role for m in saved] == ["user", "assistant"]


def test_a_lock_that_outlasts_the_wait_while_a_reply_is_saved_is_explained(
    db_url: str, writer_lock: sqlite3.Connection
) -> None:
    registry = ToolRegistry()

    def lock_database() -> str:
        """Another program takes the write lock while the agent runs."""
        writer_lock.execute("BEGIN IMMEDIATE")
        return "locked"

    registry.add_function(lock_database)
    llm = ScriptedLlm([{"toolCalls": [{"id": "c1", "name": "lock_database", "arguments": {}}]}, "done"])
    at = _app(llm, tool_registry=registry, mcp_clients={}, mcp_errors={}, enabled_tools={"lock_database"})
    at.chat_input[0].set_value("lock it").run()
    assert not at.exception, at.exception
    assert "locked" in _errors(at) and "Regenerate" in _errors(at), _errors(at)
    # The store's own words (StoreBusyError), not the Chat page's catch-all for any fault while drawing,
    # which also names the driver's "database is locked" and Regenerate.
    assert "Try again in a moment" in _errors(at) and "Your message is saved" in _errors(at), _errors(at)
    # The prompt was saved before the run, so it is in the conversation, not back in the input.
    assert _input_text(at) is None
    writer_lock.execute("ROLLBACK")
    saved = ConversationStore(create_store_engine(db_url)).load_messages(at.query_params["c"])
    assert isinstance(saved[0], UserMessage)


def test_a_conversation_deleted_in_another_tab_keeps_the_prompt(db_url: str) -> None:
    at = _app(ScriptedLlm(["first reply", "second reply"]))
    at.chat_input[0].set_value("first").run()
    conversation_id = at.query_params["c"]
    ConversationStore(create_store_engine(db_url)).delete(conversation_id)  # the other tab
    at.chat_input[0].set_value("second, unsent").run()
    assert not at.exception, at.exception
    assert "deleted" in _errors(at), _errors(at)
    assert _input_text(at) == "second, unsent"
    assert "c" not in at.query_params  # a new chat: sending again starts a new conversation
    at.chat_input[0].set_value("second, unsent").run()
    assert not at.exception, at.exception
    assert at.query_params["c"] != conversation_id


def test_a_corrupt_database_file_is_explained_in_words(db_url: str) -> None:
    Path(_path(db_url)).write_bytes(os.urandom(64 * 1024))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception, at.exception
    assert "damaged or is not a database" in _errors(at), _errors(at)
    assert "Move that file aside" in _errors(at)
