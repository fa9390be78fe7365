"""Chat's saved setups (presets) and saved prompts under AppTest, with ScriptedLlm as the model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import select
from streamlit.testing.v1 import AppTest

from yiem.chat import ChatLibrary
from yiem.model_setup import ModelSetup
from yiem.scripted_llm import ScriptedLlm
from yiem.store import ConversationStore, create_store_engine, setup_presets
from yiem.types import LlmModel

ROOT = Path(__file__).resolve().parents[2]
MODEL = LlmModel(id="scripted-1", provider="scripted")


def _app(llm: ScriptedLlm | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    if llm is not None:
        at.session_state["llm_override"] = (llm, MODEL)
    return at.run()


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, at.exception
    return at


def test_the_current_setup_is_saved_as_a_preset_and_applied_in_one_click(db_url: str) -> None:
    at = _app()
    at.sidebar.text_area(key="set-system").set_value("Answer in haiku.").run()
    at.sidebar.checkbox(key="set-temp-default").uncheck().run()
    at.sidebar.slider(key="set-temp").set_value(1.2).run()
    at.sidebar.text_input(key="preset-name").set_value("Poet")
    _ok(at.sidebar.button(key="preset-save").click().run())
    assert at.sidebar.text_input(key="preset-name").value == ""  # ready for the next one
    [saved] = ChatLibrary(create_store_engine(db_url)).presets()
    assert (saved.name, saved.setup.system_prompt) == ("Poet", "Answer in haiku.")
    assert saved.setup.temperature == 1.2

    # Another setup now; the preset's button brings the saved one back, panel and all.
    at.sidebar.text_area(key="set-system").set_value("Be brief.").run()
    at.sidebar.checkbox(key="set-temp-default").check().run()
    assert at.session_state["settings"].system_prompt == "Be brief."
    _ok(at.sidebar.button(key="preset-use-0").click().run())
    settings = at.session_state["settings"]
    assert (settings.system_prompt, settings.temperature) == ("Answer in haiku.", 1.2)
    assert at.sidebar.text_area(key="set-system").value == "Answer in haiku."
    assert at.sidebar.slider(key="set-temp").value == 1.2

    _ok(at.sidebar.button(key="preset-delete-0").click().run())
    assert ChatLibrary(create_store_engine(db_url)).presets() == []
    assert not [b for b in at.sidebar.button if b.key == "preset-use-0"]


def test_a_preset_never_holds_the_key_typed_in_settings(db_url: str) -> None:
    key = "sk-typed-for-this-session-0123456789"
    at = _app()
    at.sidebar.selectbox(key="set-provider").set_value("openai").run()
    at.sidebar.text_input(key="set-key-openai").set_value(key).run()
    assert at.session_state["settings"].api_key == key
    at.sidebar.text_input(key="preset-name").set_value("Paid")
    _ok(at.sidebar.button(key="preset-save").click().run())
    engine = create_store_engine(db_url)
    [saved] = ChatLibrary(engine).presets()
    assert saved.setup.provider == "openai"
    with engine.connect() as conn:
        assert key not in repr(conn.execute(select(setup_presets)).all())


def test_a_preset_without_a_name_is_refused_in_words(db_url: str) -> None:
    at = _ok(_app().sidebar.button(key="preset-save").click().run())
    assert [e.value for e in at.sidebar.error] == ["Give the preset a name."]


def test_a_prompt_with_variables_opens_a_form_and_sends_it_filled(db_url: str) -> None:
    llm = ScriptedLlm(["Bonjour."])
    at = _app(llm)
    at.sidebar.text_input(key="prompt-name").set_value("Translate")
    at.sidebar.text_area(key="prompt-text").set_value("Translate {{text}} into {{language}}.")
    _ok(at.sidebar.button(key="prompt-save").click().run())
    _ok(at.sidebar.button(key="prompt-use-0").click().run())
    assert [area.label for area in at.text_area if area.key and area.key.startswith("prompt-var-")] == [
        "text",
        "language",
    ]
    at.text_area(key="prompt-var-text").set_value("good morning")
    _ok(at.button(key="prompt-form-send").click().run())
    assert [e.value for e in at.error] == ["Fill in language first."]
    assert llm.requests == []  # nothing sent with a variable left empty

    at.text_area(key="prompt-var-language").set_value("French")
    _ok(at.button(key="prompt-form-send").click().run())
    assert [request.messages[-1].text for request in llm.requests] == ["Translate good morning into French."]
    stored = ConversationStore(create_store_engine(db_url)).load_messages(at.query_params["c"])
    assert [m.text for m in stored] == ["Translate good morning into French.", "Bonjour."]
    assert not [area for area in at.text_area if area.key == "prompt-var-text"]  # the form closed


def test_a_prompt_without_variables_goes_into_the_message_box(db_url: str) -> None:
    ChatLibrary(create_store_engine(db_url)).save_prompt("Review", "Review this code for bugs.")
    llm = ScriptedLlm(["Looks fine."])
    at = _ok(_app(llm).sidebar.button(key="prompt-use-0").click().run())
    assert at.chat_input[0].value == "Review this code for bugs."
    assert llm.requests == []  # not sent until the person sends it


def _presets_in(db_url: str, *presets: tuple[str, dict[str, Any]]) -> None:
    library = ChatLibrary(create_store_engine(db_url))
    for name, fields in presets:
        library.save_preset(name, ModelSetup(**fields))


PIRATE = {
    "provider": "openai",
    "model_id": "gpt-4o-mini",
    "system_prompt": "Answer like a pirate.",
    "temperature": 0.3,
    "max_tokens": 256,
    "tool_execution": "sequential",
}


def test_the_experiments_page_adds_a_variant_from_a_preset_in_one_choice(db_url: str) -> None:
    _presets_in(db_url, ("Pirate", PIRATE))
    at = AppTest.from_file(str(ROOT / "ui" / "pages" / "experiments.py"), default_timeout=60).run()
    _ok(at.selectbox(key="exp_w_add_preset").set_value("Pirate").run())
    [variant] = at.session_state["exp_draft"].variants
    assert (variant.name, variant.provider, variant.model_id) == ("Pirate", "openai", "gpt-4o-mini")
    assert (variant.temperature, variant.max_tokens) == (0.3, 256)
    assert variant.system_prompt == "Answer like a pirate."
    assert variant.tool_execution == "sequential"
    assert at.selectbox(key="exp_w_add_preset").value is None  # ready for the next one
    _ok(at.selectbox(key="exp_w_add_preset").set_value("Pirate").run())
    assert [v.name for v in at.session_state["exp_draft"].variants] == ["Pirate", "Pirate 2"]


def test_the_compare_page_fills_a_column_from_a_preset_in_one_choice(db_url: str) -> None:
    _presets_in(db_url, ("Pirate", PIRATE))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page("ui/pages/compare.py")
    at.run()
    at.selectbox(key="cmp_provider_0").set_value("openai").run()  # the embedded model has no Model field
    at.text_input(key="cmp_model_0").set_value("typed-by-hand").run()
    _ok(at.selectbox(key="cmp_preset_1").set_value("Pirate").run())
    assert at.selectbox(key="cmp_provider_1").value == "openai"
    assert at.text_input(key="cmp_model_1").value == "gpt-4o-mini"
    assert at.text_area(key="cmp_system_1").value == "Answer like a pirate."
    assert at.slider(key="cmp_temp_1").value == 0.3
    assert at.number_input(key="cmp_max_tokens_1").value == 256
    assert at.text_input(key="cmp_model_0").value == "typed-by-hand"  # the other column is as it was
    assert not at.warning, [w.value for w in at.warning]
