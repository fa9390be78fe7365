"""The Chat page's context gauge and the cost of the next send (issue 15), under AppTest with ScriptedLlm."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from yiem.scripted_llm import ScriptedLlm
from yiem.store import ConversationStore, create_store_engine
from yiem.types import LlmModel, ModelCost

ROOT = Path(__file__).resolve().parents[2]
# A window of 1,000 tokens, so a reply that used 790 + 10 tokens fills 80% of it.
SMALL = LlmModel(
    id="scripted-1",
    provider="scripted",
    cost=ModelCost(input=3.0, output=15.0),
    price_known=True,
    price_source="models file /tmp/models.toml",
    context_window=1000,
)
FIRST = {"role": "assistant", "content": "Noted.", "usage": {"inputTokens": 790, "outputTokens": 10}}


def _app(llm: ScriptedLlm, model: LlmModel = SMALL) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["llm_override"] = (llm, model)
    return at.run()


def _captions(at: AppTest) -> list[str]:
    return [str(caption.value) for caption in at.caption]


def _gauge(at: AppTest) -> str:
    (words,) = [caption for caption in _captions(at) if "of the context window" in caption]
    return words


def _input_text(at: AppTest) -> str | None:
    proto = at.chat_input[0].proto
    return proto.value if proto.set_value else None


def _store(db_url: str) -> ConversationStore:
    return ConversationStore(create_store_engine(db_url))


def test_the_gauge_turns_amber_at_80_percent(db_url: str) -> None:
    at = _app(ScriptedLlm([FIRST]))
    assert not at.exception, at.exception
    assert _gauge(at).startswith(":gray[") and "0 of 1,000 tokens" in _gauge(at)
    at.chat_input[0].set_value("Remember this").run()
    assert not at.exception, at.exception
    assert _gauge(at) == (
        ":orange[:material/data_usage: 800 of 1,000 tokens of the context window (80%): nearly full. "
        "Start a new chat or drop the oldest turns before it fills up.]"
    )
    assert at.get("progress")[0].proto.value == 80


def test_the_cost_of_the_next_send_is_shown_with_the_price_source(db_url: str) -> None:
    at = _app(ScriptedLlm([FIRST]))
    at.chat_input[0].set_value("Remember this").run()
    # 800 tokens in × $3/M + 10 out (the one reply's output) × $15/M = $0.0024 + $0.00015.
    expected = (
        ":material/payments: This send ≈ $0.002550 (800 tokens in + about 10 out; "
        "prices from models file /tmp/models.toml); your message adds its own."
    )
    assert expected in _captions(at), _captions(at)


def test_a_model_without_price_or_window_says_so(db_url: str) -> None:
    local = LlmModel(id="smollm2", provider="local", price_source="local model: no price")
    at = _app(ScriptedLlm(["ok"]), local)
    at.chat_input[0].set_value("hello").run()
    captions = _captions(at)
    unknown = "The model's context window is unknown, so there is no gauge of it."
    assert f":material/data_usage: {unknown}" in captions
    assert not at.get("progress")
    assert any("price unknown (local model: no price)" in caption for caption in captions), captions
    assert not any("This send ≈ $" in caption for caption in captions)


def test_a_send_that_does_not_fit_is_refused_and_stays_in_the_input(db_url: str) -> None:
    llm = ScriptedLlm([FIRST, "Carried on."])
    at = _app(llm)
    at.chat_input[0].set_value("Remember this").run()
    conversation_id = at.query_params["c"]
    long_prompt = "x" * 800  # 200 tokens by the four-characters rule: 800 + 200 fill the window
    at.chat_input[0].set_value(long_prompt).run()
    assert not at.exception, at.exception
    assert len(llm.requests) == 1  # nothing was sent
    assert len(_store(db_url).load_messages(conversation_id)) == 2  # nor saved
    assert _input_text(at) == long_prompt
    errors = [str(error.value) for error in at.error]
    assert any("Not sent" in e and "start a new chat or drop the oldest turns" in e for e in errors), errors
    assert "1,000 of 1,000 tokens of the context window (100%): this does not fit" in _gauge(at)
    assert _gauge(at).startswith(":red[")

    # One click goes on in a new conversation with the latest turns; the prompt is still in the input.
    at.button(key="context-drop").click().run()
    assert not at.exception, at.exception
    carried = at.query_params["c"]
    assert carried != conversation_id
    assert [m.text for m in _store(db_url).load_messages(carried)] == ["Remember this", "Noted."]
    assert len(_store(db_url).load_messages(conversation_id)) == 2  # the old conversation is kept
    assert _input_text(at) == long_prompt
    assert _gauge(at).startswith(":gray[")  # the carried reply's old usage no longer counts
    at.chat_input[0].set_value(long_prompt).run()
    assert not at.exception, at.exception
    assert len(llm.requests) == 2
    assert [m.role for m in _store(db_url).load_messages(carried)] == ["user", "assistant"] * 2


def test_start_a_new_chat_from_a_refused_send_keeps_the_prompt(db_url: str) -> None:
    full = {"role": "assistant", "content": "Full.", "usage": {"inputTokens": 990, "outputTokens": 10}}
    at = _app(ScriptedLlm([full]))
    at.chat_input[0].set_value("fill it").run()
    at.chat_input[0].set_value("next question").run()
    assert _input_text(at) == "next question"
    at.button(key="context-new").click().run()
    assert not at.exception, at.exception
    assert "c" not in at.query_params
    assert _input_text(at) == "next question"
    assert "0 of 1,000 tokens" in _gauge(at)  # an empty chat: the prompt counts once it is sent again
    assert "context-new" not in [button.key for button in at.button]


def test_dropping_turns_when_even_the_latest_does_not_fit_starts_a_new_chat(db_url: str) -> None:
    # A reply of 2,400 characters is 600 tokens: more than half of the 1,000-token window alone.
    usage = {"inputTokens": 400, "outputTokens": 600}
    long_reply = {"role": "assistant", "content": "y" * 2400, "usage": usage}
    at = _app(ScriptedLlm([long_reply]))
    at.chat_input[0].set_value("write a lot").run()
    conversation_id = at.query_params["c"]
    at.chat_input[0].set_value("and more").run()
    at.button(key="context-drop").click().run()
    assert not at.exception, at.exception
    assert "c" not in at.query_params
    assert any("Even the latest turn alone" in str(error.value) for error in at.error)
    assert _input_text(at) == "and more"
    assert len(_store(db_url).load_messages(conversation_id)) == 2
