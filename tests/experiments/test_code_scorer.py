"""Code scorers run a person's function in a real subprocess; a hang, a raise, too much memory, junk or a
missing file is that cell's failed score in words, and the app's process carries on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from yiem import LlmModel, ScriptedLlm
from yiem.experiments import Dataset, ScorerError, Variant, run_experiment, scorers
from yiem.experiments.scorers import AnyScorer

GRADERS = str(Path(__file__).parent / "code_scorers" / "graders.py")
MODEL = LlmModel(id="m", provider="scripted")


def run_with(scorer: Any, replies: list[str]) -> list[Any]:
    dataset = Dataset.from_records(
        [{"id": f"q{n}", "input": f"say {n}", "expected": str(n)} for n in range(len(replies))]
    )
    llm = ScriptedLlm([{"content": text, "usage": {"inputTokens": 1, "outputTokens": 1}} for text in replies])
    result = run_experiment(
        dataset, [Variant(name="v", llm=llm, model=MODEL)], [scorer], name="code", concurrency=1
    )
    return [outcome.scores[0] for outcome in result.outcomes]


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
def test_a_code_scorer_that_goes_wrong_fails_its_cell_in_words(function: str, words: str) -> None:
    [score] = run_with(scorers.code(GRADERS, function, timeout_s=1, memory_mb=256), ["0"])
    assert not score.passed and score.score == 0.0
    assert words in score.reason


def test_a_missing_file_or_bad_limit_gets_words(tmp_path: Path) -> None:
    [score] = run_with(scorers.code(str(tmp_path / "gone.py")), ["0"])
    assert "gone.py does not exist" in score.reason
    with pytest.raises(ScorerError, match="timeout_s"):
        scorers.code(GRADERS, timeout_s=0)
