"""The Compare page under AppTest: a saved Experiments variant fills a column in one pick."""

from __future__ import annotations

from typing import Any

from tests.fixtures.compare import compare_page, streamed_reply
from tests.scripted_http import ScriptedServer
from yiem.compare import Comparison
from yiem.experiments import ExperimentDraft, ExperimentStore, Variant
from yiem.store import create_store_engine


def _save_experiment(db_url: str, name: str, variants: list[Variant]) -> None:
    # As the Experiments page saves its draft (ui/experiments/state.save).
    draft = ExperimentDraft(name=name, variants=variants)
    ExperimentStore(create_store_engine(db_url)).save_experiment(
        name, draft.model_dump(mode="json", exclude={"name"})
    )


def _system_prompts(server: ScriptedServer) -> dict[str, str]:
    """Each requested model's system message, as sent (its text blocks joined)."""
    found = {}
    for request in server.requests:
        body: dict[str, Any] = request.body
        system = [m["content"] for m in body["messages"] if m["role"] == "system"]
        blocks = [c if isinstance(c, str) else "".join(b["text"] for b in c) for c in system]
        found[body["model"]] = "".join(blocks)
    return found


def test_a_saved_variant_fills_a_column_and_the_column_runs_with_it(
    db_url: str, scripted_server: ScriptedServer
) -> None:
    url = f"{scripted_server.url}/v1"
    terse = Variant(
        name="terse",
        provider="llamacpp",
        base_url=url,
        model_id="terse-model",
        system_prompt="Answer in three words.",
        temperature=0.2,
        max_tokens=64,
    )
    chatty = Variant(name="chatty", provider="llamacpp", base_url=url, model_id="chatty-model")
    _save_experiment(db_url, "Greetings", [terse, chatty])
    _save_experiment(db_url, "Local only", [Variant(name="toy", system_prompt="Be kind.")])
    at = compare_page()
    at.run()
    assert not at.exception, at.exception
    picker = at.selectbox(key="cmp_variant_1")
    # Every saved experiment's variants; one without a provider is the embedded model.
    assert sorted(picker.options) == [
        "Greetings › chatty (llamacpp/chatty-model)",
        "Greetings › terse (llamacpp/terse-model)",
        "Local only › toy (local)",
    ]
    at.text_area(key="cmp_system_0").set_value("Typed by hand.").run()

    picker.select("Greetings › terse (llamacpp/terse-model)").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="cmp_provider_1").value == "llamacpp"
    assert at.text_input(key="cmp_model_1").value == "terse-model"
    assert at.text_input(key="cmp_url_1").value == url
    assert at.text_area(key="cmp_system_1").value == "Answer in three words."
    assert at.slider(key="cmp_temp_1").value == 0.2
    assert at.number_input(key="cmp_max_tokens_1").value == 64
    assert at.selectbox(key="cmp_variant_1").value is None  # ready for another pick
    assert at.text_area(key="cmp_system_0").value == "Typed by hand."  # the other column is untouched

    # The first column from the other variant, then one prompt to both: each runs with its variant's settings.
    at.selectbox(key="cmp_variant_0").select("Greetings › chatty (llamacpp/chatty-model)").run()
    assert at.text_input(key="cmp_model_0").value == "chatty-model"
    # chatty sets no temperature: its column keeps the provider's default, as Chat does.
    assert at.checkbox(key="cmp_temp_default_0").value is True
    assert at.checkbox(key="cmp_temp_default_1").value is False
    assert at.text_area(key="cmp_system_1").value == "Answer in three words."  # kept across the pick
    scripted_server.script(streamed_reply("Hello there"), streamed_reply("Hello there"))
    at.chat_input(key="cmp_prompt").set_value("Say hello.").run()
    assert not at.exception, at.exception
    comparison: Comparison = at.session_state["compare_run"]
    assert comparison.wait(timeout=30)
    assert [c.status for c in comparison.columns] == ["done", "done"], [c.error for c in comparison.columns]
    assert [c.spec.label for c in comparison.columns] == ["llamacpp/chatty-model", "llamacpp/terse-model"]
    assert comparison.columns[1].spec.max_tokens == 64
    assert _system_prompts(scripted_server) == {"chatty-model": "", "terse-model": "Answer in three words."}
    sent = {request.body["model"]: request.body.get("temperature") for request in scripted_server.requests}
    assert sent == {"chatty-model": None, "terse-model": 0.2}
