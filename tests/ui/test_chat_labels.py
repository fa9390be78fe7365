"""What the Chat page's controls and avatars say to screen readers and to copied text (AppTest)."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from yiem.scripted_llm import ScriptedLlm
from yiem.tool_registry import ToolRegistry
from yiem.types import LlmModel

ROOT = Path(__file__).resolve().parents[2]
MODEL = LlmModel(id="scripted-1", provider="scripted")


def test_avatars_are_pictures_not_icon_names(db_url: str) -> None:
    # An icon avatar is an icon-font ligature: its name ("face", "smart_toy") is text in the page.
    registry = ToolRegistry()

    def add(a: int, b: int) -> str:
        """Add two integers."""
        return str(a + b)

    registry.add_function(add)
    call = {"role": "assistant", "toolCalls": [{"id": "c1", "name": "add", "arguments": {"a": 2, "b": 3}}]}
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["llm_override"] = (ScriptedLlm([call, "Five."]), MODEL)
    for key, value in {"tool_registry": registry, "enabled_tools": {"add"}}.items():
        at.session_state[key] = value
    at.run()
    at.chat_input[0].set_value("2 + 3?").run()
    assert not at.exception, at.exception
    assert {m.name for m in at.chat_message} == {"user", "assistant"}
    avatars = [m.avatar for m in at.chat_message]
    assert avatars and all(a.startswith("data:image/svg+xml;base64,") for a in avatars), avatars


def test_the_conversation_menu_has_a_name(db_url: str) -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["llm_override"] = (ScriptedLlm(["hi"]), MODEL)
    at.run()
    at.chat_input[0].set_value("hello").run()
    menus = [p for p in at.sidebar.get("popover") if "menu-" in str(p.proto.id)]
    assert menus and all(p.proto.popover.label == "Menu" for p in menus), [p.proto for p in menus]
    assert not any(p.proto.popover.icon for p in menus)  # an icon would only be hidden from readers
