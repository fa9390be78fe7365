"""From a model setup (provider, model, key) to a ready LLM client and its `LlmModel`."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from yiem.llm import LlmClient
from yiem.model_setup._model import LOCAL, ModelSettingsError, ModelSetup
from yiem.providers import configured_secret, secrets_files
from yiem.redaction import add_secrets
from yiem.types import LlmModel

if TYPE_CHECKING:
    from yiem.providers.presets import ProviderPreset


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
    settings: ModelSetup, secret: Callable[[str], str] = configured_secret
) -> tuple[LlmClient, LlmModel]:
    """A client and the model it serves; `ModelSettingsError` says what to change.

    The server's key (`secret`) goes only to the base URL it was configured for; any other base URL
    gets only the key typed in this session, and its error bodies are not quoted back."""
    from yiem.providers.catalog import get_model
    from yiem.providers.presets import PRESETS, MissingApiKeyError, client_for, client_for_model

    if settings.provider in (LOCAL, ""):
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
            quote = is_configured_url(preset, base_url, secret)
            client = client_for(preset, settings.api_key or None, base_url, secret=secret, quote_bodies=quote)
            return client, model
        return client_for_model(model, settings.api_key or None, quote_bodies=False), model
    except MissingApiKeyError as error:
        raise ModelSettingsError(
            f"{error} Keys can also go in .streamlit/secrets.toml; a key typed in Settings is kept for "
            "this browser session only."
        ) from error


def is_configured_url(preset: ProviderPreset, base_url: str | None, secret: Callable[[str], str]) -> bool:
    """Whether `base_url` is the one the operator set up (not typed in a browser)."""
    from yiem.providers.presets import configured_base_url, same_url

    return not base_url or same_url(base_url, configured_base_url(preset, secret))
