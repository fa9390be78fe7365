"""Chat settings in the sidebar: provider, model, key (this session only), prompt, tools."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st

from ui import bootstrap
from ui.chat import agent as chat_agent
from ui.model_form import PROVIDERS, sampling_fields
from ui.state import ENABLED_TOOLS, MCP_ERRORS, MODEL_LISTS, SETTINGS, TOOL_REGISTRY
from yiem.model_setup import (
    DEFAULT_MODELS,
    LOCAL,
    ModelSetup,
    SamplingModel,
    available_models,
    key_status,
    starting_base_url,
)
from yiem.providers.presets import PRESETS

# The widgets showing a setup; each keeps its own value across reruns, so a restored setup clears them.
_SETUP_WIDGETS = ("set-provider", "set-system", "set-temp-default", "set-temp", "set-max-tokens", "set-mode")
_PER_PROVIDER_WIDGETS = ("set-url-{}", "set-model-{}", "set-model-id-{}")


def current_setup() -> ModelSetup:
    """What the next message is sent with: the settings and the enabled tools (never the key)."""
    return bootstrap.settings().with_tools(ENABLED_TOOLS.get(set())).as_stored()


def restore(setup: ModelSetup) -> None:
    """Make `setup` the session's settings and enabled tools, and show it in the settings panel."""
    current = bootstrap.settings()
    if (current.provider, current.base_url) != (setup.provider, setup.base_url):
        # A typed key goes only to the server it was typed for: a stored setup may name another.
        for name in PRESETS:
            st.session_state.pop(f"set-key-{name}", None)
    SETTINGS.set(current.restored(setup))
    ENABLED_TOOLS.set(set(setup.tools))
    for key in _SETUP_WIDGETS:
        st.session_state.pop(key, None)
    st.session_state.pop("set-tools", None)
    for name in PRESETS:
        for pattern in _PER_PROVIDER_WIDGETS:
            st.session_state.pop(pattern.format(name), None)


def _model_list(settings: ModelSetup) -> tuple[list[str], str | None]:
    # Asked once per server and key: the list is drawn on every rerun.
    key = (settings.provider, settings.base_url, settings.api_key)
    cache = MODEL_LISTS.setdefault(dict)
    if key not in cache:
        cache[key] = available_models(settings, bootstrap.secret)
    found, problem = cache[key]
    options = list(found)
    if settings.model_id and settings.model_id not in options:
        options.insert(0, settings.model_id)
    return options, problem


def _model_options(settings: ModelSetup) -> list[str]:
    options, problem = _model_list(settings)
    if problem:
        st.caption(f"The server's model list is not available: {problem}")
    return options


def model_choices() -> list[str]:
    """The models the chosen provider offers, as the Settings panel lists them (none for the embedded one)."""
    settings = bootstrap.settings()
    return [] if settings.provider == LOCAL else _model_list(settings)[0]


def use_model(model_id: str) -> None:
    """Make `model_id` the chat's model, in the settings and their panel alike (call from a callback)."""
    settings = bootstrap.settings()
    SETTINGS.set(settings.model_copy(update={"model_id": model_id}))
    st.session_state[f"set-model-{settings.provider}"] = model_id


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
        key="set-tools",
    )
    ENABLED_TOOLS.set(set(chosen))
    if note := chat_agent.tools_note():
        st.caption(note)


@dataclass(frozen=True)
class _Fields:
    """The labels and widget-key prefix of one model's fields in the panel."""

    prefix: str
    base_url: str
    key: str
    model: str
    local_note: str


_CHAT_FIELDS = _Fields(
    "set",
    "Base URL",
    "API key (kept for this session only)",
    "Model",
    "A 135M-parameter toy model that runs on this machine with no key and no internet. "
    "Its answers are often wrong; use it to try the app.",
)
_SAMPLING_FIELDS = _Fields(
    "set-sampling",
    "Sampling base URL",
    "Sampling API key (kept for this session only)",
    "Sampling model",
    "Servers' sampling requests are answered by the toy model on this machine.",
)


