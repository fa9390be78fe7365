"""The Settings panel of the Chat page (AppTest): what it asks servers, and when."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.scripted_http import ScriptedServer, json_reply

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
