"""Sign-in under AppTest: off without `[auth]`; with it, the sign-in page for nobody, and once signed in
each person's own conversations, refusals in words, and the admin's team view of Costs.

(tests/ui/test_browser_sign_in.py does the same against a real OpenID Connect provider in Chromium.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from tests.fixtures.compare import scripted_columns, streamed_reply
from tests.fixtures.mcp import time_server_command
from tests.scripted_http import ScriptedServer
from yiem.compare import Comparison, VoteStore
from yiem.explorer import EXAMPLE_SERVER_VARIABLE
from yiem.store import ConversationStore, create_store_engine
from yiem.types import AssistantMessage, LlmUsage, TextContent, UserMessage

ROOT = Path(__file__).resolve().parents[2]
AUTH = {
    "redirect_uri": "http://127.0.0.1:8501/oauth2callback",
    "cookie_secret": "a-cookie-secret-for-the-test",
    "client_id": "yiem",
    "client_secret": "a-client-secret-for-the-test",
    "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration",
}
ANN = {"is_logged_in": True, "sub": "a", "email": "ann@example.com", "email_verified": True, "name": "Ann"}
CAROL = {"is_logged_in": True, "sub": "c", "email": "carol@example.com", "name": "Carol"}


def _app(user: dict[str, Any] | None = None, admins: list[str] | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.secrets["auth"] = AUTH
    if admins is not None:
        at.secrets["admins"] = {"emails": admins}
    at.user = user or {"is_logged_in": False}
    return at


def _conversation(db_url: str, owner: str, title: str) -> str:
    store = ConversationStore(create_store_engine(db_url), owner)
    found = store.create(title=title)
    store.append_message(found.id, UserMessage.from_text(title))
    reply = AssistantMessage(
        content=[TextContent(text="ok")],
        provider="local",
        model="m",
        usage=LlmUsage(input_tokens=5, output_tokens=1),
    )
    store.append_message(found.id, reply)
    return found.id


def _texts(at: AppTest) -> str:
    return " ".join(
        str(e.value)
        for kind in ("markdown", "caption", "warning", "error", "title")
        for e in getattr(at, kind)
    )


def test_without_an_auth_section_there_is_no_sign_in(db_url: str) -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception
    assert at.chat_input and "Signed in" not in _texts(at)
    assert not [b for b in at.button if b.label == "Sign in"]


def test_nobody_signed_in_sees_only_the_sign_in_page(db_url: str) -> None:
    _conversation(db_url, "local", "A local secret")
    at = _app().run()
    assert not at.exception
    assert [b.label for b in at.button] == ["Sign in"]
    assert not at.chat_input and "A local secret" not in _texts(at)


def test_a_signed_in_person_has_their_own_conversations_and_cannot_open_anothers(db_url: str) -> None:
    _conversation(db_url, "ann@example.com", "Ann's plan")
    bobs = _conversation(db_url, "bob@example.com", "Bob's secret")
    at = _app(ANN).run()
    assert not at.exception
    assert "Signed in as **Ann**" in _texts(at)
    sidebar = " ".join(str(b.label) for b in at.sidebar.button)
    assert "Ann's plan" in sidebar and "Bob's secret" not in sidebar
    at.query_params["c"] = bobs
    at.run()
    assert any("not yours to open" in w.value for w in at.warning)
    assert "Bob's secret" not in _texts(at) + " ".join(str(b.label) for b in at.button)
    assert ConversationStore(create_store_engine(db_url), "bob@example.com").get(bobs).title == "Bob's secret"


def test_costs_are_the_persons_own_and_an_admin_sees_the_team_per_person(db_url: str) -> None:
    _conversation(db_url, "ann@example.com", "Ann's plan")
    _conversation(db_url, "bob@example.com", "Bob's secret")
    ann = _app(ANN).run()
    ann.switch_page("ui/pages/costs.py").run()
    assert not ann.exception
    assert {m.label: m.value for m in ann.metric}["Requests"] == "1"
    assert not ann.toggle  # no team view for a person who is not an admin
    assert not any("owner" in str(df.value.columns) or "Person" in df.value.columns for df in ann.dataframe)

    carol = _app(CAROL, admins=["carol@example.com"]).run()
    carol.switch_page("ui/pages/costs.py").run()
    assert not carol.exception
    assert {m.label: m.value for m in carol.metric}["Requests"] == "2"
    per_person = next(df.value for df in carol.dataframe if "Person" in df.value.columns)
    assert dict(zip(per_person["Person"], per_person["Requests"], strict=True)) == {
        "ann@example.com": 1,
        "bob@example.com": 1,
    }
    carol.toggle(key="costs_team").set_value(False).run()
    assert {m.label: m.value for m in carol.metric}.get("Requests") in (None, "0")  # carol's own: none


def test_signed_in_only_an_admin_may_add_a_command_or_save_to_mcp_json(db_url: str) -> None:
    # Signed in, the rule is the person's role, whatever address the app listens on.
    ann = _app(ANN).run()
    ann.switch_page("ui/pages/tools.py").run()
    ann.radio(key="tools-add-kind").set_value("Command (stdio)").run()
    assert not ann.exception
    assert any("Only an admin of this app may start programs" in w.value for w in ann.warning)
    assert ann.button(key="tools-add-connect").disabled
    assert ann.checkbox(key="tools-add-save").disabled

    carol = _app(CAROL, admins=["carol@example.com"]).run()
    carol.switch_page("ui/pages/tools.py").run()
    carol.radio(key="tools-add-kind").set_value("Command (stdio)").run()
    assert not any("Only an admin" in w.value for w in carol.warning)
    assert not carol.button(key="tools-add-connect").disabled
    assert not carol.checkbox(key="tools-add-save").disabled


def test_signed_in_only_an_admin_is_offered_the_example_server(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The one-click example is a program started on the server, like a typed command.
    monkeypatch.setenv(EXAMPLE_SERVER_VARIABLE, time_server_command())
    ann = _app(ANN).run()
    ann.switch_page("ui/pages/tools.py").run()
    assert not ann.exception
    assert any("No MCP servers yet" in i.value for i in ann.info)
    assert not [b for b in ann.button if b.key == "tools-add-example"]
    assert "mcp-server-time" not in _texts(ann)

    carol = _app(CAROL, admins=["carol@example.com"]).run()
    carol.switch_page("ui/pages/tools.py").run()
    carol.button(key="tools-add-example").click().run()
    assert not carol.exception
    clients = carol.session_state["mcp_clients"]
    try:
        assert "time" in clients
        assert carol.selectbox(key="tools-server").value == "time"
    finally:
        for client in clients.values():
            client.close()


def test_the_next_person_in_the_same_session_inherits_nothing(db_url: str) -> None:
    anns = _conversation(db_url, "ann@example.com", "Ann's plan")
    at = _app(ANN)
    at.query_params["c"] = anns
    at.run()
    assert at.session_state["chat"].conversation_id == anns
    at.user = {"is_logged_in": True, "sub": "b", "email": "bob@example.com", "name": "Bob"}
    at.query_params.pop("c", None)
    at.run()
    assert not at.exception
    assert at.session_state["owner"].id == "bob@example.com"
    assert at.session_state["chat"].conversation_id is None
    assert at.session_state["store"].owner == "bob@example.com"
    assert "Ann's plan" not in " ".join(str(b.label) for b in at.sidebar.button)


def test_a_signed_in_person_s_blind_vote_says_who_voted(db_url: str, scripted_server: ScriptedServer) -> None:
    scripted_server.script(streamed_reply("Ahoy"), streamed_reply("Ahoy"))
    at = _app(ANN)
    at.switch_page("ui/pages/compare.py")
    at.session_state["compare_specs"] = scripted_columns(scripted_server, "pirate", "formal")
    at.run()
    at.toggle(key="cmp_blind").set_value(True).run()
    at.chat_input(key="cmp_prompt").set_value("Say hello.").run()
    comparison: Comparison = at.session_state["compare_run"]
    assert comparison.wait(timeout=30)
    at.run()
    at.button(key="cmp_vote_tie").click().run()
    assert not at.exception, at.exception
    (vote,) = VoteStore(create_store_engine(db_url), "ann@example.com").votes()
    assert (vote.voter, vote.verdict, vote.prompt) == ("Ann", "tie", "Say hello.")
    assert VoteStore(create_store_engine(db_url)).votes() == []  # not the local user's
