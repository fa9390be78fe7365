"""The Compare fan-out under a spending limit: refused in words before any column sends a request."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.budgets.scripted import MODEL, scripted
from yiem.budgets import Budget, BudgetGuard, BudgetStore
from yiem.compare import CompareError, Comparison
from yiem.identity import LOCAL_OWNER
from yiem.llm import LlmClient
from yiem.model_setup import ModelSetup
from yiem.scripted_llm import ScriptedLlm
from yiem.store import create_store_engine
from yiem.types import LlmModel


def _columns(count: int) -> list[ModelSetup]:
    return [
        ModelSetup.model_validate(
            {"provider": "llamacpp", "base_url": "http://127.0.0.1:9/v1", "model_id": f"m{i}"}
        )
        for i in range(count)
    ]


def test_a_comparison_that_would_cross_the_limit_sends_nothing(tmp_path: Path) -> None:
    engine = create_store_engine(f"sqlite:///{tmp_path / 'cmp.db'}")
    # Each column may cost up to $0.030: two fit under $0.07, three together do not.
    BudgetStore(engine).set(LOCAL_OWNER, Budget(scope="person", period="day", limit_usd=0.07))
    made: list[ScriptedLlm] = []

    def connector(_spec: ModelSetup) -> tuple[LlmClient, LlmModel]:
        made.append(scripted(1))
        return made[-1], MODEL

    guard = BudgetGuard(engine, LOCAL_OWNER.id)
    three = Comparison(_columns(3), connector=connector, budget=guard)
    with pytest.raises(CompareError, match=r"Not sent: this comparison may cost up to \$0\.09"):
        three.start("hello")
    assert not three.running
    assert [llm.requests for llm in made] == [[], [], []]  # no column sent anything

    made.clear()
    pair = Comparison(_columns(2), connector=connector, budget=guard)
    pair.start("hello")
    assert pair.wait(timeout=30)
    assert [column.status for column in pair.columns] == ["done", "done"]
    assert [len(llm.requests) for llm in made] == [1, 1]
