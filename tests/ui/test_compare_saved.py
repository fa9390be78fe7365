"""The Compare page's saved comparisons under AppTest, its columns on a scripted loopback server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from tests.fixtures.compare import compare_page, scripted_columns
from tests.scripted_http import Reply, ScriptedServer, openai_text_stream
from yiem.compare import Comparison, ComparisonStore
from yiem.model_setup import ModelSetup
from yiem.store import ConversationStore, create_store_engine

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def db_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite:///{tmp_path / 'app.db'}"
    monkeypatch.setenv("YIEM_DATABASE_URL", url)
    monkeypatch.setenv("YIEM_MCP_CONFIG", str(tmp_path / "no-mcp.json"))
    monkeypatch.chdir(ROOT)  # the app's pages are named relative to it, as `streamlit run app.py` has them
    return url


def _compare_page() -> AppTest:
    # Through app.py: the page's links to itself and to Chat need the app's navigation.
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page("ui/pages/compare.py")
    return at


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    scripted = ScriptedServer()
    yield scripted
    scripted.close()


def _answer(word: str) -> Reply:
    usage = {"prompt_tokens": 9, "completion_tokens": 2}
    return Reply(headers={"Content-Type": "text/event-stream"}, chunks=openai_text_stream(word, usage=usage))


def _specs(server: ScriptedServer) -> list[ModelSetup]:
    return [
        ModelSetup(provider="llamacpp", base_url=f"{server.url}/v1", model_id=name, system_prompt=name)
        for name in ("pirate", "formal")
    ]


def _send(at: AppTest, prompt: str) -> Comparison:
    at.chat_input(key="cmp_prompt").set_value(prompt).run()
    assert not at.exception, at.exception
    comparison: Comparison = at.session_state["compare_run"]
    assert comparison.wait(timeout=30)
    at.run()
    assert not at.exception, at.exception
    return comparison


def _links(at: AppTest) -> list[Any]:
    return list(at.get("page_link"))


def _markdown(at: AppTest) -> str:
    return "\n".join(str(m.value) for m in at.markdown)


def test_a_comparison_is_saved_listed_and_reopened_by_its_url(db_url: str, server: ScriptedServer) -> None:
    server.script(_answer("Ahoy"), _answer("Ahoy"))
    at = _compare_page()
    at.session_state["compare_specs"] = _specs(server)
    at.run()
    assert not at.exception, at.exception
    comparison = _send(at, "Say hello.")
    record_id = comparison.record_id
    assert record_id is not None
    assert at.query_params["cmp"] in (record_id, [record_id])
    # The page's own list links to it.
    listed = [link for link in _links(at) if "Say hello." in link.proto.label]
    assert len(listed) == 1 and listed[0].proto.query_string == f"cmp={record_id}"

    # A shared link opens it in a fresh session, the answers shown, without sending anything again.
    requests = len(server.requests)
    fresh = _compare_page()
    fresh.query_params["cmp"] = record_id
    fresh.run()
    assert not fresh.exception, fresh.exception
    reopened: Comparison = fresh.session_state["compare_run"]
    assert reopened.record_id == record_id
    assert [c.spec.label for c in reopened.columns] == ["llamacpp/pirate", "llamacpp/formal"]
    assert _markdown(fresh).count("Ahoy") == 2
    assert len(server.requests) == requests
    # A follow-up continues the reopened comparison, not a new one.
    server.script(_answer("Again"), _answer("Again"))
    again = _send(fresh, "Once more.")
    assert again is reopened
    store = ComparisonStore(create_store_engine(db_url))
    assert store.get(record_id).prompts == ["Say hello.", "Once more."]
    assert [r.id for r in store.list_comparisons()] == [record_id]


def test_continue_in_chat_opens_a_column_s_conversation_which_then_joins_chat_s_list(
    db_url: str, server: ScriptedServer
) -> None:
    server.script(_answer("Ahoy"), _answer("Good day"))
    at = _compare_page()
    at.session_state["compare_specs"] = _specs(server)
    at.run()
    comparison = _send(at, "Say hello.")
    ids = [column.conversation_id for column in comparison.columns]
    chats = [link.proto for link in _links(at) if link.proto.label == "Continue in Chat"]
    # Chat is the app's default page: its URL path is empty.
    assert [(link.page, link.query_string) for link in chats] == [("", f"c={cid}") for cid in ids]
    store = ConversationStore(create_store_engine(db_url))
    assert store.list_conversations() == []  # kept out of Chat's list until opened there

    chat = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    chat.query_params["c"] = chats[1].query_string.removeprefix("c=")
    chat.run()
    assert not chat.exception, chat.exception
    answer = comparison.columns[1].text
    assert answer in _markdown(chat)
    assert [c.id for c in store.list_conversations()] == [ids[1]]


def test_someone_elses_or_a_deleted_comparison_says_so(db_url: str) -> None:
    at = _compare_page()
    at.query_params["cmp"] = "no-such-id"
    at.run()
    assert not at.exception, at.exception
    assert any("no longer exists or is not yours" in str(e.value) for e in at.error)
    assert "cmp" not in at.query_params
    assert ConversationStore(create_store_engine(db_url)).list_conversations() == []


def test_a_blind_pair_is_saved_without_naming_its_models_before_the_vote(
    db_url: str, server: ScriptedServer
) -> None:
    server.script(_answer("Ahoy"), _answer("Good day"))
    at = _compare_page()
    at.session_state["compare_specs"] = _specs(server)
    at.run()
    at.toggle(key="cmp_blind").set_value(True).run()
    comparison = _send(at, "Say hello.")
    assert comparison.record_id is not None
    listed = [link.proto for link in _links(at) if "Say hello." in link.proto.label]
    assert len(listed) == 1 and "blind vote" in listed[0].help
    assert "pirate" not in listed[0].help and "formal" not in listed[0].help
    # Nor may a link to Chat (whose settings name the model) show before the vote.
    assert not [link for link in _links(at) if link.proto.label == "Continue in Chat"]
    at.button(key="cmp_vote_tie").click().run()
    assert len([link for link in _links(at) if link.proto.label == "Continue in Chat"]) == 2


def test_reopening_a_comparison_sets_each_column_s_longest_reply_back(
    db_url: str, scripted_server: ScriptedServer
) -> None:
    specs = [s.model_copy(update={"max_tokens": 40}) for s in scripted_columns(scripted_server, "a", "b")]
    record = ComparisonStore(create_store_engine(db_url)).create(specs, "Say hello.")
    at = compare_page()
    at.run()
    at.number_input(key="cmp_max_tokens_0").set_value(7).run()  # typed before opening the saved one
    at.query_params["cmp"] = record.id
    at.run()
    assert not at.exception, at.exception
    assert at.number_input(key="cmp_max_tokens_0").value == 40
