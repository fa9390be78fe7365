"""What a settings form offers: the first setup, which key applies, the base URL and models to list."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel

from yiem.model_setup._connect import is_configured_url
from yiem.model_setup._model import DEFAULT_MODELS, LOCAL, ModelSetup
from yiem.providers import configured_secret


def default_settings(secret: Callable[[str], str] = configured_secret) -> ModelSetup:
    """The first paid provider whose key is configured (`secret(name)` reads it), else the local model."""
    from yiem.providers.presets import PRESETS, configured_base_url

    for preset in PRESETS.values():
        wanted = preset.key_required and preset.api_key_env and preset.name in DEFAULT_MODELS
        if wanted and preset.api_key_env and secret(preset.api_key_env):
            return ModelSetup(
                provider=preset.name,
                base_url=configured_base_url(preset, secret),
                model_id=DEFAULT_MODELS[preset.name],
            )
    return ModelSetup(model_id=DEFAULT_MODELS[LOCAL])


class KeyStatus(BaseModel):
    """Which key a provider and base URL would use, in words for the settings panel."""

    server_key: bool
    """A key configured on the server applies to this base URL."""
    note: str = ""
    """Why the server's key does not apply here (it belongs to another URL), if it does not."""


def key_status(settings: ModelSetup, secret: Callable[[str], str] = configured_secret) -> KeyStatus:
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
    settings: ModelSetup, secret: Callable[[str], str] = configured_secret
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
            quote = is_configured_url(preset, base_url, secret)
            try:
                with client_for(preset, key, base_url, secret=secret, quote_bodies=quote) as client:
                    ids = client.list_models()
            except Exception as error:  # any failure here only means "no list from the server"
                problem = str(error)
    ids += [model_id for model_id in known_model_ids(settings.provider) if model_id not in ids]
    return ids, problem


def configured_provider() -> str | None:
    """The paid provider `make run` will use, or None when it needs the local model."""
    settings = default_settings()
    return None if settings.provider == LOCAL else settings.provider
