"""Chat settings in the sidebar: provider, model, key (this session only), prompt, tools."""

from __future__ import annotations

from typing import Any

import streamlit as st

from ui import bootstrap
from ui.chat import agent as chat_agent
from ui.chat.response_schema import response_schema_field
from ui.model_form import (
    PROVIDERS,
    ModelLabels,
    WidgetKey,
    connection_fields,
    fresh,
    provider_field,
    provider_label,
    sampling_fields,
)
from ui.state import ENABLED_TOOLS, MCP_ERRORS, MODEL_LISTS, SET_TOOLS, SETTINGS, TOOL_REGISTRY, chat_setting
from yiem.model_setup import (
    LOCAL,
    ModelSetup,
    SamplingModel,
    available_models,
)
from yiem.providers.presets import PRESETS

# The widgets showing a setup; each keeps its own value across reruns, so a restored setup clears them.
_SETUP_WIDGETS = ("provider", "system", "temp_default", "temp", "max_tokens", "mode", "response_schema")
_PER_PROVIDER_WIDGETS = ("url_{}", "model_{}", "model_id_{}")


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
    for key in _SETUP_WIDGETS:
        chat_setting(key).pop()
    SET_TOOLS.pop()
    for name in PRESETS:
        for pattern in _PER_PROVIDER_WIDGETS:
            chat_setting(pattern.format(name)).pop()


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


def _tools_section() -> None:
    registry: Any = TOOL_REGISTRY()
    errors: dict[str, str] = MCP_ERRORS.get({})
    names = list(registry.tools)
    for server, error in errors.items():
        st.warning(f"MCP server `{server}` is not available: {error}")
    if not names:
        st.caption("No tools: add MCP servers to mcp.json, then reload.")
        return
    enabled: set[str] = ENABLED_TOOLS()
    chosen = st.multiselect(
        "Tools the model may call",
        names,
        default=[name for name in names if name in enabled],
        key=SET_TOOLS.name,
    )
    ENABLED_TOOLS.set(set(chosen))
    if note := chat_agent.tools_note():
        st.caption(note)


_CHAT_LABELS = ModelLabels(
    local_note="A 135M-parameter toy model that runs on this machine with no key and no internet. "
    "Its answers are often wrong; use it to try the app.",
)
_SAMPLING_LABELS = ModelLabels(
    base_url="Sampling base URL",
    key="Sampling API key (kept for this session only)",
    model="Sampling model",
    local_note="Servers' sampling requests are answered by the toy model on this machine.",
)


def _widget_key(prefix: str) -> WidgetKey:
    return lambda name: chat_setting(prefix + name).name


def _connection(settings: ModelSetup, prefix: str, labels: ModelLabels) -> ModelSetup:
    """The chat's and the sampling model's base URL, key and model, each under its own widget keys.

    The key is the field's alone (never the last run's): an emptied field sends no typed key."""
    typed_only = settings.model_copy(update={"api_key": ""})
    key = _widget_key(prefix)
    return connection_fields(typed_only, key, labels=labels, models=_model_list, per_provider=True)


def _sampling_fields(settings: ModelSetup) -> ModelSetup:
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
    chosen = _connection(start, "sampling_", _SAMPLING_LABELS)
    return settings.model_copy(update={"sampling": SamplingModel.of(chosen)})


def draw() -> None:
    """The settings expander; edits apply to the next message."""
    settings = bootstrap.settings()
    with st.expander("Settings", icon=":material/tune:", expanded=False):
        settings = provider_field(settings, _widget_key(""))
        settings = _connection(settings, "", _CHAT_LABELS)
        settings = _sampling_fields(settings)
        settings = sampling_fields(settings, _widget_key(""))
        mode = st.radio(
            "Tool calls of one reply run",
            ["parallel", "sequential"],
            index=0 if settings.tool_execution == "parallel" else 1,
            horizontal=True,
            key=chat_setting("mode").name,
        )
        settings = settings.model_copy(update={"tool_execution": mode})
        settings = response_schema_field(settings)
        SETTINGS.set(settings)
        _tools_section()
