"""The Chat page under a spending limit: a refused send keeps the prompt in the input, 80 % warns."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.budgets.scripted import MODEL, scripted
from yiem.budgets import Budget, BudgetStore
from yiem.identity import LOCAL_OWNER
from yiem.scripted_llm import ScriptedLlm
from yiem.store import ConversationStore, create_store_engine

ROOT = Path(__file__).resolve().parents[2]


def _app(db_url: str, llm: ScriptedLlm, limit: float) -> AppTest:
    BudgetStore(create_store_engine(db_url)).set(
        LOCAL_OWNER, Budget(scope="person", period="month", limit_usd=limit)
    )
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["llm_override"] = (llm, MODEL)
    return at.run()


def test_a_send_over_the_limit_is_refused_in_words_and_the_prompt_stays(db_url: str) -> None:
    llm = scripted(1)
    at = _app(db_url, llm, limit=0.02)  # the send may cost up to $0.030

    at.chat_input[0].set_value("Please keep this prompt").run()

    assert not at.exception, at.exception
    errors = "\n".join(str(error.value) for error in at.error)
    assert "Not sent" in errors and "monthly limit of $0.0200" in errors, errors
    assert "back in the box below" in errors
    proto = at.chat_input[0].proto
    assert proto.set_value and proto.value == "Please keep this prompt"
    assert llm.requests == []  # the model was never called
    assert ConversationStore(create_store_engine(db_url)).list_conversations() == []
    assert "c" not in at.query_params


def test_a_send_that_uses_80_percent_is_sent_with_a_warning(db_url: str) -> None:
    llm = scripted(1)
    at = _app(db_url, llm, limit=0.035)  # up to $0.030 of $0.035: 86 %

    at.chat_input[0].set_value("hello").run()

    assert not at.exception, at.exception
    assert len(llm.requests) == 1
    warnings = "\n".join(str(warning.value) for warning in at.warning)
    assert "monthly limit is 86% used" in warnings, warnings
