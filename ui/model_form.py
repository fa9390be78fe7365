"""The one settings form of a model setup, drawn by Chat, each Compare column and each Experiments variant."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import streamlit as st

from ui.state import init_widget
from ui.temperature import temperature_input
from yiem.model_setup import (
    DEFAULT_MODELS,
    LOCAL,
    MAX_TOKENS_LIMIT,
    ModelSetup,
    asks_base_url,
    calls_tools,
    key_status,
    starting_base_url,
)
from yiem.providers import PRESETS

# The embedded model first: it is what works with no key and no network.
PROVIDERS = [LOCAL, *(name for name in PRESETS if name != LOCAL)]
FIELDS = ("provider", "model", "url", "key", "system", "temp_default", "temp", "max_tokens", "tools")
"""The form's widget names; `key(name)` makes each one's session key."""

WidgetKey = Callable[[str], str]
ModelList = Callable[[ModelSetup], tuple[list[str], "str | None"]]
"""Where a form's model choices come from: the ids to offer and why the server's list is missing."""


@dataclass(frozen=True)
class ModelLabels:
    """The words of one model's fields (Chat's sampling model has its own beside the chat's)."""

    provider: str = "Provider"
    base_url: str = "Base URL"
    key: str = "API key (kept for this session only)"
    model: str = "Model"
    local_note: str = ""
    """Said instead of the connection fields when the embedded model is chosen."""


def provider_label(name: str) -> str:
    """A provider as the forms list it."""
    preset = PRESETS.get(name)
    return preset.label if preset else name


def fresh(setup: ModelSetup, provider: str) -> ModelSetup:
    """`setup` with a newly chosen provider: its starting base URL and model, and no key typed yet."""
    return setup.model_copy(
        update={
            "provider": provider,
            "base_url": starting_base_url(provider),
            "model_id": DEFAULT_MODELS.get(provider, ""),
            "api_key": "",
        }
    )


def provider_field(setup: ModelSetup, key: WidgetKey, label: str = "Provider") -> ModelSetup:
    """The provider; a newly chosen one starts from its own base URL and model."""
    start = setup.provider if setup.provider in PROVIDERS else LOCAL
    provider = st.selectbox(
        label, PROVIDERS, format_func=provider_label, key=init_widget(key("provider"), start)
    )
    return setup if provider == setup.provider else fresh(setup, provider)


def connection_fields(
    setup: ModelSetup,
    key: WidgetKey,
    ask_key: bool = True,
    labels: ModelLabels = ModelLabels(),
    models: ModelList | None = None,
    per_provider: bool = False,
) -> ModelSetup:
    """Base URL, key (this session only) and model of `setup.provider`.

    `models` lists the ids to choose from (else the id is typed); `per_provider` gives each
    provider's fields their own widget keys, so each keeps what was typed for it."""
    provider = setup.provider
    if not asks_base_url(provider):
        if labels.local_note:
            st.caption(labels.local_note)
        return setup

    def name(field: str) -> str:
        return f"{field}_{provider}" if per_provider else field

    preset = PRESETS.get(provider)
    default_url = (preset.base_url if preset else "") or "http://127.0.0.1:8080/v1"
    base_url = st.text_input(
        labels.base_url, key=init_widget(key(name("url")), setup.base_url), placeholder=default_url
    ).strip()
    api_key = setup.api_key
    if ask_key:
        # The server's key is never put in the setup: it is looked up for its own base URL only.
        status = key_status(setup.model_copy(update={"base_url": base_url}))
        typed = st.text_input(
            labels.key,
            type="password",
            key=key(name("key")),
            placeholder=f"from {preset.api_key_env}" if status.server_key and preset else "",
        )
        if status.note:
            st.caption(status.note)
        api_key = typed.strip() or api_key  # a key typed here, else the setup's own
    setup = setup.model_copy(update={"base_url": base_url, "api_key": api_key})
    return setup.model_copy(update={"model_id": _model_field(setup, key, name, labels.model, models)})


def _model_field(
    setup: ModelSetup, key: WidgetKey, name: Callable[[str], str], label: str, models: ModelList | None
) -> str:
    start = setup.model_id or DEFAULT_MODELS.get(setup.provider, "")
    if models is None:
        return st.text_input(label, key=init_widget(key(name("model")), start)).strip()
    found, problem = models(setup)
    options = list(found)
    if setup.model_id and setup.model_id not in options:
        options.insert(0, setup.model_id)
    if problem:
        st.caption(f"The server's model list is not available: {problem}")
    preset = PRESETS.get(setup.provider)
    if preset is not None and preset.local and not setup.base_url:
        st.caption(f"Type the server's base URL (usually {preset.base_url}) to list its models.")
    if not options:  # the server gave no list and the catalogue knows none: the id is typed
        return st.text_input(f"{label} id", key=init_widget(key(name("model_id")), start)).strip()
    chosen = st.selectbox(
        label,
        options,
        accept_new_options=True,
        key=init_widget(key(name("model")), start if start in options else None),
        placeholder="Choose or type a model id",
    )
    return (chosen or "").strip()


def model_fields(setup: ModelSetup, key: WidgetKey, ask_key: bool = True) -> ModelSetup:
    """Provider, then its base URL (every provider but the embedded one), key and model."""
    return connection_fields(provider_field(setup, key), key, ask_key)


def max_tokens_input(current: int | None, key: str) -> int | None:
    """The longest reply in tokens; 0 (None) leaves it to the provider."""
    chosen = st.number_input(
        "Longest reply in tokens (0: the provider's default)",
        min_value=0,
        max_value=MAX_TOKENS_LIMIT,
        value=current or 0,
        step=256,
        key=key,
    )
    return int(chosen) or None


def sampling_fields(setup: ModelSetup, key: WidgetKey, prompt_label: str = "System prompt") -> ModelSetup:
    """System prompt, temperature (or the provider's default) and the longest reply."""
    system_prompt = st.text_area(prompt_label, key=init_widget(key("system"), setup.system_prompt))
    temperature = temperature_input(setup.temperature, key("temp_default"), key("temp"))
    max_tokens = max_tokens_input(setup.max_tokens, key("max_tokens"))
    return setup.model_copy(
        update={"system_prompt": system_prompt, "temperature": temperature, "max_tokens": max_tokens}
    )


def tools_field(setup: ModelSetup, offered: Sequence[str], key: WidgetKey) -> ModelSetup:
    """The tools this setup may call, from those the Tools page's servers offer."""
    names = sorted(set(offered) | set(setup.tools))
    sends = calls_tools(setup.provider)
    tools = st.multiselect(
        "Tools it may call (from the Tools page's servers)",
        names,
        key=init_widget(key("tools"), [name for name in setup.tools if name in names]),
        disabled=not names or not sends,
        help=None if sends else "The embedded SmolLM2 is sent no tools.",
    )
    return setup.model_copy(update={"tools": list(tools)})


def setup_form(
    setup: ModelSetup,
    key: WidgetKey,
    offered_tools: Sequence[str],
    ask_key: bool = True,
    prompt_label: str = "System prompt",
) -> ModelSetup:
    """The whole form: model, sampling and tools, as Compare's columns and Experiments' variants draw it."""
    setup = model_fields(setup, key, ask_key)
    setup = sampling_fields(setup, key, prompt_label)
    return tools_field(setup, offered_tools, key)
