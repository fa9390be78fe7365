"""Chat settings in the sidebar: the one setup form (ui.model_form), with Chat's own model for MCP
servers' sampling; the key is kept for this session only, the tools chosen are the session's."""

from __future__ import annotations

from typing import Any

import streamlit as st

from ui import bootstrap
from ui.model_form import (
    FIELDS,
    PER_PROVIDER,
    PROVIDERS,
    ModelLabels,
    WidgetKey,
    connection_fields,
    fresh,
    provider_label,
    setup_form,
)
from ui.state import ENABLED_TOOLS, MCP_ERRORS, MODEL_LISTS, SETTINGS, TOOL_REGISTRY, chat_setting
from yiem.model_setup import (
    LOCAL,
    ModelSetup,
    SamplingModel,
    available_models,
)
from yiem.providers.presets import PRESETS


def current_setup() -> ModelSetup:
    """What the next message is sent with: the settings and the enabled tools (never the key)."""
    return bootstrap.settings().with_tools(ENABLED_TOOLS.get(set())).as_stored()


def restore(setup: ModelSetup) -> None:
    """Make `setup` the session's settings and enabled tools, and show it in the settings panel."""
    current = bootstrap.settings()
    if (current.provider, current.base_url) != (setup.provider, setup.base_url):
        # A typed key goes only to the server it was typed for: a stored setup may name another.
        for name in PRESETS:
            chat_setting(f"key_{name}").pop()
    SETTINGS.set(current.restored(setup))
    ENABLED_TOOLS.set(set(setup.tools))
    # Each widget keeps its own value across reruns, so the restored setup clears them all (but the
    # keys typed, above: they stay for the same server).
    for field in FIELDS:
        if field not in PER_PROVIDER:
            chat_setting(field).pop()
    for name in PRESETS:
        for field in PER_PROVIDER:
            if field != "key":
                chat_setting(f"{field}_{name}").pop()


def _model_list(settings: ModelSetup) -> tuple[list[str], str | None]:
    # Asked once per server and key: the list is drawn on every rerun.
    key = (settings.provider, settings.base_url, settings.api_key)
    cache = MODEL_LISTS.setdefault(dict)
    if key not in cache:
        cache[key] = available_models(settings, bootstrap.secret)
    return cache[key]


def model_choices() -> list[str]:
    """The models the chosen provider offers, as the Settings panel lists them (none for the embedded one)."""
    settings = bootstrap.settings()
    if settings.provider == LOCAL:
        return []
    found = _model_list(settings)[0]
    return found if settings.model_id in found or not settings.model_id else [settings.model_id, *found]


def use_model(model_id: str) -> None:
    """Make `model_id` the chat's model, in the settings and their panel alike (call from a callback)."""
    settings = bootstrap.settings()
    SETTINGS.set(settings.model_copy(update={"model_id": model_id}))
    chat_setting(f"model_{settings.provider}").set(model_id)


_CHAT_LABELS = ModelLabels(
    local_note="A 135M-parameter toy model that runs on this machine with no key and no internet. "
    "Its answers are often wrong; use it to try the app.",
    tools="Tools the model may call",
)
_SAMPLING_LABELS = ModelLabels(
    base_url="Sampling base URL",
    key="Sampling API key (kept for this session only)",
    model="Sampling model",
    local_note="Servers' sampling requests are answered by the toy model on this machine.",
)


def _widget_key(prefix: str) -> WidgetKey:
    return lambda name: chat_setting(prefix + name).name


def _sampling_connection(start: ModelSetup) -> ModelSetup:
    """The sampling model's base URL, key and model, under widget keys of its own (`set-sampling-…`).

    The key is the field's alone (never the last run's): an emptied field sends no typed key."""
    typed_only = start.model_copy(update={"api_key": ""})
    key = _widget_key("sampling_")
    return connection_fields(typed_only, key, labels=_SAMPLING_LABELS, models=_model_list, per_provider=True)


def _sampling_model(settings: ModelSetup) -> ModelSetup:
    """Which model answers MCP servers' sampling requests: the chat's, or any other provider's."""
    chats = ""  # the option for the chat's own model
    names = [chats, *PROVIDERS]
    current = settings.sampling.provider if settings.sampling else chats
    provider = st.selectbox(
        "Model for MCP servers' sampling",
        names,
        index=names.index(current) if current in names else 0,
        format_func=lambda name: "The chat's model" if name == chats else provider_label(name),
        key=chat_setting("sampling_provider").name,
        help="Answers a server's sampling request once you approve it (on the Tools page, or in the "
        "chat while a tool waits); its cost is counted on the Costs page under that server.",
    )
    if provider == chats:
        return settings.model_copy(update={"sampling": None})
    # A newly chosen provider starts as the chat's does; the chosen one keeps what was typed.
    start = settings.for_sampling() if current == provider else fresh(settings, provider)
    chosen = _sampling_connection(start)
    return settings.model_copy(update={"sampling": SamplingModel.of(chosen)})


def draw() -> None:
    """The settings expander; edits apply to the next message."""
    registry: Any = TOOL_REGISTRY()
    # The key is the field's alone (never the last run's): an emptied field sends no typed key.
    start = bootstrap.settings().model_copy(update={"api_key": ""}).with_tools(ENABLED_TOOLS.get(set()))
    with st.expander("Settings", icon=":material/tune:", expanded=False):
        settings = setup_form(
            start,
            _widget_key(""),
            list(registry.tools),
            labels=_CHAT_LABELS,
            models=_model_list,
            per_provider=True,
            after_model=_sampling_model,
        )
        SETTINGS.set(settings)
        ENABLED_TOOLS.set(set(settings.tools))
        errors: dict[str, str] = MCP_ERRORS.get({})
        for server, error in errors.items():
            st.warning(f"MCP server `{server}` is not available: {error}")
