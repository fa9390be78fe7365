"""Every session key is declared once, with its type, in ui/state.py (issue 27): a scan of ui/ and app.py."""

from __future__ import annotations

import ast
from pathlib import Path

import ui.state as state

ROOT = Path(__file__).resolve().parents[2]
HOME = ROOT / "ui" / "state.py"


def _sources() -> list[Path]:
    return [*sorted((ROOT / "ui").rglob("*.py")), ROOT / "app.py"]


def raw_session_access(source: str) -> list[int]:
    """The lines that touch `st.session_state` (or `streamlit.session_state`) themselves."""
    return sorted(
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute) and node.attr == "session_state"
    )


def _declared_names() -> set[str]:
    return {value.name for value in vars(state).values() if isinstance(value, state.Key)}


def spelt_again(source: str, declared: set[str]) -> list[tuple[int, str]]:
    """Widget `key="..."` literals that spell a declared key's name instead of using its Key."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.keyword) and node.arg == "key":
            value = node.value
            if isinstance(value, ast.Constant) and value.value in declared:
                found.append((value.lineno, value.value))
    return found


def test_no_module_but_ui_state_touches_session_state() -> None:
    offenders = {
        str(path.relative_to(ROOT)): lines
        for path in _sources()
        if path != HOME and (lines := raw_session_access(path.read_text(encoding="utf-8")))
    }
    assert not offenders, f"declare these keys in ui/state.py and use their Key: {offenders}"


def test_no_widget_spells_a_declared_key_again() -> None:
    declared = _declared_names()
    offenders = {
        str(path.relative_to(ROOT)): hits
        for path in _sources()
        if path != HOME and (hits := spelt_again(path.read_text(encoding="utf-8"), declared))
    }
    assert not offenders, f"use KEY.name for these widget keys: {offenders}"


def test_each_declared_key_has_a_name_of_its_own() -> None:
    keys = [value.name for value in vars(state).values() if isinstance(value, state.Key)]
    assert len(keys) > 60
    assert len(keys) == len(set(keys)), sorted(name for name in keys if keys.count(name) > 1)


def test_the_scan_finds_a_raw_key_and_a_key_spelt_twice() -> None:
    # The checks above pass only because the code is clean, not because the scan sees nothing.
    raw = 'import streamlit as st\nx = st.session_state.get("enabled_tools")\nst.session_state["a"] = 1\n'
    assert raw_session_access(raw) == [2, 3]
    widget = 'st.text_input("Name", key="preset-name")\nst.text_input("Other", key="free")\n'
    assert spelt_again(widget, _declared_names()) == [(1, "preset-name")]
