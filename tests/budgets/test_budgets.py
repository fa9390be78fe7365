"""Limits, the 80 % warning and refusals before any request, on a store with a priced scripted model."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine, select

from tests.budgets.scripted import MODEL, REPLY_COST, UNPRICED, reply, scripted
from yiem.budgets import PRICE_UNKNOWN, Budget, BudgetError, BudgetGuard, BudgetStore, burn_down, request_cost
from yiem.events import MessageEndEvent
from yiem.identity import LOCAL_OWNER, Owner
from yiem.loop import run_agent_loop
from yiem.store import ConversationStore, budget_reservations, create_store_engine
from yiem.types import AgentContext, AgentLoopConfig, AssistantMessage, UserMessage

ALICE = Owner(id="alice@example.com", label="Alice", signed_in=True)
BOB = Owner(id="bob@example.com", label="Bob", signed_in=True)


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    return create_store_engine(f"sqlite:///{tmp_path / 'budgets.db'}")


def _spend(engine: Engine, owner: str, replies: int) -> None:
    store = ConversationStore(engine, owner)
    conversation = store.create(title="spent")
    for _ in range(replies):
        store.append_message(conversation.id, reply(), MODEL)


def _send(engine: Engine, owner: str, llm: object) -> AssistantMessage:
    """One prompt through the loop with the budgeted client; the reply saved as Chat saves it."""
    store = ConversationStore(engine, owner)
    conversation = store.create(title="sent")
    context = AgentContext(messages=[UserMessage.from_text("hi")])
    replies = []
    for event in run_agent_loop(context, llm, MODEL, AgentLoopConfig(max_tokens=1000)):  # type: ignore[arg-type]
        if isinstance(event, MessageEndEvent) and isinstance(event.message, AssistantMessage):
            store.append_message(conversation.id, event.message, MODEL)
            replies.append(event.message)
    return replies[-1]


def test_the_estimate_is_the_input_guess_plus_max_tokens_at_the_models_price() -> None:
    estimate = request_cost(MODEL, "", [UserMessage.from_text("x" * 400)], 1000)
    assert estimate == pytest.approx((100 * 10 + 1000 * 30) / 1e6)
    assert request_cost(UNPRICED, "", [UserMessage.from_text("hi")], 1000) is None


def test_a_send_warns_at_80_percent_and_is_refused_before_crossing(engine: Engine) -> None:
    BudgetStore(engine).set(LOCAL_OWNER, Budget(scope="person", period="month", limit_usd=0.10))
    guard = BudgetGuard(engine, LOCAL_OWNER.id)
    _spend(engine, LOCAL_OWNER.id, 1)  # $0.031 of $0.10

    assert guard.check("scripted", REPLY_COST).verdict == "ok"  # $0.062 after: 62 %
    _spend(engine, LOCAL_OWNER.id, 1)  # $0.062
    warned = guard.check("scripted", 0.02)  # $0.082 after: 82 %
    assert warned.verdict == "warn" and warned.allowed
    assert "82% used" in warned.message
    refused = guard.check("scripted", REPLY_COST + 0.01)  # $0.103 would cross $0.10
    assert refused.verdict == "refuse" and not refused.allowed
    assert "Not sent" in refused.message and "$0.1000" in refused.message


def test_a_refused_request_is_never_sent_and_says_why(engine: Engine) -> None:
    BudgetStore(engine).set(LOCAL_OWNER, Budget(scope="person", period="day", limit_usd=0.05))
    _spend(engine, LOCAL_OWNER.id, 1)  # $0.031 spent; the next may cost up to $0.030: crosses $0.05
    llm = scripted(1)
    guard = BudgetGuard(engine, LOCAL_OWNER.id)

    answered = _send(engine, LOCAL_OWNER.id, guard.wrap(llm))

    assert llm.requests == []  # the scripted model was never called
    assert answered.stop_reason == "error"
    assert answered.error_message and "daily limit of $0.0500" in answered.error_message
    with engine.connect() as conn:
        assert conn.execute(select(budget_reservations)).all() == []


def test_a_sent_request_reserves_then_settles_to_its_real_cost_once_its_row_exists(
    engine: Engine,
) -> None:
    BudgetStore(engine).set(LOCAL_OWNER, Budget(scope="team", period="month", limit_usd=1.0))
    guard = BudgetGuard(engine, LOCAL_OWNER.id)
    reserved = guard.ledger.reserve(LOCAL_OWNER.id, "scripted", MODEL.id, 0.5)
    assert reserved.reservation_id is not None
    assert guard.check("scripted", 0.6).verdict == "refuse"  # the $0.5 in flight counts
    guard.ledger.release(reserved.reservation_id)

    llm = scripted(1)
    answered = _send(engine, LOCAL_OWNER.id, guard.wrap(llm))
    assert answered.stop_reason == "stop" and len(llm.requests) == 1
    standing = guard.check("scripted", 0.0).standings[0]
    # The usage row counts and its settled reservation no longer does: $0.031 once, not twice.
    assert standing.spent == pytest.approx(REPLY_COST)
    assert standing.reserved == 0.0


def test_an_unpriced_model_is_allowed_with_a_warning_and_not_counted(engine: Engine) -> None:
    BudgetStore(engine).set(LOCAL_OWNER, Budget(scope="person", period="day", limit_usd=0.01))
    guard = BudgetGuard(engine, LOCAL_OWNER.id)
    checked = guard.check_request(UNPRICED, "", [UserMessage.from_text("hi")], 1000)
    assert checked.verdict == "warn" and checked.allowed
    assert PRICE_UNKNOWN in checked.message
    assert guard.ledger.reserve(LOCAL_OWNER.id, "scripted", UNPRICED.id, None).reservation_id is None


def test_no_limit_means_every_request_is_ok_without_words(engine: Engine) -> None:
    checked = BudgetGuard(engine, LOCAL_OWNER.id).check("scripted", 100.0)
    assert (checked.verdict, checked.message, checked.standings) == ("ok", "", [])


def test_each_person_limits_count_their_own_spend_and_team_limits_everyones(engine: Engine) -> None:
    limits = BudgetStore(engine)
    with pytest.raises(BudgetError, match="Only an admin"):
        limits.set(ALICE, Budget(limit_usd=1.0))
    boss = Owner(id="boss@example.com", label="Boss", is_admin=True, signed_in=True)
    limits.set(boss, Budget(scope="person", owner="", provider="scripted", period="day", limit_usd=0.07))
    _spend(engine, ALICE.id, 2)  # $0.062 of Alice's own $0.07

    assert BudgetGuard(engine, ALICE.id).check("scripted", 0.02).verdict == "refuse"
    assert BudgetGuard(engine, BOB.id).check("scripted", 0.02).verdict == "ok"
    assert BudgetGuard(engine, BOB.id).check("another", 5.0).verdict == "ok"  # other providers: no limit

    limits.set(boss, Budget(scope="team", period="month", limit_usd=0.08))
    assert BudgetGuard(engine, BOB.id).check("scripted", 0.02).verdict == "refuse"  # the team's $0.062
    # Setting the same rule again changes its limit instead of adding a second one.
    limits.set(boss, Budget(scope="team", period="month", limit_usd=0.5))
    assert [b.limit_usd for b in limits.all() if b.scope == "team"] == [0.5]


def test_the_burn_down_accumulates_the_periods_spend(engine: Engine) -> None:
    budget = BudgetStore(engine).set(LOCAL_OWNER, Budget(scope="person", period="day", limit_usd=0.10))
    _spend(engine, LOCAL_OWNER.id, 2)
    burned = burn_down(engine, budget, LOCAL_OWNER.id)
    assert burned.cumulative[0] == 0.0
    assert burned.spent == pytest.approx(2 * REPLY_COST)
    assert burned.start <= burned.times[-1] <= burned.end
