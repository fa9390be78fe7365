"""The Tools page with tools whose schemas are hostile (AppTest, the scripted server with --hostile)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from tests.fixtures.mcp import SCRIPTED_STDIO

PAGE = str(Path(__file__).resolve().parents[2] / "ui" / "pages" / "tools.py")
SERVER = "hostile"
# Far more than a backtracking engine can get through: a stall shows as AppTest's timeout.
HOSTILE_TEXT = "a" * 60 + "!"


@pytest.fixture
def hostile_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AppTest]:
    """The Tools page connected (from mcp.json) to the scripted server with its hostile tools."""
    entry = {"command": SCRIPTED_STDIO.command, "args": [*SCRIPTED_STDIO.args, "--hostile"]}
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {SERVER: entry}}))
    monkeypatch.setenv("YIEM_MCP_CONFIG", str(config))
    monkeypatch.setenv("YIEM_DATABASE_URL", f"sqlite:///{tmp_path / 'app.db'}")
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    assert SERVER in at.session_state["mcp_clients"], at.session_state["mcp_errors"]
    yield at
    for client in at.session_state["mcp_clients"].values():
        client.close()


def _choose(at: AppTest, tool: str) -> None:
    at.radio(key=f"tools-tool:{SERVER}").set_value(tool).run()
    assert not at.exception, at.exception


def _call(at: AppTest) -> None:
    at.button(key="tools-call").click().run()
    assert not at.exception, at.exception


def _result_texts(at: AppTest) -> list[str]:
    return [markdown.value for markdown in at.markdown]


@pytest.mark.parametrize(
    ("tool", "why"),
    [
        ("properties_list", "is not of type 'object'"),
        ("required_number", "5 is not of type 'array'"),
        ("ref_chain", "goes through more than 64 steps"),
        ("nested_ref_chain", "goes through more than 64 steps"),
    ],
)
def test_a_schema_the_form_cannot_draw_falls_back_to_raw_json_with_a_note(
    hostile_page: AppTest, tool: str, why: str
) -> None:
    """Issue 12: choosing these tools crashed the page (AttributeError, TypeError, RecursionError)."""
    at = hostile_page
    _choose(at, tool)
    notes = [warning.value for warning in at.warning]
    assert any(note.startswith("The form cannot be built from this tool's schema") for note in notes)
    assert any(why in note for note in notes), notes
    raw = at.text_area(key=f"tf:{SERVER}:{tool}:@raw")
    raw.input('{"a": "x"}').run()
    _call(at)
    assert f'{tool} got {{"a": "x"}}' in _result_texts(at)


def test_a_backtracking_pattern_is_checked_without_stalling_the_page(hostile_page: AppTest) -> None:
    """Issue 12: `^(a+)+$` checked against "aaa…a!" by Python's `re` never finished."""
    at = hostile_page
    _choose(at, "backtracking_pattern")
    words = at.text_area(key=f"tf:{SERVER}:backtracking_pattern:words")
    words.input(json.dumps([HOSTILE_TEXT])).run()  # a JSON field is checked as the person types
    assert not at.exception, at.exception
    live = [caption.value for caption in at.caption if "does not match" in caption.value]
    assert live and f"0: '{HOSTILE_TEXT}' does not match '^(a+)+" in live[0], live
    at.text_area(key=f"tf:{SERVER}:backtracking_pattern:word").input(HOSTILE_TEXT)
    _call(at)
    errors = [error.value for error in at.error]
    assert any("does not match" in error for error in errors), errors
    assert not _state(at, "tools-history"), "nothing was sent"

    words.input(json.dumps(["aaa"])).run()
    at.text_area(key=f"tf:{SERVER}:backtracking_pattern:word").input("a" * 60)
    _call(at)
    sent = {"word": "a" * 60, "words": ["aaa"]}
    assert f"backtracking_pattern got {json.dumps(sent, sort_keys=True)}" in _result_texts(at)


def _state(at: AppTest, key: str) -> Any:
    return at.session_state.get(key, None)
