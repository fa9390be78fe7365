"""The Experiments page's agent-task items under AppTest: conversations imported from JSONL (tool calls
and results included) drawn readably, a line that is not a conversation refused naming its line, and
simulated users (a persona and a goal) typed in the table, a persona with no goal refused in words."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from tests.ui.test_experiments_page import db_url  # noqa: F401 (the page's database, a fixture)
from ui.experiments.dataset import _frame, _items
from yiem.experiments import Dataset, DatasetError, DatasetItem, SimulatedUser

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "ui" / "pages" / "experiments.py")
TIMEOUT = 60
pytestmark = pytest.mark.usefixtures("db_url")  # each test its own database

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
    table = next(d.value for d in at.dataframe if "kind" in d.value.columns)
    assert list(table["kind"]) == ["conversation of 4 messages", "conversation of 1 messages"]
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
    table = next(d.value for d in at.dataframe if "kind" in d.value.columns)
    assert list(table["goal"]) == ["Book Oslo."]
    assert list(table["kind"]) == ["simulated user, up to 5 turns"]
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
