"""Known providers: base URL, where the key comes from, and each one's quirks."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from yiem.providers._http import HttpLlmClient
from yiem.providers.anthropic import AnthropicClient
from yiem.providers.openai_chat import OpenAIChatClient
from yiem.types import Api, LlmModel


class UnknownProviderError(KeyError):
    """No preset has this name."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown provider"


class MissingApiKeyError(RuntimeError):
    """A provider that needs a key has none configured."""


class ProviderPreset(BaseModel):
    """How to reach one provider. `local` servers run on this machine and cost nothing known."""

    model_config = ConfigDict(frozen=True)

    name: str
    label: str
    api: Api = "openai-completions"
    base_url: str
    api_key_env: str | None = None
    key_required: bool = False
    local: bool = False
    # OpenAI's newer models take `max_completion_tokens`; most other servers only `max_tokens`.
    max_tokens_field: str = "max_tokens"
    headers: dict[str, str] = {}
    # genai-prices' provider id, where its price data applies.
    prices_provider: str | None = None
    note: str = ""


PRESETS: dict[str, ProviderPreset] = {
    preset.name: preset
    for preset in (
        ProviderPreset(
            name="openai",
            label="OpenAI",
            base_url="https://api.openai.com/v1",
            api_key_env="OPENAI_API_KEY",
            key_required=True,
            max_tokens_field="max_completion_tokens",
            prices_provider="openai",
        ),
        ProviderPreset(
            name="anthropic",
            label="Anthropic",
            api="anthropic-messages",
            base_url="https://api.anthropic.com",
            api_key_env="ANTHROPIC_API_KEY",
            key_required=True,
            prices_provider="anthropic",
        ),
        ProviderPreset(
            name="openrouter",
            label="OpenRouter",
            base_url="https://openrouter.ai/api/v1",
            api_key_env="OPENROUTER_API_KEY",
            key_required=True,
            headers={"X-Title": "yiem"},
            prices_provider="openrouter",
            note="Streams reasoning as `reasoning`; model ids look like `openai/gpt-4o`.",
        ),
        ProviderPreset(
            name="groq",
            label="Groq",
            base_url="https://api.groq.com/openai/v1",
            api_key_env="GROQ_API_KEY",
            key_required=True,
            prices_provider="groq",
            note="Older deployments report usage under `x_groq.usage`.",
        ),
        ProviderPreset(
            name="vllm",
            label="vLLM",
            base_url="http://localhost:8000/v1",
            api_key_env="VLLM_API_KEY",
            local=True,
        ),
        ProviderPreset(
            name="lmstudio",
            label="LM Studio",
            base_url="http://localhost:1234/v1",
            api_key_env="LMSTUDIO_API_KEY",
            local=True,
        ),
        ProviderPreset(
            name="ollama",
            label="Ollama",
            base_url="http://localhost:11434/v1",
            api_key_env="OLLAMA_API_KEY",
            local=True,
            note="Ollama's OpenAI-compatible endpoint is under /v1; reasoning arrives as `reasoning`.",
        ),
        ProviderPreset(
            name="llamacpp",
            label="llama.cpp server",
            base_url="http://localhost:8080/v1",
            api_key_env="LLAMA_API_KEY",
            local=True,
        ),
        ProviderPreset(
            name="local",
            label="Embedded SmolLM2 (offline toy model)",
            base_url="",
            local=True,
            note="Started by yiem on 127.0.0.1; a 135M-parameter model for trying the app offline.",
        ),
    )
}


def get_preset(name: str) -> ProviderPreset:
    """The preset called `name`; UnknownProviderError lists the known ones."""
    try:
        return PRESETS[name]
    except KeyError:
        known = ", ".join(sorted(PRESETS))
        raise UnknownProviderError(f"Unknown provider {name!r}; known providers: {known}.") from None


def api_key_for(preset: ProviderPreset, environ: Mapping[str, str] | None = None) -> str | None:
    """The key from the preset's environment variable, if set."""
    env = os.environ if environ is None else environ
    return env.get(preset.api_key_env) or None if preset.api_key_env else None


def client_for(
    preset: ProviderPreset | str,
    api_key: str | None = None,
    base_url: str | None = None,
    **kwargs: Any,
) -> HttpLlmClient:
    """A client for a preset; the key defaults to the preset's environment variable."""
    preset = get_preset(preset) if isinstance(preset, str) else preset
    key = api_key or api_key_for(preset)
    if preset.key_required and not key:
        raise MissingApiKeyError(
            f"{preset.label} needs an API key: set {preset.api_key_env} or enter one in the settings."
        )
    headers = {**preset.headers, **kwargs.pop("headers", {})}
    url = base_url or preset.base_url or None
    if preset.api == "anthropic-messages":
        return AnthropicClient(url, key, headers, provider=preset.name, **kwargs)
    kwargs.setdefault("max_tokens_field", preset.max_tokens_field)
    return OpenAIChatClient(url, key, headers, provider=preset.name, **kwargs)


def client_for_model(model: LlmModel, api_key: str | None = None, **kwargs: Any) -> HttpLlmClient:
    """A client for `model`: its provider's preset when there is one, else by its `api` and `base_url`."""
    if model.provider in PRESETS:
        return client_for(PRESETS[model.provider], api_key, model.base_url or None, **kwargs)
    if model.api == "anthropic-messages":
        return AnthropicClient(model.base_url or None, api_key, provider=model.provider or None, **kwargs)
    return OpenAIChatClient(model.base_url or None, api_key, provider=model.provider or None, **kwargs)
