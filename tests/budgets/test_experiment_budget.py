"""An experiment run under a spending limit stops at it, keeping the items it finished, and says why."""

from __future__ import annotations

from pathlib import Path

from tests.budgets.scripted import MODEL, REPLY_COST, reply
from yiem.budgets import Budget, BudgetGuard, BudgetStore
from yiem.costs import UsageFilter, counts
from yiem.experiments import Dataset, ExperimentStore, Variant, run_experiment
from yiem.identity import LOCAL_OWNER
from yiem.scripted_llm import ScriptedLlm
from yiem.store import create_store_engine

LIMIT = 0.10  # three items of $0.031 fit; a fourth may cost up to $0.030 more and would cross it


def test_the_run_stops_at_the_limit_keeping_finished_items(tmp_path: Path) -> None:
    engine = create_store_engine(f"sqlite:///{tmp_path / 'exp.db'}")
    BudgetStore(engine).set(LOCAL_OWNER, Budget(scope="person", period="month", limit_usd=LIMIT))
    llm = ScriptedLlm([reply] * 6)
    items = Dataset.from_records([{"id": f"q{n}", "input": f"question {n}"} for n in range(6)])

    result = run_experiment(
        items,
        [Variant(name="v", llm=llm, model=MODEL)],
        concurrency=1,
        store=ExperimentStore(engine),
        budget=BudgetGuard(engine, LOCAL_OWNER.id),
    )

    assert result.status == "budget"
    assert [outcome.item_id for outcome in result.outcomes] == ["q0", "q1", "q2"]
    assert len(llm.requests) == 3  # the fourth request was refused before it was sent
    assert result.stop_reason and "monthly limit of $0.1000" in result.stop_reason
    spent = counts(engine, UsageFilter()).cost_total
    assert abs(spent - 3 * REPLY_COST) < 1e-9
    stored = ExperimentStore(engine).get_run(result.run_id)
    assert (stored.status, stored.stop_reason, stored.done) == ("budget", result.stop_reason, 3)
