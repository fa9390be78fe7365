"""Simulated users: the embedded model and a scripted model take turns as the agent and as the user;
the run ends at the turn limit or when the user says its goal is met, each side's cost kept apart."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from tests.experiments.models import PRICED, REPLY_COST, priced_reply, smol_variant
from yiem import LlmModel, ScriptedLlm
from yiem.budgets import Budget, BudgetGuard, BudgetStore
from yiem.experiments import Dataset, DatasetError, ExperimentError, ExperimentStore, Variant, run_experiment
from yiem.identity import LOCAL_OWNER
from yiem.providers.local_llm import LocalLlmServer
from yiem.store import create_store_engine, usage
from yiem.types import AssistantMessage, UserMessage

FLIGHT = {
    "id": "flight",
    "input": "I need a flight to Oslo.",
    "persona": "A busy traveller who answers in a few words.",
    "goal": "Get a flight to Oslo booked for Monday.",
}


@pytest.mark.llama
def test_a_scripted_user_ends_the_embedded_models_conversation_when_its_goal_is_met(
    llama_server: LocalLlmServer,
) -> None:
    player = ScriptedLlm([priced_reply("Monday, please."), priced_reply("GOAL MET")])
    data = Dataset.from_records([{**FLIGHT, "max_user_turns": 3}])
    result = run_experiment(
        data, [smol_variant(llama_server)], [], user_model=Variant(name="user", llm=player, model=PRICED)
    )
    outcome = result.outcomes[0]
    assert outcome.error is None, outcome.error
    assert [m.role for m in outcome.messages] == ["user", "assistant", "user", "assistant"]
    assert outcome.messages[2].text == "Monday, please."
    assert outcome.goal_met is True and outcome.user_turns == 1 and outcome.turns == 2
    # The user model saw the conversation from its side: the agent's replies are its input.
    second = player.requests[1].messages
    assert [m.role for m in second] == ["assistant", "user", "assistant", "user"]
    assert (
        second[1].text == outcome.messages[1].text
        and "Get a flight to Oslo" in player.requests[0].system_prompt
    )
    # Costs apart: the user model's two priced replies; the embedded model's price is unknown.
    assert outcome.user_cost == pytest.approx(2 * REPLY_COST)
    assert outcome.user_usage is not None and outcome.user_usage.output_tokens == 40
    assert outcome.cost is None and outcome.usage.output_tokens > 0


@pytest.mark.llama
def test_the_embedded_model_plays_the_user_up_to_its_turn_limit(llama_server: LocalLlmServer) -> None:
    agent = ScriptedLlm([priced_reply("To Oslo on which day?"), priced_reply("Booked.")])
    data = Dataset.from_records([{**FLIGHT, "max_user_turns": 1}])
    variant = Variant(name="scripted", llm=agent, model=PRICED)
    result = run_experiment(data, [variant], [], user_model=smol_variant(llama_server, "user"))
    outcome = result.outcomes[0]
    assert outcome.error is None, outcome.error
    assert outcome.goal_met is False and outcome.user_turns == 1 and outcome.turns == 2
    users = [m for m in outcome.messages if isinstance(m, UserMessage)]
    assert len(users) == 2 and users[1].text.strip()  # the embedded model's words, as the user
    assert agent.requests[1].messages[2].text == users[1].text  # the agent answered them
    assert isinstance(outcome.messages[-1], AssistantMessage) and outcome.output == "Booked."
    assert outcome.cost == pytest.approx(2 * REPLY_COST)
    assert outcome.user_cost is None and outcome.user_usage is not None  # unpriced, counted apart
    assert outcome.user_usage.output_tokens > 0


def test_a_persona_with_no_goal_is_refused_in_words() -> None:
    with pytest.raises(DatasetError, match="Row 1: a simulated user needs a goal"):
        Dataset.from_records([{"input": "hi", "persona": "A traveller."}])
    with pytest.raises(DatasetError, match="Line 1: a simulated user needs a goal"):
        Dataset.from_jsonl('{"user": {"persona": "A traveller.", "goal": "  "}}')


def test_an_experiment_with_simulated_users_needs_a_user_model() -> None:
    data = Dataset.from_records([FLIGHT])
    with pytest.raises(ExperimentError, match="choose the model that plays the user"):
        run_experiment(data, [Variant(name="v", llm=ScriptedLlm(["hi"]), model=PRICED)], [])


def test_a_simulated_users_transcript_and_cost_are_stored(tmp_path: Path) -> None:
    store = ExperimentStore(create_store_engine(f"sqlite:///{tmp_path / 'app.db'}"))
    agent = ScriptedLlm([priced_reply("Which day?"), priced_reply("Booked for Monday.")])
    player = ScriptedLlm([priced_reply("Monday."), priced_reply("GOAL MET")])
    result = run_experiment(
        Dataset.from_records([FLIGHT]),
        [Variant(name="v", llm=agent, model=PRICED)],
        [],
        user_model=Variant(name="user", llm=player, model=PRICED),
        store=store,
    )
    (loaded,) = store.load_result(result.run_id).outcomes
    assert (loaded.goal_met, loaded.user_turns, loaded.turns) == (True, 1, 2)
    assert loaded.user_cost == pytest.approx(2 * REPLY_COST) and loaded.cost == pytest.approx(2 * REPLY_COST)
    transcript = store.transcript(loaded)
    assert [m.text for m in transcript] == [
        "I need a flight to Oslo.",
        "Which day?",
        "Monday.",
        "Booked for Monday.",
    ]


def _usage_rows(store: ExperimentStore) -> list[tuple[str, float]]:
    with store.engine.connect() as conn:
        return [(r.stop_reason, r.cost_total) for r in conn.execute(select(usage)).all()]


def test_the_simulated_users_usage_rows_are_its_own_and_named_so(tmp_path: Path) -> None:
    store = ExperimentStore(create_store_engine(f"sqlite:///{tmp_path / 'app.db'}"))
    agent = ScriptedLlm([priced_reply("Which day?"), priced_reply("Booked for Monday.")])
    player = ScriptedLlm([priced_reply("Monday."), priced_reply("GOAL MET")])
    run_experiment(
        Dataset.from_records([FLIGHT]),
        [Variant(name="v", llm=agent, model=PRICED)],
        [],
        user_model=Variant(name="user", llm=player, model=PRICED),
        store=store,
    )
    rows = _usage_rows(store)
    reasons = sorted(reason for reason, _cost in rows)
    assert reasons == ["end_turn", "end_turn", "simulated user", "simulated user"]
    played = sum(cost for reason, cost in rows if reason == "simulated user")
    assert played == pytest.approx(2 * REPLY_COST)


def test_the_user_models_requests_are_held_to_the_spending_limits(tmp_path: Path) -> None:
    engine = create_store_engine(f"sqlite:///{tmp_path / 'app.db'}")
    # A limit below one request of the priced user model; the agent's model has no price: let through.
    BudgetStore(engine).set(LOCAL_OWNER, Budget(scope="person", period="day", limit_usd=0.0001))
    agent = ScriptedLlm(["Which day?"])
    player = ScriptedLlm([priced_reply("Monday.")])
    result = run_experiment(
        Dataset.from_records([FLIGHT]),
        [Variant(name="v", llm=agent, model=LlmModel(id="free", provider="scripted"))],
        [],
        user_model=Variant(name="user", llm=player, model=PRICED),
        budget=BudgetGuard(engine, LOCAL_OWNER.id),
    )
    assert player.requests == []  # refused before it was sent
    assert result.status == "budget" and result.stop_reason and "limit" in result.stop_reason
