"""Chat's library: presets (never a key) and saved prompts, per person, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, select

from yiem.chat import ChatLibrary, LibraryError, SavedPrompt
from yiem.model_setup import ModelSetup, fill_template, template_variables
from yiem.redaction import add_secrets
from yiem.store import create_store_engine, saved_prompts, setup_presets

KEY = "sk-library-typed-key-0123456789"
SETTINGS = ModelSetup(
    provider="openai",
    base_url="https://api.openai.com/v1",
    model_id="gpt-4o-mini",
    api_key=KEY,
    system_prompt="Answer like a pirate.",
    temperature=0.3,
    max_tokens=512,
    tool_execution="sequential",
)


@pytest.fixture
def engine(any_store_url: str) -> Engine:
    return create_store_engine(any_store_url)


def _stored_text(engine: Engine) -> str:
    with engine.connect() as conn:
        rows = [*conn.execute(select(setup_presets)), *conn.execute(select(saved_prompts))]
    return repr(rows)


def test_a_preset_keeps_every_setup_field_and_never_the_key(engine: Engine) -> None:
    library = ChatLibrary(engine, "ann@example.com")
    setup = SETTINGS.with_tools({"clock__now", "files__read"}).as_stored()
    library.save_preset("Pirate", setup)
    [preset] = library.presets()
    assert preset.name == "Pirate"
    assert preset.setup == setup
    assert preset.setup.tools == ["clock__now", "files__read"]
    assert preset.setup.tool_execution == "sequential" and preset.setup.max_tokens == 512
    assert KEY not in _stored_text(engine)


def test_saving_under_the_same_name_replaces_and_delete_removes(engine: Engine) -> None:
    library = ChatLibrary(engine)
    library.save_preset("Mine", SETTINGS.with_tools(set()).as_stored())
    library.save_preset(
        "  Mine ", SETTINGS.model_copy(update={"temperature": 1.5}).with_tools(set()).as_stored()
    )
    library.save_preset("Another", ModelSetup().with_tools(set()).as_stored())
    assert [(p.name, p.setup.temperature) for p in library.presets()] == [("Another", None), ("Mine", 1.5)]
    library.delete_preset("Mine")
    assert [p.name for p in library.presets()] == ["Another"]


def test_one_person_never_sees_or_deletes_anothers_presets_and_prompts(engine: Engine) -> None:
    ann, bob = ChatLibrary(engine, "ann@example.com"), ChatLibrary(engine, "bob@example.com")
    ann.save_preset("Same name", SETTINGS.with_tools(set()).as_stored())
    ann.save_prompt("Summary", "Summarise {{text}}")
    bob.save_preset("Same name", ModelSetup().with_tools(set()).as_stored())
    bob.delete_prompt("Summary")
    assert [p.setup.provider for p in ann.presets()] == ["openai"]
    assert [p.setup.provider for p in bob.presets()] == ["local"]
    assert [p.name for p in ann.prompts()] == ["Summary"] and bob.prompts() == []


def test_a_secret_quoted_in_a_system_prompt_or_prompt_is_masked_before_it_is_stored(engine: Engine) -> None:
    secret = "sk-server-secret-quoted-9876543210"
    add_secrets(secret)
    library = ChatLibrary(engine)
    leaky = SETTINGS.model_copy(update={"system_prompt": f"key {secret}"})
    library.save_preset("Leaky", leaky.with_tools(set()).as_stored())
    library.save_prompt("Leaky", f"Use {secret} for {{{{task}}}}")
    assert secret not in _stored_text(engine)
    assert library.prompts()[0].variables == ["task"]


def test_a_preset_or_prompt_needs_a_name_and_a_prompt_its_text(engine: Engine) -> None:
    library = ChatLibrary(engine)
    with pytest.raises(LibraryError, match="name"):
        library.save_preset("   ", SETTINGS.with_tools(set()).as_stored())
    with pytest.raises(LibraryError, match="at most 80"):
        library.save_prompt("x" * 81, "text")
    with pytest.raises(LibraryError, match="text"):
        library.save_prompt("Empty", "  ")
    assert library.presets() == [] and library.prompts() == []


def test_variables_are_found_once_in_order_and_filled() -> None:
    text = "Translate {{ text }} into {{language}}; keep {{text}} short. Also {tone}."
    assert template_variables(text) == ["text", "language", "tone"]
    assert SavedPrompt(name="t", text=text).variables == ["text", "language", "tone"]
    filled = fill_template(text, {"text": "hello", "language": "French"})
    assert filled == "Translate hello into French; keep hello short. Also {tone}."
    assert template_variables('{"json": 1}') == []
