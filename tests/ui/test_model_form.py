"""The settings form of a model setup is drawn by one function, `ui.model_form.setup_form` (issue 27)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FORM = ROOT / "ui" / "model_form.py"
# The form's parts: a page calls setup_form, never these, so no page's form can drift from the others.
PARTS = ("provider_field(", "sampling_fields(", "response_schema_field(", "tools_field(", "tool_mode_field(")


def _sources() -> dict[str, str]:
    return {
        str(path.relative_to(ROOT)): path.read_text(encoding="utf-8")
        for path in sorted((ROOT / "ui").rglob("*.py"))
        if path != FORM
    }


def test_chat_compare_and_experiments_draw_a_setup_with_the_one_form() -> None:
    callers = {name for name, text in _sources().items() if "setup_form(" in text}
    assert callers == {"ui/chat/settings.py", "ui/compare/setup.py", "ui/experiments/setup.py"}


def test_no_page_assembles_the_form_from_its_parts_or_draws_its_own_tool_mode() -> None:
    found = {
        name: [part for part in PARTS if part in text]
        for name, text in _sources().items()
        if any(part in text for part in PARTS) or '"sequential"' in text
    }
    assert found == {}
    assert FORM.read_text(encoding="utf-8").count("Tool calls of one reply run") == 1
