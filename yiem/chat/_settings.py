"""From chat settings (provider, model, key) to a ready LLM client and its `LlmModel`."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from yiem.errors import YiemError
from yiem.llm import LlmClient
from yiem.providers import configured_secret, secrets_files
from yiem.redaction import add_secrets
from yiem.types import LlmModel

if TYPE_CHECKING:
    from yiem.providers.presets import ProviderPreset

LOCAL = "local"

# A sensible first model per paid provider; any other id can be typed or picked in the settings.
DEFAULT_MODELS = {
    "openai": "gpt-4o-mini",
    "anthropic": "claude-3-5-haiku-latest",
    "openrouter": "openai/gpt-4o-mini",
    "groq": "llama-3.1-8b-instant",
    LOCAL: "smollm2",
}


def calls_tools(provider: str) -> bool:
    """Whether a provider's models are sent the enabled tools.

    Not the embedded SmolLM2: its chat template has no tools, so llama-server either drops them
    without a word or, started with a tool template, fails with HTTP 500 on the toy model's
    malformed calls. Its messages go without tools, and the page says so.
    """
    return provider != LOCAL


def takes_images(provider: str, model_id: str) -> bool:
    """Whether this model accepts images in a prompt, as the catalogue says (never the embedded SmolLM2)."""
    from yiem.providers.catalog import get_model

    if provider == LOCAL or not model_id:
        return False
    return "image" in get_model(provider, model_id).input


class ModelSettingsError(YiemError):
    """The settings cannot reach a model (no key, no model, local model missing); says what to do."""


class SamplingModel(BaseModel):
    """Another provider and model (any the chat could use) for MCP servers' sampling requests.

    `api_key` is a key typed in this session for it; the server's key applies by the same rule as
    the chat's: only to the base URL it was configured for."""

    provider: str = LOCAL
    base_url: str = ""
    model_id: str = ""
    api_key: str = Field(default="", repr=False, exclude=True)

    @classmethod
    def of(cls, settings: ChatSettings) -> SamplingModel:
        """The provider, base URL, model and typed key of `settings`."""
        return cls(
            provider=settings.provider,
            base_url=settings.base_url,
            model_id=settings.model_id,
            api_key=settings.api_key,
        )


class ChatSettings(BaseModel):
    """What the chat uses; lives in one browser session only (the key is never stored or exported).

    `api_key` is a key typed in this session only. A key configured on the server is never copied in
    here: `connect` looks it up, and only for the base URL it was configured for.
    """

    provider: str = LOCAL
    base_url: str = ""
    model_id: str = DEFAULT_MODELS[LOCAL]
    api_key: str = Field(default="", repr=False, exclude=True)
    system_prompt: str = ""
    temperature: float | None = None
    max_tokens: int | None = None
    tool_execution: Literal["parallel", "sequential"] = "parallel"
    # What answers MCP servers' sampling requests; None: the chat's own model.
    sampling: SamplingModel | None = None

    def typed_key_for(self, provider: str, base_url: str) -> str:
        """The key typed this session, if it was typed for this provider and base URL: a typed key
        is never sent to another server."""
        return self.api_key if (provider, base_url) == (self.provider, self.base_url) else ""

    def for_sampling(self) -> ChatSettings:
        """Settings that reach the model chosen for MCP servers' sampling requests (`connect` them).

        A key typed for the chat goes along only to the same provider and base URL: like any typed
        key, it is never sent to another server."""
        choice = self.sampling
        if choice is None:
            return self
        return self.model_copy(
            update={
                "provider": choice.provider,
                "base_url": choice.base_url,
                "model_id": choice.model_id,
                "api_key": choice.api_key or self.typed_key_for(choice.provider, choice.base_url),
                "sampling": None,
            }
        )


def register_server_secrets(
    secret: Callable[[str], str] = configured_secret, root: Path | None = None
) -> None:
    """Mask every secret the server holds from now on: each provider's key, and every value of
    `.streamlit/secrets.toml` (sign-in secrets included)."""
    from yiem.providers.presets import PRESETS

    add_secrets(*(secret(preset.api_key_env) for preset in PRESETS.values() if preset.api_key_env))
    for data in secrets_files(root):
        add_secrets(*_strings(data))


def _strings(data: object) -> list[str]:
    if isinstance(data, str):
        return [data]
    if isinstance(data, dict):
        return [text for value in data.values() for text in _strings(value)]
    if isinstance(data, list):
        return [text for value in data for text in _strings(value)]
    return []


def default_settings(secret: Callable[[str], str] = configured_secret) -> ChatSettings:
    """The first paid provider whose key is configured (`secret(name)` reads it), else the local model."""
    from yiem.providers.presets import PRESETS, configured_base_url

    for preset in PRESETS.values():
        wanted = preset.key_required and preset.api_key_env and preset.name in DEFAULT_MODELS
        if wanted and preset.api_key_env and secret(preset.api_key_env):
            return ChatSettings(
                provider=preset.name,
                base_url=configured_base_url(preset, secret),
                model_id=DEFAULT_MODELS[preset.name],
            )
    return ChatSettings()


class KeyStatus(BaseModel):
    """Which key a provider and base URL would use, in words for the settings panel."""

    server_key: bool
    """A key configured on the server applies to this base URL."""
    note: str = ""
    """Why the server's key does not apply here (it belongs to another URL), if it does not."""


