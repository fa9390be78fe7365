"""Provider presets: base URLs, key variables, quirks, and the client each one builds."""

from __future__ import annotations

from pathlib import Path

import pytest

import yiem.model_setup._choices as model_setup
from yiem.providers import (
    PRESETS,
    AnthropicClient,
    MissingApiKeyError,
    OpenAIChatClient,
    UnknownProviderError,
    api_key_for,
    client_for,
    client_for_model,
    configured_secret,
    get_preset,
)
from yiem.types import LlmModel


def test_presets_cover_the_servers_people_run() -> None:
    assert {
        "openai",
        "anthropic",
        "openrouter",
        "groq",
        "vllm",
        "lmstudio",
        "ollama",
        "llamacpp",
        "local",
    } <= set(PRESETS)
    assert get_preset("ollama").base_url == "http://localhost:11434/v1"
    assert get_preset("anthropic").api == "anthropic-messages"
    assert all(preset.local for preset in PRESETS.values() if not preset.key_required)


def test_unknown_provider_lists_the_known_ones() -> None:
    with pytest.raises(UnknownProviderError, match="known providers: anthropic, groq"):
        get_preset("nope")


def test_keys_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GROQ_API_KEY", "gsk-1")
    client = client_for("groq")
    assert isinstance(client, OpenAIChatClient)
    assert client.api_key == "gsk-1" and client.base_url == "https://api.groq.com/openai/v1"
    assert api_key_for(get_preset("groq"), lambda name: "") is None


def test_keys_come_from_secrets_toml_when_the_environment_has_none(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """One secret lookup (environment, then .streamlit/secrets.toml) for the presets and the model setup."""
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".streamlit").mkdir()
    (tmp_path / ".streamlit" / "secrets.toml").write_text('GROQ_API_KEY = "gsk-from-file"\n')
    assert api_key_for(get_preset("groq")) == "gsk-from-file"
    assert client_for("groq").api_key == "gsk-from-file"
    monkeypatch.setenv("GROQ_API_KEY", "gsk-from-env")
    assert api_key_for(get_preset("groq")) == "gsk-from-env"
    assert model_setup.configured_secret is configured_secret


def test_missing_key_says_which_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(MissingApiKeyError, match="OPENAI_API_KEY"):
        client_for("openai")


def test_quirks_reach_the_client() -> None:
    openai = client_for("openai", api_key="sk")
    assert isinstance(openai, OpenAIChatClient) and openai.max_tokens_field == "max_completion_tokens"
    router = client_for("openrouter", api_key="k", headers={"HTTP-Referer": "https://example.test"})
    assert router.headers == {"X-Title": "yiem", "HTTP-Referer": "https://example.test"}
    anthropic = client_for("anthropic", api_key="k")
    assert isinstance(anthropic, AnthropicClient) and anthropic.provider_name == "anthropic"
    local = client_for("ollama")
    assert local.api_key is None and local.provider_name == "ollama"


def test_client_for_any_model() -> None:
    custom = client_for_model(LlmModel(id="m", provider="my-gateway", base_url="http://127.0.0.1:9/v1"))
    assert isinstance(custom, OpenAIChatClient) and custom.provider_name == "my-gateway"
    claude = client_for_model(
        LlmModel(id="c", provider="proxy", api="anthropic-messages", base_url="http://x")
    )
    assert isinstance(claude, AnthropicClient)
    local = client_for_model(LlmModel(id="smollm2", provider="local", base_url="http://127.0.0.1:5/v1"))
    assert local.base_url == "http://127.0.0.1:5/v1"


def test_the_environment_key_goes_only_to_its_own_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-bound-5d1e")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert client_for("openai").api_key == "sk-env-bound-5d1e"
    assert client_for("openai", base_url="https://API.openai.com/v1/").api_key == "sk-env-bound-5d1e"
    with pytest.raises(MissingApiKeyError, match=r"used only with https://api\.openai\.com/v1"):
        client_for("openai", base_url="http://127.0.0.1:9/v1")
    assert client_for("openai", "sk-typed", base_url="http://127.0.0.1:9/v1").api_key == "sk-typed"
    # <NAME>_BASE_URL moves the endpoint the key belongs to; the preset's own URL then gets no key.
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert client_for("openai").api_key == "sk-env-bound-5d1e"
    assert client_for("openai").base_url == "http://127.0.0.1:9/v1"
    with pytest.raises(MissingApiKeyError):
        client_for("openai", base_url="https://api.openai.com/v1")
    # Keyless local servers never borrow another provider's key either.
    assert client_for("llamacpp", base_url="http://127.0.0.1:9/v1").api_key is None
