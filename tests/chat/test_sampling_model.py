"""The model that answers MCP servers' sampling requests: any provider the chat could use, with the
chat's key rules, against scripted OpenAI-compatible servers on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.scripted_http import ScriptedServer, openai_text_stream, sse_reply
from yiem.explorer import sample_reply
from yiem.mcp import SamplingRequest
from yiem.model_setup import ModelSettingsError, ModelSetup, SamplingModel, connect


@pytest.fixture
def servers() -> Iterator[tuple[ScriptedServer, ScriptedServer]]:
    first, second = ScriptedServer(), ScriptedServer()
    yield first, second
    first.close()
    second.close()


def _request() -> SamplingRequest:
    return SamplingRequest(
        messages=[{"role": "user", "content": {"type": "text", "text": "Hi"}}], max_tokens=8
    )


def test_by_default_the_chat_s_model_answers() -> None:
    settings = ModelSetup(provider="openai", base_url="https://api.openai.com/v1", model_id="gpt-4o-mini")
    assert settings.for_sampling() == settings


def test_another_provider_answers_and_the_chat_s_typed_key_stays_with_the_chat(
    servers: tuple[ScriptedServer, ScriptedServer],
) -> None:
    chat, other = servers
    other.script(
        sse_reply(openai_text_stream("Sampled.", usage={"prompt_tokens": 3, "completion_tokens": 2}))
    )
    settings = ModelSetup(
        provider="openai",
        base_url=f"{chat.url}/v1",
        model_id="gpt-4o-mini",
        api_key="sk-typed-for-the-chat",
        sampling=SamplingModel(provider="llamacpp", base_url=f"{other.url}/v1", model_id="other-model"),
    )
    client, model = connect(settings.for_sampling(), lambda _name: "")
    assert (model.provider, model.id) == ("llamacpp", "other-model")
    reply = sample_reply(_request(), client, model)
    assert reply.text == "Sampled." and reply.usage.output_tokens == 2
    assert chat.requests == [] and len(other.requests) == 1
    # A key typed for the chat's server is never sent to another server.
    assert "authorization" not in {name.lower() for name in other.requests[0].headers}
    assert other.requests[0].body["model"] == "other-model"


def test_the_chat_s_typed_key_goes_along_to_the_same_server(
    servers: tuple[ScriptedServer, ScriptedServer],
) -> None:
    chat, _ = servers
    chat.script(sse_reply(openai_text_stream("Sampled.")))
    base_url = f"{chat.url}/v1"
    settings = ModelSetup(
        provider="openai",
        base_url=base_url,
        model_id="gpt-4o-mini",
        api_key="sk-typed-for-the-chat",
        sampling=SamplingModel(provider="openai", base_url=base_url, model_id="gpt-4.1-nano"),
    )
    client, model = connect(settings.for_sampling(), lambda _name: "")
    sample_reply(_request(), client, model)
    headers = {name.lower(): value for name, value in chat.requests[0].headers.items()}
    assert headers["authorization"] == "Bearer sk-typed-for-the-chat"
    assert chat.requests[0].body["model"] == "gpt-4.1-nano"


def test_the_server_s_key_is_used_only_with_its_own_base_url(
    servers: tuple[ScriptedServer, ScriptedServer],
) -> None:
    configured, other = servers
    secrets = {"OPENAI_API_KEY": "sk-server-only", "OPENAI_BASE_URL": f"{configured.url}/v1"}
    chat = ModelSetup(provider="local")
    elsewhere = chat.model_copy(
        update={
            "sampling": SamplingModel(provider="openai", base_url=f"{other.url}/v1", model_id="gpt-4o-mini")
        }
    )
    with pytest.raises(ModelSettingsError, match="used only with"):
        connect(elsewhere.for_sampling(), lambda name: secrets.get(name, ""))
    assert other.requests == []

    configured.script(sse_reply(openai_text_stream("Sampled.")))
    own = chat.model_copy(
        update={"sampling": SamplingModel(provider="openai", base_url=f"{configured.url}/v1", model_id="m")}
    )
    client, model = connect(own.for_sampling(), lambda name: secrets.get(name, ""))
    sample_reply(_request(), client, model)
    headers = {name.lower(): value for name, value in configured.requests[0].headers.items()}
    assert headers["authorization"] == "Bearer sk-server-only"