def key_status(settings: ChatSettings, secret: Callable[[str], str] = configured_secret) -> KeyStatus:
    """Whether the server's key for the settings' provider goes to their base URL, and if not, why."""
    from yiem.providers.presets import PRESETS, configured_base_url, server_key

    preset = PRESETS.get(settings.provider)
    if preset is None or not preset.api_key_env:
        return KeyStatus(server_key=False)
    if server_key(preset, settings.base_url or None, secret):
        return KeyStatus(server_key=True)
    if secret(preset.api_key_env):
        where = configured_base_url(preset, secret)
        return KeyStatus(
            server_key=False,
            note=f"The server's key is used only with {where}; type a key to use another base URL.",
        )
    return KeyStatus(server_key=False)


_local_lock = threading.Lock()
_local_servers: dict[str, object] = {}


def local_model() -> tuple[str, LlmModel]:
    """The process-wide embedded llama-server (started on first use): its OpenAI URL and model."""
    from yiem.providers.local_llm import LocalLlmError, LocalLlmServer

    with _local_lock:
        server = _local_servers.get(LOCAL)
        if not isinstance(server, LocalLlmServer):
            # Two slots: two Compare columns (or two tabs) on the embedded model answer at once.
            server = LocalLlmServer(parallel=2)
            _local_servers[LOCAL] = server
        try:
            server.start()
        except LocalLlmError as error:
            raise ModelSettingsError(f"The local model could not start: {error}") from error
        return server.openai_base_url, server.llm_model()


def running_local_model() -> LlmModel | None:
    """The embedded model if its server already runs in this process (its n_ctx is the window), else None."""
    from yiem.providers.local_llm import LocalLlmServer

    server = _local_servers.get(LOCAL)
    return server.llm_model() if isinstance(server, LocalLlmServer) and server.running else None


def connect(
    settings: ChatSettings, secret: Callable[[str], str] = configured_secret
) -> tuple[LlmClient, LlmModel]:
    """A client and the model it serves; `ModelSettingsError` says what to change.

    The server's key (`secret`) goes only to the base URL it was configured for; any other base URL
    gets only the key typed in this session, and its error bodies are not quoted back."""
    from yiem.providers.catalog import get_model
    from yiem.providers.presets import PRESETS, MissingApiKeyError, client_for, client_for_model

    if settings.provider == LOCAL:
        _, model = local_model()
        return client_for_model(model, quote_bodies=True), model
    register_server_secrets(secret)
    if not settings.model_id:
        raise ModelSettingsError("Choose a model in Settings.")
    preset = PRESETS.get(settings.provider)
    base_url = settings.base_url or (preset.base_url if preset else "")
    if not base_url:
        raise ModelSettingsError("Enter the server's base URL in Settings (e.g. http://127.0.0.1:8080/v1).")
    model = get_model(settings.provider, settings.model_id, base_url=base_url)
    try:
        if preset is not None:
            quote = _configured_url(preset, base_url, secret)
            client = client_for(preset, settings.api_key or None, base_url, secret=secret, quote_bodies=quote)
            return client, model
        return client_for_model(model, settings.api_key or None, quote_bodies=False), model
    except MissingApiKeyError as error:
        raise ModelSettingsError(
            f"{error} Keys can also go in .streamlit/secrets.toml; a key typed in Settings is kept for "
            "this browser session only."
        ) from error


def starting_base_url(provider: str, secret: Callable[[str], str] = configured_secret) -> str:
    """The Base URL a provider starts with in Settings: the operator's `<NAME>_BASE_URL`, else a
    hosted API's own URL; empty for a server on this machine until the user types where it runs."""
    from yiem.providers.presets import PRESETS, base_url_variable

    preset = PRESETS.get(provider)
    if preset is None:
        return ""
    variable = base_url_variable(preset)
    configured = (secret(variable) or "").strip() if variable else ""
    return configured or ("" if preset.local else preset.base_url)


def available_models(
    settings: ChatSettings, secret: Callable[[str], str] = configured_secret
) -> tuple[list[str], str | None]:
    """Model ids to offer: the server's `/v1/models` first, then the catalogue's; and why the server
    could not be asked, if it could not."""
    from yiem.providers.catalog import known_model_ids
    from yiem.providers.presets import PRESETS, client_for, server_key

    ids: list[str] = []
    problem: str | None = None
    preset = PRESETS.get(settings.provider)
    # A server on this machine is asked only once the user says where it is: its preset's default
    # port may hold nothing, or something else entirely.
    unplaced = preset is not None and preset.local and not settings.base_url
    if preset is not None and settings.provider != LOCAL and not unplaced:
        base_url = settings.base_url or None
        key = settings.api_key or server_key(preset, base_url, secret)
        if key or not preset.key_required:
            quote = _configured_url(preset, base_url, secret)
            try:
                with client_for(preset, key, base_url, secret=secret, quote_bodies=quote) as client:
                    ids = client.list_models()
            except Exception as error:  # any failure here only means "no list from the server"
                problem = str(error)
    ids += [model_id for model_id in known_model_ids(settings.provider) if model_id not in ids]
    return ids, problem


def _configured_url(preset: ProviderPreset, base_url: str | None, secret: Callable[[str], str]) -> bool:
    """Whether `base_url` is the one the operator set up (not typed in a browser)."""
    from yiem.providers.presets import configured_base_url, same_url

    return not base_url or same_url(base_url, configured_base_url(preset, secret))


def configured_provider() -> str | None:
    """The paid provider `make run` will use, or None when it needs the local model."""
    settings = default_settings()
    return None if settings.provider == LOCAL else settings.provider


def main(argv: list[str]) -> int:
    """`python -m yiem.chat configured-provider`: prints it; exit 1 when there is none."""
    if argv[1:] != ["configured-provider"]:
        print("usage: python -m yiem.chat configured-provider", file=sys.stderr)
        return 2
    provider = configured_provider()
    if provider is None:
        return 1
    print(provider)
    return 0
