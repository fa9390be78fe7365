"""The Compare page under AppTest with the embedded llama-server (SmolLM2) as the columns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from tests.fixtures.ports import free_port
from yiem.compare import Comparison, VoteStore
from yiem.llm import LlmClient
from yiem.model_setup import ModelSetup
from yiem.providers.local_llm import LocalLlmServer
from yiem.scripted_llm import ScriptedLlm
from yiem.store import create_store_engine
from yiem.types import LlmModel

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 120


@pytest.fixture
def db_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite:///{tmp_path / 'app.db'}"
    monkeypatch.setenv("YIEM_DATABASE_URL", url)
    monkeypatch.setenv("YIEM_MCP_CONFIG", str(tmp_path / "no-mcp.json"))
    monkeypatch.chdir(ROOT)  # the app's pages are named relative to it
    return url


def _compare_page() -> AppTest:
    # Through app.py: the page links to itself (saved comparisons) and to Chat (Continue in Chat).
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.switch_page("ui/pages/compare.py")
    return at


def _dead_url() -> str:
    return f"http://127.0.0.1:{free_port()}/v1"


def _llama(server: LocalLlmServer, system: str) -> ModelSetup:
    return ModelSetup(
        provider="llamacpp",
        base_url=server.openai_base_url,
        model_id="smollm2",
        system_prompt=system,
        temperature=0.0,
        max_tokens=12,
    )


def _text(at: AppTest) -> str:
    parts: list[Any] = [*at.markdown, *at.caption, *at.error, *at.success, *at.subheader]
    return "\n".join(str(part.value) for part in parts)


def _send(at: AppTest, prompt: str) -> Comparison:
    at.chat_input(key="cmp_prompt").set_value(prompt).run()
    assert not at.exception, at.exception
    comparison: Comparison = at.session_state["compare_run"]
    assert comparison.wait(timeout=TIMEOUT)
    at.run()
    assert not at.exception, at.exception
    return comparison


@pytest.mark.llama
def test_two_llama_columns_and_a_dead_one(db_url: str, llama_server: LocalLlmServer) -> None:
    dead = ModelSetup(provider="llamacpp", base_url=_dead_url(), model_id="gone")
    at = _compare_page()
    at.session_state["compare_specs"] = [
        _llama(llama_server, "You answer like a pirate."),
        _llama(llama_server, "You answer very formally."),
        dead,
    ]
    at.run()
    assert not at.exception, at.exception
    comparison = _send(at, "Say hello.")
    first, second, failed = comparison.columns
    assert first.status == second.status == "done" and first.text and second.text
    assert failed.status == "error"
    text = _text(at)
    assert first.text.strip()[:10] in text and second.text.strip()[:10] in text
    assert text.count("TTFT") == 3 and "tok/s" in text and "price unknown" in text
    assert any("Could not reach llamacpp" in str(e.value) for e in at.error), [e.value for e in at.error]


@pytest.mark.llama
def test_a_blind_vote_hides_names_until_voted_and_updates_the_leaderboard(
    db_url: str, llama_server: LocalLlmServer
) -> None:
    at = _compare_page()
    pirate = _llama(llama_server, "You answer like a pirate.").model_copy(update={"model_id": "pirate"})
    formal = _llama(llama_server, "You answer very formally.").model_copy(update={"model_id": "formal"})
    at.session_state["compare_specs"] = [pirate, formal]
    at.run()
    at.toggle(key="cmp_blind").set_value(True).run()
    assert "No votes yet" in _text(at)
    comparison = _send(at, "Say hello.")
    headings = [h.value for h in at.subheader]
    assert "Model A" in headings and "Model B" in headings
    assert "llamacpp/pirate" not in headings and "llamacpp/formal" not in headings
    at.button(key="cmp_vote_left").click().run()
    assert not at.exception, at.exception
    left, right = comparison.columns[0].spec.label, comparison.columns[1].spec.label
    assert {left, right} == {"llamacpp/pirate", "llamacpp/formal"}
    assert f"A was {left}; B was {right}" in _text(at)
    votes = VoteStore(create_store_engine(db_url)).votes()
    assert [(v.left_model, v.right_model, v.verdict, v.prompt) for v in votes] == [
        (left, right, "left", "Say hello.")
    ]
    board = next(d.value for d in at.dataframe if "Rating" in d.value.columns)
    assert list(board["Model"]) == [left, right] and list(board["Votes"]) == [1, 1]
    assert len(at.get("plotly_chart")) == 1


def _timeline_charts(at: AppTest) -> list[dict[str, Any]]:
    charts = [chart for chart in at.get("plotly_chart") if "cmp-timeline-" in str(chart.proto.id)]
    return [json.loads(chart.proto.spec) for chart in charts]


def test_each_column_has_a_timeline_of_its_reply_drawn_when_opened(db_url: str) -> None:
    scripts = {"fast": ["Hello."], "slow": ["Good day.", "Still here."]}

    def scripted(spec: ModelSetup) -> tuple[LlmClient, LlmModel]:
        return ScriptedLlm(scripts[spec.model_id]), LlmModel(id=spec.model_id, provider="scripted")

    specs = [ModelSetup(provider="scripted", model_id=name) for name in scripts]
    comparison = Comparison(specs, connector=scripted)
    comparison.start("Say hello.")
    assert comparison.wait(timeout=TIMEOUT)
    at = _compare_page()
    at.session_state["compare_specs"] = specs
    at.session_state["compare_run"] = comparison
    at.run()
    assert not at.exception, at.exception
    assert [e.label for e in at.expander].count("Timeline") == 2  # one per column, closed
    assert _timeline_charts(at) == []
    at.session_state["cmp-timeline-1-2"] = True  # what a click on the second column's expander sets
    at.run()
    (chart,) = _timeline_charts(at)
    assert chart["data"][0]["y"] == ["model"] and chart["data"][0]["text"][0].startswith("slow · ")
    # A blind vote keeps the columns anonymous: the bars would name the model.
    at.session_state["compare_blind"] = True
    at.run()
    assert "Timeline" not in [e.label for e in at.expander]
