"""Images in Compare's prompt: offered only when every column's model takes them, sent to each."""

from __future__ import annotations

import io

from PIL import Image

from tests.scripted_http import ScriptedServer
from tests.ui.test_compare_saved import _answer, _compare_page, _specs, db_url, server
from yiem.compare import Comparison
from yiem.model_setup import ModelSetup

__all__ = ["db_url", "server"]  # the fixtures this module uses, imported with the helpers


def _png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (2, 2), (255, 0, 0)).save(buffer, format="PNG")
    return buffer.getvalue()


def _seeing(server: ScriptedServer) -> list[ModelSetup]:
    # gpt-4o and gpt-4o-mini take images (the catalogue says so), served here by the scripted server.
    return [
        ModelSetup(provider="openai", base_url=f"{server.url}/v1", model_id=model, api_key="sk-test")
        for model in ("gpt-4o", "gpt-4o-mini")
    ]


def test_an_image_goes_to_every_column_when_every_model_takes_images(
    db_url: str, server: ScriptedServer
) -> None:
    server.script(_answer("A red square"), _answer("Red"))
    at = _compare_page()
    at.session_state["compare_specs"] = _seeing(server)
    at.run()
    assert not at.exception, at.exception
    prompt = at.chat_input(key="cmp_prompt_images")
    prompt.upload("red.png", _png(), "image/png").set_value("What is this?").run()
    assert not at.exception, at.exception
    comparison: Comparison = at.session_state["compare_run"]
    assert comparison.wait(timeout=30)
    assert [c.status for c in comparison.columns] == ["done", "done"], [c.error for c in comparison.columns]
    assert len(server.requests) == 2
    for request in server.requests:
        content = request.body["messages"][-1]["content"]
        kinds = [part["type"] for part in content]
        assert kinds == ["text", "image_url"], content
        assert content[1]["image_url"]["url"].startswith("data:image/png;base64,")


def test_no_image_is_offered_when_one_column_cannot_take_it(db_url: str, server: ScriptedServer) -> None:
    at = _compare_page()
    seeing, _ = _seeing(server)
    at.session_state["compare_specs"] = [seeing, _specs(server)[0]]  # the second: a llama.cpp model
    at.run()
    assert not at.exception, at.exception
    assert [box.key for box in at.chat_input] == ["cmp_prompt"]
    assert not at.chat_input(key="cmp_prompt").proto.accept_file
