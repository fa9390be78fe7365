"""The Experiments page under AppTest: a run made from Python shows in the page (summary, matrix,
comparison), and the page's editors build the draft it runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from yiem import ScriptedLlm
from yiem.experiments import Dataset, ExperimentStore, Variant, run_experiment, scorers
from yiem.store import create_store_engine

PAGE = str(Path(__file__).resolve().parents[2] / "ui" / "pages" / "experiments.py")
TIMEOUT = 60


@pytest.fixture
def db_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite:///{tmp_path / 'app.db'}"
    monkeypatch.setenv("YIEM_DATABASE_URL", url)
    monkeypatch.setenv("YIEM_MCP_CONFIG", str(tmp_path / "no-mcp.json"))
    return url


def _python_run(url: str) -> tuple[str, str]:
    store = ExperimentStore(create_store_engine(url))
    data = Dataset.from_records([{"id": f"q{n}", "input": f"say {n}", "expected": str(n)} for n in range(4)])
    good = Variant(name="good", llm=ScriptedLlm([str(n) for n in range(4)]))
    bad = Variant(name="bad", llm=ScriptedLlm(["0", "x", "x", "3"]))
    result = run_experiment(data, [good, bad], [scorers.contains()], name="quiz", store=store, concurrency=1)
    return store.list_experiments()[0].id, result.run_id


def _text(at: AppTest) -> str:
    parts: list[Any] = [*at.markdown, *at.caption, *at.text, *at.info, *at.warning, *at.success]
    return "\n".join(str(part.value) for part in parts)


def test_a_python_run_shows_in_the_page(db_url: str) -> None:
    experiment_id, _run_id = _python_run(db_url)
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.query_params["e"] = experiment_id
    at.run()
    assert not at.exception, at.exception
    assert at.text_input(key="exp_w_name").value == "quiz"
    summary = next(d.value for d in at.dataframe if "pass rate" in d.value.columns)
    assert list(summary["variant"]) == ["good", "bad"]
    assert list(summary["passed"]) == ["4 / 4", "2 / 4"]
    assert summary["pass rate"][1] == "50% (15%–85%)"
    text = _text(at)
    assert ":green-badge[contains 1.00]" in text and ":red-badge[contains 0.00]" in text
    # Against a baseline: 'bad' against 'good' in the same run regresses two items.
    metrics = {m.label: m.value for m in at.metric}
    assert (metrics["Improved"], metrics["Regressed"], metrics["Unchanged"]) == ("0", "2", "2")
    at.toggle(key=f"exp_only_regressions_{_run_id}").set_value(True).run()
    changes = next(d.value for d in at.dataframe if "change" in d.value.columns)
    assert list(changes["item"]) == ["say 1", "say 2"]


def test_empty_page_explains_what_to_do(db_url: str) -> None:
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, at.exception
    assert "No runs yet" in _text(at)
    at.button(key="exp_run").click().run()
    assert not at.exception, at.exception
    assert any("Add at least one variant" in str(e.value) for e in at.error)
