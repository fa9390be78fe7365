"""Two replicas on one PostgreSQL database spending at once never pass a limit by more than one request."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import Engine

from tests.budgets.scripted import MODEL, REPLY_COST, scripted
from tests.budgets.test_budgets import _send
from yiem.budgets import Budget, BudgetGuard, BudgetStore
from yiem.costs import UsageFilter, counts
from yiem.identity import LOCAL_OWNER
from yiem.store import create_store_engine

LIMIT = 0.25  # about eight replies of $0.031
SENDERS_PER_REPLICA = 3


@pytest.fixture
def replicas(postgres_url: str) -> list[Engine]:
    """Two engines (two app replicas, each with its own connection pool) on one database."""
    return [create_store_engine(postgres_url), create_store_engine(postgres_url)]


def test_concurrent_sends_from_two_replicas_stay_within_the_limit(replicas: list[Engine]) -> None:
    BudgetStore(replicas[0]).set(LOCAL_OWNER, Budget(scope="team", period="month", limit_usd=LIMIT))
    senders = [engine for engine in replicas for _ in range(SENDERS_PER_REPLICA)]
    gate = threading.Barrier(len(senders))
    sent = [0] * len(senders)

    def spend_until_refused(index: int) -> None:
        engine = senders[index]
        llm = scripted(50)
        budgeted = BudgetGuard(engine, LOCAL_OWNER.id).wrap(llm)
        gate.wait(timeout=30)
        while _send(engine, LOCAL_OWNER.id, budgeted).stop_reason == "stop":
            pass
        sent[index] = len(llm.requests)

    with ThreadPoolExecutor(max_workers=len(senders)) as pool:
        list(pool.map(spend_until_refused, range(len(senders))))

    for engine in replicas:
        spent = counts(engine, UsageFilter(owner=None))
        assert spent.cost_total <= LIMIT + REPLY_COST
    # Every sender stopped at the limit, and the limit was nearly used: they did spend concurrently.
    total = counts(replicas[0], UsageFilter(owner=None)).cost_total
    assert sum(sent) * REPLY_COST == pytest.approx(total)
    assert total > LIMIT - 2 * REPLY_COST
    assert sum(1 for count in sent if count) >= 2
    assert MODEL.price_known
