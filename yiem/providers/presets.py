"""Known providers: base URL, where the key comes from, and each one's quirks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict

from yiem.errors import YiemError
from yiem.providers._http import HttpLlmClient
from yiem.providers._secrets import configured_secret
from yiem.providers.anthropic import AnthropicClient
from yiem.providers.openai_chat import OpenAIChatClient
from yiem.redaction import add_secrets
from yiem.types import Api, LlmModel


class UnknownProviderError(YiemError, KeyError):
    """No preset has this name."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown provider"


class MissingApiKeyError(YiemError, RuntimeError):
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


SecretLookup = Callable[[str], str | None]
"""Reads one setting configured on the server (a key, a base URL) by its variable name; "" or None: unset."""


def api_key_for(preset: ProviderPreset, secret: SecretLookup = configured_secret) -> str | None:
    """The preset's configured key (environment, then `.streamlit/secrets.toml`), if there is one."""
    return (secret(preset.api_key_env) or None) if preset.api_key_env else None


def base_url_variable(preset: ProviderPreset) -> str | None:
    """Where the operator may move a preset's endpoint: `OPENAI_API_KEY` pairs with `OPENAI_BASE_URL`."""
    if not preset.api_key_env or not preset.api_key_env.endswith("_API_KEY"):
        return None
    return preset.api_key_env.removesuffix("_API_KEY") + "_BASE_URL"


def configured_base_url(preset: ProviderPreset, secret: SecretLookup = configured_secret) -> str:
    """The base URL the server's key for `preset` belongs to: `<NAME>_BASE_URL`, else the preset's."""
    variable = base_url_variable(preset)
    return ((secret(variable) or "") if variable else "").strip() or preset.base_url


def same_url(first: str | None, second: str | None) -> bool:
    """Whether two base URLs name the same endpoint (scheme and host in any case, a trailing / ignored)."""
    if not first or not second:
        return False

    def canonical(url: str) -> tuple[str, str, str, str]:
        parts = urlsplit(url.strip())
        return (parts.scheme.lower(), parts.netloc.lower(), parts.path.rstrip("/"), parts.query)

    return canonical(first) == canonical(second)


def server_key(
    preset: ProviderPreset, base_url: str | None, secret: SecretLookup = configured_secret
) -> str | None:
    """The key configured on the server for `preset`, and only when `base_url` is the URL it was
    configured for (None: that URL): a server's key is never sent anywhere else."""
    if not preset.api_key_env:
        return None
    key = secret(preset.api_key_env) or None
    add_secrets(key)  # a key the server knows is masked wherever text is stored, logged or shown
    configured = configured_base_url(preset, secret)
    if base_url and not same_url(base_url, configured):
        return None
    return key


def client_for(
    preset: ProviderPreset | str,
    api_key: str | None = None,
    base_url: str | None = None,
    *,
    secret: SecretLookup = configured_secret,
    **kwargs: Any,
) -> HttpLlmClient:
    """A client for a preset. Without `api_key` it takes the server's key (`secret`), which goes only to
    the base URL it was configured for."""
    preset = get_preset(preset) if isinstance(preset, str) else preset
    configured = configured_base_url(preset, secret)
    url = base_url or configured or None
    key = api_key or server_key(preset, url, secret)
    if preset.key_required and not key:
        if preset.api_key_env and secret(preset.api_key_env):
            raise MissingApiKeyError(
                f"The server's {preset.label} key is used only with {configured}; "
                f"type a key in the settings to use {url}."
            )
        raise MissingApiKeyError(
            f"{preset.label} needs an API key: set {preset.api_key_env} or enter one in the settings."
        )
    headers = {**preset.headers, **kwargs.pop("headers", {})}
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
