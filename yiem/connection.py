"""From chat settings (provider, model, key) to a ready LLM client and its `LlmModel`."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, Field

from yiem.llm import GenerationOptions, LlmClient
from yiem.types import LlmModel

LOCAL = "local"


class ConnectionSettingsError(Exception):
    """The settings cannot reach a model (no key, no model, local model missing); says what to do."""


class ProviderChoice(BaseModel):
    """A provider the settings offer: where it is, how to talk to it, where its key comes from."""

    name: str
    label: str
    base_url: str
    api: Literal["openai-completions", "anthropic-messages"] = "openai-completions"
    key_variable: str = ""
    default_model: str = ""


class ChatSettings(BaseModel):
    """What the chat uses; lives in one browser session only (the key is never stored or exported)."""

    provider: str = LOCAL
    base_url: str = ""
    model_id: str = ""
    api_key: str = Field(default="", repr=False, exclude=True)
    system_prompt: str = ""
    temperature: float | None = None
    max_tokens: int | None = None
    tool_execution: Literal["parallel", "sequential"] = "parallel"

    def options(self) -> GenerationOptions:
        return GenerationOptions(temperature=self.temperature, max_tokens=self.max_tokens)


def provider_choices() -> dict[str, ProviderChoice]:
    """The embedded local model first, then the presets of `yiem.providers`."""
    from yiem.providers.presets import PRESETS

    choices = {
        LOCAL: ProviderChoice(
            name=LOCAL, label="Local toy model (SmolLM2, offline)", base_url="", default_model="smollm2"
        )
    }
    for preset in PRESETS.values():
        choices[preset.name] = ProviderChoice(
            name=preset.name,
            label=preset.label,
            base_url=preset.base_url,
            api=preset.api,
            key_variable=preset.key_env or "",
            default_model=preset.default_model or "",
        )
    return choices


def default_settings(secret: Callable[[str], str]) -> ChatSettings:
    """The first provider whose key is configured (`secret(name)` reads it), else the local model."""
    for choice in provider_choices().values():
        if choice.key_variable and choice.default_model:
            key = secret(choice.key_variable)
            if key:
                return ChatSettings(
                    provider=choice.name,
                    base_url=choice.base_url,
                    model_id=choice.default_model,
                    api_key=key,
                )
    return ChatSettings()


_local_lock = threading.Lock()
_local_server: object | None = None


def local_server() -> object:
    """The process-wide embedded llama-server, started on first use."""
    global _local_server
    from yiem.local_llm import LocalLlmError, LocalLlmServer

    with _local_lock:
        if _local_server is None:
            _local_server = LocalLlmServer()
        assert isinstance(_local_server, LocalLlmServer)
        try:
            _local_server.start()
        except LocalLlmError as error:
            raise ConnectionSettingsError(f"The local model could not start: {error}") from error
        return _local_server


def connect(settings: ChatSettings) -> tuple[LlmClient, LlmModel]:
    """A client and the model it serves for these settings; `ConnectionSettingsError` says what is missing."""
    from yiem.catalog import get_model
    from yiem.local_llm import LocalLlmServer
    from yiem.providers import AnthropicClient, OpenAIChatClient

    if settings.provider == LOCAL:
        server = local_server()
        assert isinstance(server, LocalLlmServer)
        return OpenAIChatClient(server.openai_base_url), server.llm_model()
    choice = provider_choices().get(settings.provider)
    base_url = settings.base_url or (choice.base_url if choice else "")
    if not base_url:
        raise ConnectionSettingsError("Enter the server's base URL in Settings (for example http://127.0.0.1:8080/v1).")
    if not settings.model_id:
        raise ConnectionSettingsError("Choose a model in Settings.")
    if choice and choice.key_variable and not settings.api_key:
        raise ConnectionSettingsError(
            f"{choice.label} needs an API key: set {choice.key_variable} in the environment or "
            "in .streamlit/secrets.toml, or type it in Settings (kept for this session only)."
        )
    model = get_model(settings.provider, settings.model_id).model_copy(update={"base_url": base_url})
    api_key = settings.api_key or None
    if model.api == "anthropic-messages" or (choice and choice.api == "anthropic-messages"):
        return AnthropicClient(base_url=base_url, api_key=api_key), model
    return OpenAIChatClient(base_url, api_key=api_key), model
