"""The Experiments page's agent-task items under AppTest: conversations imported from JSONL (tool calls
and results included) drawn readably, a line that is not a conversation refused naming its line, and
simulated users (a persona and a goal) typed in the table, a persona with no goal refused in words."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from tests.experiments.models import PRICED as MODEL_PRICED
from tests.experiments.models import REPLY_COST, priced_reply
from ui.experiments.dataset import _frame, _items
from yiem.experiments import (
    Dataset,
    DatasetError,
    DatasetItem,
    ExperimentStore,
    SimulatedUser,
    Variant,
    run_experiment,
)
from yiem.scripted_llm import ScriptedLlm
from yiem.store import create_store_engine
from yiem.types import LlmModel, ModelCost

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "ui" / "pages" / "experiments.py")
APP = str(ROOT / "app.py")
PRICED = LlmModel(
    id="scripted-1", provider="scripted", cost=ModelCost(input=3.0, output=15.0), price_known=True
)
TIMEOUT = 60
pytestmark = pytest.mark.usefixtures("db_url")  # each test its own database (tests/fixtures/chat.py)

WEATHER = {
    "id": "weather",
    "messages": [
        {"role": "user", "content": "What is the weather in Oslo?"},
        {
            "role": "assistant",
            "content": [],
            "toolCalls": [{"type": "function", "id": "c1", "name": "weather", "arguments": {"city": "Oslo"}}],
        },
        {"role": "toolResult", "toolCallId": "c1", "toolName": "weather", "content": "sunny, 21 °C"},
        {"role": "assistant", "content": "It is sunny in Oslo."},
    ],
    "input": "And tomorrow?",
    "expected": "rain",
}


def _upload(at: AppTest, text: str) -> None:
    uploader = next(u for u in at.get("file_uploader") if u.label == "Upload CSV or JSONL")
    uploader.set_value([("talks.jsonl", text.encode(), "application/jsonl")]).run()
    assert not at.exception, at.exception


def _texts(at: AppTest) -> str:
    parts: list[Any] = [*at.markdown, *at.caption, *at.text, *at.json, *at.code]
    return "\n".join(str(part.value) for part in parts)


def test_conversations_from_jsonl_are_items_drawn_readably() -> None:
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.run()
    plain = {"id": "hi", "messages": [{"role": "user", "content": "Hello there"}]}
    _upload(at, f"{json.dumps(WEATHER)}\n\n{json.dumps(plain)}\n")
    # The conversation is never offered as the input; the file's own input column is.
    assert "messages" not in at.selectbox(key="exp_w_map_input").options
    assert at.selectbox(key="exp_w_map_input").value == "input"
    at.button(key="exp_w_import").click().run()
    assert not at.exception, at.exception
    items = at.session_state["exp_draft"].dataset.items
    assert [(item.id, len(item.messages), item.input) for item in items] == [
        ("weather", 4, "And tomorrow?"),
        ("hi", 1, ""),
    ]
    table = next(d.value for d in at.dataframe if "item type" in d.value.columns)
    assert list(table["item type"]) == ["conversation of 4 messages", "conversation of 1 message"]
    # A rerun of the table keeps the conversations (the table shows no messages, and "hi" has no input).
    at.run()
    assert [len(item.messages) for item in at.session_state["exp_draft"].dataset.items] == [4, 1]
    at.selectbox(key="exp_w_read_conversation").set_value("weather").run()
    assert not at.exception, at.exception
    shown = _texts(at)
    for words in ("What is the weather in Oslo?", "sunny, 21 °C", "It is sunny in Oslo.", "And tomorrow?"):
        assert words in shown, words
    assert '"city": "Oslo"' in shown  # the tool call's arguments


def test_a_line_that_is_not_a_conversation_is_refused_naming_it_and_nothing_is_lost() -> None:
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.run()
    _upload(at, json.dumps(WEATHER) + "\n")
    at.button(key="exp_w_import").click().run()
    assert [item.id for item in at.session_state["exp_draft"].dataset.items] == ["weather"]
    robot = {"messages": [{"role": "robot", "content": "beep"}]}
    _upload(at, f"{json.dumps(WEATHER)}\n\n{json.dumps(robot)}\n")
    at.button(key="exp_w_import").click().run()
    assert not at.exception, at.exception
    errors = [str(e.value) for e in at.error]
    assert any(e.startswith("Line 3: message 1 is not a conversation message") for e in errors), errors
    assert [item.id for item in at.session_state["exp_draft"].dataset.items] == ["weather"]


def test_a_persona_with_no_goal_is_refused_in_words() -> None:
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.run()
    _upload(at, json.dumps({"id": "trip", "persona": "A busy traveller.", "goal": "Book Oslo."}) + "\n")
    assert at.selectbox(key="exp_w_map_input").value.startswith("(none")
    at.button(key="exp_w_import").click().run()
    (item,) = at.session_state["exp_draft"].dataset.items
    assert item.user is not None and (item.user.persona, item.user.goal) == (
        "A busy traveller.",
        "Book Oslo.",
    )
    table = next(d.value for d in at.dataframe if "item type" in d.value.columns)
    assert list(table["goal"]) == ["Book Oslo."]
    assert list(table["item type"]) == ["simulated user, up to 5 turns"]
    # A persona with no goal, from a file: refused in words naming the line, the item kept.
    _upload(at, json.dumps({"id": "lost", "persona": "A tourist."}) + "\n")
    at.button(key="exp_w_import").click().run()
    errors = [str(e.value) for e in at.error]
    assert "Line 1: a simulated user needs a goal: say what the user wants done (field goal)." in errors
    assert [item.id for item in at.session_state["exp_draft"].dataset.items] == ["trip"]


def test_a_persona_typed_with_no_goal_in_the_table_is_refused_naming_its_row() -> None:
    before = Dataset(items=[DatasetItem(id="trip", user=SimulatedUser(persona="A.", goal="B.", max_turns=3))])
    frame = _frame(before)
    kept = _items(frame, before)
    assert kept[0].user == before.items[0].user  # its turn limit, not shown in the table, is kept
    frame.loc[0, "goal"] = ""
    with pytest.raises(DatasetError, match=r"^Row 1: a simulated user needs a goal"):
        _items(frame, before)


def test_a_var_named_like_a_fixed_column_gets_its_own_column_and_keeps_its_value() -> None:
    # The example's var is `kind`: a second "kind" column made the data editor refuse the whole
    # table, and the Experiments page stopped drawing before its Run tab.
    before = Dataset(items=[DatasetItem(id="q", input="Capital?", vars={"kind": "city", "goal": "x"})])
    frame = _frame(before)
    assert frame.columns.is_unique
    assert {"kind", "goal (var)", "goal", "item type"} <= set(frame.columns)
    assert _items(frame, before)[0].vars == {"kind": "city", "goal": "x"}


def test_the_example_experiment_draws_every_tab(db_url: str) -> None:
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.run()
    at.button(key="exp_start_example").click().run()
    assert not at.exception, at.exception
    assert any(c.value.startswith("Run sends every item to every variant") for c in at.caption)


ORIGINAL = "Your name is Ann, the kite flyer of Tromsø."


@pytest.mark.llama
def test_a_chat_conversation_up_to_here_replays_on_another_model_with_the_diff_and_costs(
    db_url: str,
) -> None:
    # A real Chat conversation of two turns, the replies priced.
    usage = {"inputTokens": 1000, "outputTokens": 200}
    llm = ScriptedLlm(
        [
            {"role": "assistant", "content": "Hello Ann.", "usage": usage},
            # Words SmolLM2 will not say back exactly: its own reply, the same, would show no diff.
            {"role": "assistant", "content": ORIGINAL, "usage": usage},
        ]
    )
    chat = AppTest.from_file(APP, default_timeout=TIMEOUT)
    chat.session_state["llm_override"] = (llm, PRICED)
    chat.run()
    chat.chat_input[0].set_value("Hi, my name is Ann.").run()
    chat.chat_input[0].set_value("What is my name?").run()
    assert not chat.exception, chat.exception
    conversation_id = chat.query_params["c"]
    chat.button(key=f"up-to-here-{conversation_id}-3").click().run()
    assert not chat.exception, chat.exception
    made = next(str(s.value) for s in chat.success if "Experiment" in str(s.value))
    experiment_id = made.split("experiments?e=")[1].split(")")[0]

    page = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    page.query_params["e"] = experiment_id
    page.run()
    assert not page.exception, page.exception
    draft = page.session_state["exp_draft"]
    (item,) = draft.dataset.items
    assert [m.text for m in item.messages] == ["Hi, my name is Ann.", "Hello Ann."]
    assert item.input == "What is my name?" and draft.originals[item.id].text == ORIGINAL
    # Its variant is the model now chosen in Chat's settings: the embedded SmolLM2, not the scripted one.
    (variant,) = draft.variants
    assert variant.provider == "local"
    page.button(key="exp_run").click().run()
    assert not page.exception, page.exception
    page.session_state["exp_live_run"].join(timeout=300)
    page.run()
    page.run()
    assert not page.exception, page.exception
    box = next(c for c in page.get("flex_container") if "exp_replay_" in str(getattr(c, "key", "") or ""))
    shown = [str(t.value) for t in [*box.caption, *box.text, *box.code]]
    original_cost = (1000 * 3.0 + 200 * 15.0) / 1_000_000  # the second reply, at PRICED
    assert f"In Chat (scripted-1) · ${original_cost:.6f}" in shown, shown
    assert f"Replay by {variant.name} · price unknown" in shown, shown
    assert ORIGINAL in shown
    (outcome,) = (
        ExperimentStore(create_store_engine(db_url))
        .load_result(ExperimentStore(create_store_engine(db_url)).list_runs(experiment_id)[0].id)
        .outcomes
    )
    assert outcome.output in shown
    diff = next(t for t in shown if t.startswith("--- original"))
    assert f"-{ORIGINAL}" in diff and f"+{outcome.output.splitlines()[0]}" in diff


def test_a_simulated_users_run_shows_its_turns_and_its_models_cost_apart(db_url: str) -> None:
    store = ExperimentStore(create_store_engine(db_url))
    agent = ScriptedLlm([priced_reply("Which day?"), priced_reply("Booked for Monday.")])
    player = ScriptedLlm([priced_reply("Monday."), priced_reply("GOAL MET")])
    data = Dataset.from_records(
        [{"id": "trip", "input": "A flight to Oslo.", "persona": "A.", "goal": "Book it."}]
    )
    run_experiment(
        data,
        [Variant(name="v", llm=agent, model=MODEL_PRICED)],
        [],
        name="trips",
        user_model=Variant(name="user", llm=player, model=MODEL_PRICED),
        store=store,
    )
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.query_params["e"] = store.list_experiments()[0].id
    at.run()
    assert not at.exception, at.exception
    captions = [str(c.value) for c in at.caption]
    assert f"simulated user: 1 turns · goal met · ${2 * REPLY_COST:.6f} apart" in captions, captions
    assert any(c.startswith("Simulated users' model, counted apart: 240 tokens, $0.000280") for c in captions)
    assert "2 turns" in "\n".join(captions)  # the agent's own turns, beside


def test_the_run_tab_chooses_the_user_model_and_its_most_turns(db_url: str) -> None:
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.run()
    _upload(
        at,
        json.dumps({"id": "trip", "input": "Oslo?", "persona": "A.", "goal": "Book it.", "max_user_turns": 9})
        + "\n",
    )
    at.button(key="exp_w_import").click().run()
    at.selectbox(key="exp_w_user_model_provider").set_value("llamacpp").run()
    at.text_input(key="exp_w_user_model_url").set_value("http://127.0.0.1:9/v1").run()
    at.number_input(key="exp_w_user_model_turns").set_value(2).run()
    assert not at.exception, at.exception
    spec = at.session_state["exp_draft"].spec()
    assert spec.user_model is not None and spec.user_model.provider == "llamacpp"
    assert spec.user_model.base_url == "http://127.0.0.1:9/v1"
    assert spec.dataset.items[0].user.max_turns == 2  # the experiment's most turns, for every item


def test_trajectory_scorers_are_set_up_in_the_scorers_tab(db_url: str) -> None:
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.run()
    at.button(key="exp_w_add_scorer").click().run()
    kind = next(s for s in at.selectbox if s.label == "Kind")
    kind.set_value("tool_sequence").run()
    calls = next(t for t in at.text_area if t.label.startswith("Calls, one per line"))
    calls.set_value('search {"city": "Oslo"}\nbook').run()
    assert not at.exception, at.exception
    (scorer,) = at.session_state["exp_draft"].scorers
    assert scorer.kind == "tool_sequence" and [c.tool for c in scorer.calls] == ["search", "book"]
    assert scorer.calls[0].arguments == {"city": "Oslo"} and scorer.order == "in_order"
    calls = next(t for t in at.text_area if t.label.startswith("Calls, one per line"))
    calls.set_value("search {city}").run()
    assert any("Line 1: the arguments of search are not valid JSON" in str(e.value) for e in at.error)
