"""The Settings panel of the Chat page (AppTest): what it asks servers, and when."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.scripted_http import ScriptedServer, json_reply
from yiem.store import ConversationStore, create_store_engine

ROOT = Path(__file__).resolve().parents[2]


def test_a_keyless_server_is_asked_for_models_only_once_its_url_is_typed(db_url: str) -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.sidebar.selectbox(key="set-provider").set_value("llamacpp").run()
    assert not at.exception, at.exception
    # Nothing was asked of localhost:8080 (the preset's port): the field is empty, its default shown.
    url = at.sidebar.text_input(key="set-url-llamacpp")
    assert url.value == "" and "localhost:8080" in (url.placeholder or "")
    captions = [caption.value for caption in at.sidebar.caption]
    assert not [c for c in captions if "model list is not available" in c], captions
    assert any("base URL" in c and "list its models" in c for c in captions), captions

    server = ScriptedServer()
    try:
        server.script(json_reply({"object": "list", "data": [{"id": "served-model", "object": "model"}]}))
        url.set_value(f"{server.url}/v1").run()
        assert [request.path for request in server.requests] == ["/v1/models"]
        assert "served-model" in at.sidebar.selectbox(key="set-model-llamacpp").options
    finally:
        server.close()
    assert json.dumps(at.session_state["settings"].base_url) == json.dumps(f"{server.url}/v1")


def test_the_embedded_model_is_sent_no_tools_and_the_page_says_so(db_url: str) -> None:
    # SmolLM2's own chat template has no tools: llama-server drops them or fails on them, so the
    # page sends none and says why, instead of letting the user believe the model may call them.
    from yiem.scripted_llm import ScriptedLlm
    from yiem.tool_registry import ToolRegistry
    from yiem.types import LlmModel

    registry = ToolRegistry()

    def add(a: int, b: int) -> str:
        """Add two integers."""
        return str(a + b)

    registry.add_function(add)
    llm = ScriptedLlm(["Five, I think."])
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["llm_override"] = (llm, LlmModel(id="smollm2", provider="local"))
    state = {"tool_registry": registry, "mcp_clients": {}, "mcp_errors": {}, "enabled_tools": {"add"}}
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    at.chat_input[0].set_value("What is 2 + 3?").run()
    assert not at.exception, at.exception
    assert llm.requests[0].tool_names == []
    notes = [c.value for c in at.caption if "cannot call tools" in c.value]
    assert notes and "sent without" in notes[0], [c.value for c in at.caption]
    assert not at.error


def test_the_model_for_mcp_sampling_is_any_provider_chosen_in_settings(db_url: str) -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.sidebar.selectbox(key="set-provider").set_value("openai").run()
    settings = at.session_state["settings"]
    # By default the chat's model answers a server's sampling request.
    assert settings.sampling is None and settings.for_sampling() == settings
    server = ScriptedServer()
    try:
        server.script(json_reply({"object": "list", "data": [{"id": "sampler", "object": "model"}]}))
        at.sidebar.selectbox(key="set-sampling-provider").set_value("llamacpp").run()
        at.sidebar.text_input(key="set-sampling-url-llamacpp").set_value(f"{server.url}/v1").run()
        assert not at.exception, at.exception
        # The sampling server's own models are offered, as the chat's are.
        model = at.sidebar.selectbox(key="set-sampling-model-llamacpp")
        assert "sampler" in model.options
        model.set_value("sampler").run()
    finally:
        server.close()
    settings = at.session_state["settings"]
    chosen = settings.for_sampling()
    assert (chosen.provider, chosen.base_url, chosen.model_id) == ("llamacpp", f"{server.url}/v1", "sampler")
    assert settings.provider == "openai" and settings.model_id != "sampler"
    # Another chat provider keeps the sampling model chosen.
    at.sidebar.selectbox(key="set-provider").set_value("anthropic").run()
    assert at.session_state["settings"].for_sampling().model_id == "sampler"
    at.sidebar.selectbox(key="set-sampling-provider").set_value("").run()
    assert at.session_state["settings"].sampling is None


def test_a_conversation_sent_at_temperature_zero_reopens_at_zero(db_url: str) -> None:
    # 0 is a temperature of its own, not "none set": the slider once showed 0.7, and the next send used it.
    setup = {"provider": "local", "model_id": "smollm2", "temperature": 0.0, "max_tokens": 24}
    cold = ConversationStore(create_store_engine(db_url)).create(title="Cold", setup=setup)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["c"] = cold.id
    at.run()
    assert not at.exception, at.exception
    assert at.sidebar.checkbox(key="set-temp-default").value is False
    assert at.sidebar.slider(key="set-temp").value == 0.0
    assert at.session_state["settings"].temperature == 0.0
