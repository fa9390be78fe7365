"""Every page's first run under AppTest (issue 28): the empty Chat's tool suggestion, offered for a
model that is sent tools and explained for the embedded one; the Experiments example's judge, left
out in words when the embedded model is not installed, and the example offered until the person has
an experiment of their own (someone else's shared one is not theirs); the empty Tools page.

(tests/ui/test_browser_examples.py runs the examples themselves in Chromium on the embedded model.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.fixtures.compare import streamed_reply
from tests.fixtures.mcp import time_server_command
from tests.scripted_http import ScriptedServer, json_reply
from yiem.chat._suggestions import ADD_THE_SERVER, NO_TOOLS, PLAIN_PROMPTS, TOOL_PROMPT
from yiem.experiments import NO_JUDGE, Dataset, ExperimentStore
from yiem.explorer import EXAMPLE_SERVER_VARIABLE
from yiem.store import create_store_engine

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
EXPERIMENTS = str(ROOT / "ui" / "pages" / "experiments.py")
TIMEOUT = 60


def _suggested(at: AppTest) -> list[str]:
    return [button.label for button in at.button if str(button.key).startswith("chat_suggestion_")]


def _captions(at: AppTest) -> list[str]:
    return [caption.value for caption in at.caption]


def _with_the_time_server(at: AppTest) -> None:
    """What a new person does on Tools: one click on the example server, then back to Chat."""
    at.switch_page("ui/pages/tools.py").run()
    at.button(key="tools-add-example").click().run()
    assert not at.exception, at.exception
    assert "get_current_time" in at.session_state["enabled_tools"]
    at.switch_page("ui/pages/chat.py").run()
    assert not at.exception, at.exception


def test_a_tool_calling_model_is_offered_the_time_servers_prompt_and_sends_it_with_the_tool(
    db_url: str, monkeypatch: pytest.MonkeyPatch, scripted_server: ScriptedServer
) -> None:
    # An OpenAI-compatible provider (the scripted loopback server) bound to the server's key.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-for-the-scripted-server")
    monkeypatch.setenv("OPENAI_BASE_URL", f"{scripted_server.url}/v1")
    monkeypatch.setenv(EXAMPLE_SERVER_VARIABLE, time_server_command())
    scripted_server.script(json_reply({"data": [{"id": "gpt-4o-mini"}]}))  # the settings' model list
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    assert at.session_state["settings"].provider == "openai"
    try:
        # Before the server is added, the tool prompt is offered with where its tool comes from.
        assert _suggested(at) == [*PLAIN_PROMPTS[:2], TOOL_PROMPT]
        assert ADD_THE_SERVER in _captions(at)
        _with_the_time_server(at)
        assert _suggested(at) == [*PLAIN_PROMPTS[:2], TOOL_PROMPT]
        assert ADD_THE_SERVER not in _captions(at) and NO_TOOLS not in _captions(at)

        scripted_server.script(streamed_reply("It is evening in Tokyo."))
        next(b for b in at.button if b.label == TOOL_PROMPT).click().run()
        assert not at.exception and not at.error, (at.exception, at.error)
        assert "It is evening in Tokyo." in [m.value for m in at.markdown]
        chat = next(r.body for r in scripted_server.requests if r.path.endswith("/chat/completions"))
        assert chat["messages"][-1]["content"] == [{"type": "text", "text": TOOL_PROMPT}]
        assert "get_current_time" in [tool["function"]["name"] for tool in chat["tools"]]
    finally:
        for client in at.session_state["mcp_clients"].values():
            client.close()


def test_the_embedded_model_is_not_offered_a_tool_prompt_and_the_page_says_why(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(EXAMPLE_SERVER_VARIABLE, time_server_command())
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    assert at.session_state["settings"].provider == "local"
    try:
        # Even with the time server's tool enabled: the model is the reason, and the page says so.
        _with_the_time_server(at)
        assert _suggested(at) == list(PLAIN_PROMPTS)
        assert NO_TOOLS in _captions(at)
    finally:
        for client in at.session_state["mcp_clients"].values():
            client.close()


def test_the_example_is_offered_beside_someone_elses_shared_experiment_until_one_is_the_persons_own(
    db_url: str,
) -> None:
    engine = create_store_engine(db_url)
    anns = ExperimentStore(engine, "ann@example.com")
    anns.share(anns.save_experiment("Ann's quiz", {"dataset": Dataset().model_dump(mode="json")}), "read")
    at = AppTest.from_file(EXPERIMENTS, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    assert [e.name for e in ExperimentStore(engine).list_experiments()] == ["Ann's quiz"]  # seen here
    assert "exp_start_example" in [button.key for button in at.button]

    ExperimentStore(engine).save_experiment("Mine", {"dataset": Dataset().model_dump(mode="json")})
    at = AppTest.from_file(EXPERIMENTS, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    assert "exp_start_example" not in [button.key for button in at.button]


def _click_handled_twice() -> None:
    from ui.experiments.example import start_example

    start_example()
    start_example()  # the same click once more, as one click ran it twice in ci32


def test_a_click_on_start_from_an_example_handled_twice_saves_one_example(db_url: str) -> None:
    at = AppTest.from_function(_click_handled_twice, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    (record,) = ExperimentStore(create_store_engine(db_url)).list_experiments()
    assert at.query_params["e"] == record.id
    assert at.session_state["exp_id"] == record.id


def test_without_the_embedded_model_the_example_has_no_judge_and_the_scorers_tab_says_why(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A provider key configured and no embedded model: what `make run` leaves on such a machine.
    monkeypatch.setenv("YIEM_CACHE_DIR", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-configured")
    at = AppTest.from_file(EXPERIMENTS, default_timeout=TIMEOUT).run()
    at.button(key="exp_start_example").click().run()
    assert not at.exception, at.exception
    assert NO_JUDGE in _captions(at)
    # What is said is what was checked: a key is configured here, and the words do not deny it.
    assert "not installed" in NO_JUDGE and "no provider key is configured" not in NO_JUDGE
    (record,) = ExperimentStore(create_store_engine(db_url)).list_experiments()
    assert [scorer["kind"] for scorer in record.data["scorers"]] == ["contains"]


def test_the_empty_tools_page_says_what_it_is_for_and_what_to_do_first(db_url: str) -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("ui/pages/tools.py").run()
    assert not at.exception, at.exception
    (empty,) = [info.value for info in at.info if info.value.startswith("No MCP servers yet")]
    assert "so you can try their tools" in empty and "let the chat call their tools" in empty
    assert "to begin, add one below" in empty