def _fresh(provider: str) -> dict[str, Any]:
    """A newly chosen provider's starting base URL and model, with no key typed yet."""
    return {
        "provider": provider,
        "base_url": starting_base_url(provider, bootstrap.secret),
        "model_id": DEFAULT_MODELS.get(provider, ""),
        "api_key": "",
    }


def _model_fields(settings: ModelSetup, fields: _Fields) -> ModelSetup:
    """Base URL, key (this session only) and model of `settings.provider`: the chat's and the
    sampling model's alike, each under its own labels and widget keys."""
    provider = settings.provider
    choice = PRESETS[provider]
    if provider == LOCAL:
        st.caption(fields.local_note)
        return settings
    base_url = st.text_input(
        fields.base_url,
        value=settings.base_url,
        key=f"{fields.prefix}-url-{provider}",
        placeholder=choice.base_url,
    )
    # The server's key is never put in the settings: it is looked up for its own base URL only.
    status = key_status(settings.model_copy(update={"base_url": base_url.strip()}), bootstrap.secret)
    typed_key = st.text_input(
        fields.key,
        type="password",
        key=f"{fields.prefix}-key-{provider}",
        placeholder=f"from {choice.api_key_env}" if status.server_key else "",
    )
    if status.note:
        st.caption(status.note)
    settings = settings.model_copy(update={"base_url": base_url.strip(), "api_key": typed_key.strip()})
    options = _model_options(settings)
    if choice.local and not settings.base_url:
        st.caption(f"Type the server's base URL (usually {choice.base_url}) to list its models.")
    if options:
        model_id = st.selectbox(
            fields.model,
            options,
            index=options.index(settings.model_id) if settings.model_id in options else None,
            accept_new_options=True,
            key=f"{fields.prefix}-model-{provider}",
            placeholder="Choose or type a model id",
        )
    else:  # the server gave no list and the catalogue knows none: the id is typed
        model_id = st.text_input(
            f"{fields.model} id", value=settings.model_id, key=f"{fields.prefix}-model-id-{provider}"
        )
    return settings.model_copy(update={"model_id": (model_id or "").strip()})


def _sampling_fields(settings: ModelSetup) -> ModelSetup:
    """Which model answers MCP servers' sampling requests: the chat's, or any other provider's."""
    chats = ""  # the option for the chat's own model
    names = [chats, *PROVIDERS]
    current = settings.sampling.provider if settings.sampling else chats
    provider = st.selectbox(
        "Model for MCP servers' sampling",
        names,
        index=names.index(current) if current in names else 0,
        format_func=lambda name: "The chat's model" if name == chats else PRESETS[name].label,
        key="set-sampling-provider",
        help="Answers a server's sampling request once you approve it (on the Tools page, or in the "
        "chat while a tool waits); its cost is counted on the Costs page under that server.",
    )
    if provider == chats:
        return settings.model_copy(update={"sampling": None})
    # A newly chosen provider starts as the chat's does; the chosen one keeps what was typed.
    start = settings.for_sampling() if current == provider else settings.model_copy(update=_fresh(provider))
    chosen = _model_fields(start, _SAMPLING_FIELDS)
    return settings.model_copy(update={"sampling": SamplingModel.of(chosen)})


def draw() -> None:
    """The settings expander; edits apply to the next message."""
    settings = bootstrap.settings()
    names = PROVIDERS
    with st.expander("Settings", icon=":material/tune:", expanded=False):
        provider = st.selectbox(
            "Provider",
            names,
            index=names.index(settings.provider) if settings.provider in names else 0,
            format_func=lambda name: PRESETS[name].label,
            key="set-provider",
        )
        if provider != settings.provider:
            settings = settings.model_copy(update=_fresh(provider))
        settings = _model_fields(settings, _CHAT_FIELDS)
        settings = _sampling_fields(settings)
        settings = sampling_fields(settings, lambda name: "set-" + name.replace("_", "-"))
        mode = st.radio(
            "Tool calls of one reply run",
            ["parallel", "sequential"],
            index=0 if settings.tool_execution == "parallel" else 1,
            horizontal=True,
            key="set-mode",
        )
        settings = settings.model_copy(update={"tool_execution": mode})
        SETTINGS.set(settings)
        _tools_section()
