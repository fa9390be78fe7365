"""A rubric judge's requests count against the spending limits like the variants': reserved first,
refused in words when they would cross a limit, and settled into the judge's usage rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from tests.budgets.scripted import MODEL, REPLY_COST, reply
from yiem.budgets import Budget, BudgetGuard, BudgetStore, Ledger
from yiem.costs import UsageFilter, counts
from yiem.experiments import Dataset, ExperimentStore, Variant, run_experiment, scorers
from yiem.identity import LOCAL_OWNER
from yiem.scripted_llm import ScriptedLlm
from yiem.store import budget_reservations, create_store_engine
from yiem.types import AssistantMessage, LlmUsage, TextContent

JUDGE_MODEL = MODEL.model_copy(update={"id": "judge-test"})
# 200 input and 100 output tokens at $10 / $30 per million.
JUDGE_COST = 0.005


def verdict(_context: Any = None) -> AssistantMessage:
    return AssistantMessage(
        content=[TextContent(text='{"score": 1, "reason": "fine"}')],
        api=JUDGE_MODEL.api,
        provider=JUDGE_MODEL.provider,
        model=JUDGE_MODEL.id,
        usage=LlmUsage(input_tokens=200, output_tokens=100),
        stop_reason="stop",
    )


def _run(tmp_path: Path, limit: float, items: int) -> tuple[Any, ScriptedLlm, ScriptedLlm, Any]:
    engine = create_store_engine(f"sqlite:///{tmp_path / 'judge.db'}")
    BudgetStore(engine).set(LOCAL_OWNER, Budget(scope="person", period="month", limit_usd=limit))
    answers, judge = ScriptedLlm([reply] * items), ScriptedLlm([verdict] * items)
    rubric = scorers.rubric("Is it an answer?", Variant(name="judge", llm=judge, model=JUDGE_MODEL))
    result = _experiment(engine, answers, rubric, items, BudgetGuard(engine, LOCAL_OWNER.id))
    return result, answers, judge, engine


def _experiment(engine: Any, answers: ScriptedLlm, rubric: Any, items: int, budget: Any) -> Any:
    return run_experiment(
        Dataset.from_records([{"id": f"q{n}", "input": f"question {n}"} for n in range(items)]),
        [Variant(name="v", llm=answers, model=MODEL)],
        [rubric],
        concurrency=1,
        store=ExperimentStore(engine),
        budget=budget,
    )


def test_a_judge_request_that_would_cross_the_limit_is_refused_in_words(tmp_path: Path) -> None:
    # The answer ($0.031) fits $0.035; the verdict may cost up to 256 output tokens ($0.0077) more.
    result, answers, judge, _engine = _run(tmp_path, 0.035, 3)

    assert len(answers.requests) == 1
    assert judge.requests == []  # refused before it was sent
    assert result.status == "budget"
    assert result.stop_reason and "monthly limit of $0.0350" in result.stop_reason
    [kept] = result.outcomes  # the answer is kept, with the judge's refusal as its score's reason
    assert kept.output == "an answer"
    assert not kept.scores[0].passed
    assert "Not sent" in kept.scores[0].reason and "$0.0350" in kept.scores[0].reason


def test_judge_spending_is_reserved_then_counted_from_its_usage_rows(tmp_path: Path) -> None:
    result, _answers, judge, engine = _run(tmp_path, 10.0, 2)

    assert result.status == "finished" and len(judge.requests) == 2
    assert all(o.scores[0].passed for o in result.outcomes)
    with engine.connect() as conn:
        reserved = conn.execute(select(budget_reservations.c.model, func.count()).group_by("model")).all()
    assert dict(reserved) == {MODEL.id: 2, JUDGE_MODEL.id: 2}
    spent = counts(engine, UsageFilter()).cost_total
    assert abs(spent - 2 * (REPLY_COST + JUDGE_COST)) < 1e-9
    # Each settled reservation gave way to its usage row: nothing is counted twice.
    [standing] = Ledger(engine).check(LOCAL_OWNER.id, MODEL.provider, 0.0).standings
    assert standing.reserved == 0.0
    assert abs(standing.spent - spent) < 1e-9


def test_a_judge_used_again_without_limits_is_not_held_to_the_last_runs(tmp_path: Path) -> None:
    engine = create_store_engine(f"sqlite:///{tmp_path / 'again.db'}")
    BudgetStore(engine).set(LOCAL_OWNER, Budget(scope="person", period="month", limit_usd=0.035))
    judge = ScriptedLlm([verdict])
    rubric = scorers.rubric("Is it an answer?", Variant(name="judge", llm=judge, model=JUDGE_MODEL))
    _experiment(engine, ScriptedLlm([reply]), rubric, 1, BudgetGuard(engine, LOCAL_OWNER.id))
    assert judge.requests == []  # refused under the limits

    again = _experiment(engine, ScriptedLlm([reply]), rubric, 1, None)
    assert len(judge.requests) == 1 and again.outcomes[0].scores[0].passed
