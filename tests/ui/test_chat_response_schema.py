"""Chat settings' "Response must be JSON matching this schema" (AppTest, a scripted OpenAI-compatible
server on loopback): the schema goes with every request as `response_format`, a provider that cannot
ask for it is said plainly, a schema that is not one and a schema the provider refuses are words."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.scripted_http import ScriptedServer, json_reply, openai_text_stream, sse_reply

ROOT = Path(__file__).resolve().parents[2]
CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def _on_server(server: ScriptedServer) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.sidebar.selectbox(key="set-provider").set_value("llamacpp").run()
    server.script(json_reply({"object": "list", "data": [{"id": "served", "object": "model"}]}))
    at.sidebar.text_input(key="set-url-llamacpp").set_value(f"{server.url}/v1").run()
    at.sidebar.selectbox(key="set-model-llamacpp").set_value("served").run()
    return at


def test_the_schema_goes_with_each_request_and_the_reply_is_its_json(db_url: str) -> None:
    server = ScriptedServer()
    try:
        at = _on_server(server)
        at.sidebar.text_area(key="set-response-schema").set_value(json.dumps(CITY)).run()
        assert not at.exception, at.exception
        assert at.session_state["settings"].response_schema == CITY
        server.script(sse_reply(openai_text_stream('{"city": "Paris"}')))
        at.chat_input[0].set_value("Capital of France?").run()
        assert not at.exception, at.exception
        # The first completion is the reply (a title is asked for after it, without the schema).
        sent = next(r.body for r in server.requests if r.path == "/v1/chat/completions")
        assert sent["response_format"] == {
            "type": "json_schema",
            "json_schema": {"name": "answer", "schema": CITY},
        }
        assert any('{"city": "Paris"}' in str(m.value) for m in at.markdown)
    finally:
        server.close()


def test_a_schema_the_provider_refuses_is_shown_in_words(db_url: str) -> None:
    server = ScriptedServer()
    try:
        at = _on_server(server)
        at.sidebar.text_area(key="set-response-schema").set_value(json.dumps(CITY)).run()
        refusal = {"error": {"message": "Invalid schema for response_format 'answer': 'city' is not allowed"}}
        server.script(json_reply(refusal, status=400))
        at.chat_input[0].set_value("Capital of France?").run()
        assert not at.exception, at.exception
        errors = [str(e.value) for e in at.error]
        # A base URL typed in the app never has its error body quoted back; the likely cause is said.
        assert any(e.startswith("HTTP 400 from llamacpp") for e in errors), errors
        assert any("asked for JSON matching a response schema, which this provider" in e for e in errors)
    finally:
        server.close()


def test_a_schema_that_is_not_one_is_refused_and_anthropic_is_said_plainly(db_url: str) -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.sidebar.text_area(key="set-response-schema").set_value("{not json").run()
    assert not at.exception, at.exception
    errors = [str(e.value) for e in at.sidebar.error]
    assert any(e.startswith("The schema is not JSON: Expecting property name") for e in errors), errors
    assert at.session_state["settings"].response_schema is None
    at.sidebar.text_area(key="set-response-schema").set_value('{"type": "nope"}').run()
    errors = [str(e.value) for e in at.sidebar.error]
    assert any(e.startswith("The response schema cannot be used:") for e in errors), errors
    at.sidebar.selectbox(key="set-provider").set_value("anthropic").run()
    at.sidebar.text_area(key="set-response-schema").set_value(json.dumps(CITY)).run()
    warnings = [str(w.value) for w in at.sidebar.warning]
    assert any("cannot yet ask for JSON matching a schema" in w for w in warnings), warnings
