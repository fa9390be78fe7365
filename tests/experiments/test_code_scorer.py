"""Code scorers run a person's function in a real subprocess; a hang, a raise, too much memory, junk or a
missing file is that cell's error in words (not a failed score in the scorer's pass rate), and the
app's process carries on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from yiem import LlmModel, ScriptedLlm
from yiem.experiments import (
    Dataset,
    ExperimentResult,
    ItemOutcome,
    ScorerError,
    Variant,
    run_experiment,
    scorer_figures,
    scorers,
)
from yiem.experiments.scorers import AnyScorer

GRADERS = str(Path(__file__).parent / "code_scorers" / "graders.py")
MODEL = LlmModel(id="m", provider="scripted")


def run_all(scorer_list: list[Any], replies: list[str]) -> ExperimentResult:
    dataset = Dataset.from_records(
        [{"id": f"q{n}", "input": f"say {n}", "expected": str(n)} for n in range(len(replies))]
    )
    llm = ScriptedLlm([{"content": text, "usage": {"inputTokens": 1, "outputTokens": 1}} for text in replies])
    return run_experiment(
        dataset, [Variant(name="v", llm=llm, model=MODEL)], scorer_list, name="code", concurrency=1
    )


def run_with(scorer: Any, replies: list[str]) -> list[Any]:
    return [outcome.scores[0] for outcome in run_all([scorer], replies).outcomes]


def broken(scorer: Any) -> ItemOutcome:
    """The one outcome of a run whose code scorer breaks, beside a contains scorer that still grades."""
    [outcome] = run_all([scorers.contains(), scorer], ["0"]).outcomes
    return outcome


def test_a_code_scorer_grades_each_cell_and_is_stored_as_data() -> None:
    scorer = scorers.code(GRADERS)
    assert TypeAdapter(AnyScorer).validate_python(scorer.model_dump()) == scorer
    assert [(s.passed, s.reason) for s in run_with(scorer, ["0", "x"])] == [
        (True, "passed"),
        (False, "failed"),
    ]
    partial = run_with(scorers.code(GRADERS, "partial", name="partial"), ["a", "b"])
    assert [(s.score, s.reason, s.passed) for s in partial] == [
        (1.0, "looked at q0", True),
        (0.5, "looked at q1", True),
    ]
    assert run_with(scorers.code(GRADERS, "chatty"), ["a"])[0].passed


@pytest.mark.parametrize(
    ("function", "words"),
    [
        ("hangs", "took longer than 1 s and was stopped"),
        ("raises", "failed: KeyError: 'b' (line 20)"),
        ("hog", "used more than 256 MB and was stopped"),
        ("junk", "returned 'yes'; return True/False"),
        ("missing", "has no function named missing"),
    ],
)
def test_a_code_scorer_that_goes_wrong_is_its_cells_error_in_words(function: str, words: str) -> None:
    outcome = broken(scorers.code(GRADERS, function, timeout_s=1, memory_mb=256))
    assert outcome.error is not None and words in outcome.error
    # No score from it: the output was never judged. The other scorer's verdict stands.
    assert [(s.scorer, s.passed) for s in outcome.scores] == [("contains", True)]
    assert not outcome.passed


def test_a_broken_code_scorer_counts_as_an_error_not_in_its_pass_rate() -> None:
    # q0 "0" passes the grader, q1 "x" fails it, q2 breaks it (the file's `raises` for any item "q2").
    result = run_all([scorers.code(GRADERS, "fails_on_q2")], ["0", "x", "2"])
    [summary] = result.summary()
    assert (summary.items, summary.passed, summary.errors) == (3, 1, 1)
    assert summary.mean_scores == {"code": 0.5}  # the broken cell has no score to average
    figures = scorer_figures(result.outcomes, "code", "v")
    assert (figures.cells, figures.passed) == (2, 1)
    assert "failed: KeyError" in (result.outcomes[2].error or "")


def test_a_missing_file_or_bad_limit_gets_words(tmp_path: Path) -> None:
    outcome = broken(scorers.code(str(tmp_path / "gone.py")))
    assert outcome.error is not None and "gone.py does not exist" in outcome.error
    with pytest.raises(ScorerError, match="timeout_s"):
        scorers.code(GRADERS, timeout_s=0)
