"""Alternatives and forks on the Chat page (AppTest with ScriptedLlm): nothing sent is lost."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from yiem.scripted_llm import ScriptedLlm
from yiem.store import ConversationStore, create_store_engine
from yiem.types import LlmModel, ModelCost

ROOT = Path(__file__).resolve().parents[2]
PRICED = LlmModel(
    id="scripted-1", provider="scripted", cost=ModelCost(input=3.0, output=15.0), price_known=True
)


def _app(llm: ScriptedLlm) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["llm_override"] = (llm, PRICED)
    return at.run()


def _texts(at: AppTest, role: str) -> list[str]:
    return [
        "\n".join(str(block.value) for block in message.markdown)
        for message in at.chat_message
        if message.name == role
    ]


def _counters(at: AppTest) -> list[str]:
    return [c.value for c in at.caption if " / " in c.value and c.value.replace(" / ", "").isdigit()]


def test_regenerate_twice_then_move_between_the_three_answers(db_url: str) -> None:
    usage = {"inputTokens": 100, "outputTokens": 20}
    replies = [{"role": "assistant", "content": text, "usage": usage} for text in ("one", "two", "three")]
    at = _app(ScriptedLlm(replies))
    at.chat_input[0].set_value("question").run()
    assert _counters(at) == []  # no alternatives yet: no controls drawn
    at.button(key="regenerate").click().run()
    at.button(key="regenerate").click().run()
    assert not at.exception, at.exception
    assert (_texts(at, "assistant"), _counters(at)) == (["three"], ["3 / 3"])
    where = f"{at.query_params['c']}-1"
    assert at.button(key=f"alt-next-{where}").disabled
    at.button(key=f"alt-prev-{where}").click().run()
    at.button(key=f"alt-prev-{where}").click().run()
    assert (_texts(at, "assistant"), _counters(at)) == (["one"], ["1 / 3"])
    assert at.button(key=f"alt-prev-{where}").disabled
    # Each alternative keeps its own tokens and cost: 100 × $3/M + 20 × $15/M.
    assert any("100 in · 20 out · 0 cached · $0.000600" in c.value for c in at.caption)
    at.run()  # the choice is stored: a fresh session on the same link shows it too
    fresh = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    fresh.query_params["c"] = at.query_params["c"]
    fresh.run()
    assert (_texts(fresh, "assistant"), _counters(fresh)) == (["one"], ["1 / 3"])


def test_edit_then_return_to_the_old_branch(db_url: str) -> None:
    at = _app(ScriptedLlm(["about apples", "more apples", "about pears"]))
    at.chat_input[0].set_value("apples?").run()
    at.chat_input[0].set_value("and more?").run()
    where = f"{at.query_params['c']}-0"
    at.button(key=f"edit-{where}").click().run()
    at.text_area(key=f"edit-text-{where}").set_value("pears?").run()
    at.button(key=f"edit-send-{where}").click().run()
    assert not at.exception, at.exception
    assert (_texts(at, "user"), _texts(at, "assistant")) == (["pears?"], ["about pears"])
    assert _counters(at) == ["2 / 2"]
    at.button(key=f"alt-prev-{where}").click().run()
    assert _texts(at, "user") == ["apples?", "and more?"]
    assert _texts(at, "assistant") == ["about apples", "more apples"]
    assert _counters(at) == ["1 / 2"]


def test_new_chat_from_here_opens_a_copy_of_the_path(db_url: str) -> None:
    at = _app(ScriptedLlm(["first reply", "second reply"]))
    at.chat_input[0].set_value("start").run()
    at.chat_input[0].set_value("go on").run()
    origin = at.query_params["c"]
    at.button(key=f"fork-{origin}-1").click().run()
    assert not at.exception, at.exception
    fork = at.query_params["c"]
    assert fork != origin
    assert (_texts(at, "user"), _texts(at, "assistant")) == (["start"], ["first reply"])
    store = ConversationStore(create_store_engine(db_url))
    assert (store.get(fork).forked_from, store.get(fork).title) == (origin, "start (fork)")
    assert len(store.load_messages(origin)) == 4  # the origin is untouched
    assert any(b.key == f"open-{fork}" for b in at.sidebar.button)  # listed in the sidebar
    assert at.button(key="fork-origin").label == "Started from “start”: open it"
    at.button(key="fork-origin").click().run()
    assert at.query_params["c"] == origin
    assert _texts(at, "assistant") == ["first reply", "second reply"]
    store.delete(origin)
    at.query_params["c"] = fork
    at.run()
    assert any("since been deleted" in c.value for c in at.caption)


def test_regenerate_with_another_model_keeps_both_answers_and_the_choice(db_url: str) -> None:
    at = _app(ScriptedLlm(["from the first model", "from the second model"]))
    assert not [p for p in at.main.get("popover")]  # the embedded model alone: nothing to pick
    at.sidebar.selectbox(key="set-provider").set_value("openai").run()
    at.sidebar.selectbox(key="set-model-openai").set_value("gpt-4o").run()
    at.chat_input[0].set_value("question").run()
    at.selectbox(key="regen-model").set_value("gpt-4o-mini").run()
    at.button(key="regen-with").click().run()
    assert not at.exception, at.exception
    assert (_texts(at, "assistant"), _counters(at)) == (["from the second model"], ["2 / 2"])
    assert "by scripted-1" in [c.value for c in at.caption]  # which model wrote the alternative shown
    assert at.session_state["settings"].model_id == "gpt-4o-mini"
    assert at.sidebar.selectbox(key="set-model-openai").value == "gpt-4o-mini"  # Settings agrees
    store = ConversationStore(create_store_engine(db_url))
    setup = store.get(at.query_params["c"]).setup
    assert setup is not None and setup["model_id"] == "gpt-4o-mini"  # the conversation goes on with it


def test_a_regenerate_that_cannot_reach_a_model_keeps_the_reply_in_view(db_url: str) -> None:
    at = _app(ScriptedLlm(["the only answer"]))
    at.chat_input[0].set_value("question").run()
    at.session_state["llm_override"] = None  # from now on the settings' model, which has no key
    at.sidebar.selectbox(key="set-provider").set_value("openai").run()
    at.button(key="regenerate").click().run()
    assert not at.exception, at.exception
    assert any("press Regenerate after changing the settings" in e.value for e in at.error)
    assert _texts(at, "assistant") == ["the only answer"]  # nothing new was added, nothing hidden
    assert _counters(at) == []
