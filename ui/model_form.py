"""The one settings form of a model setup, drawn by Chat, each Compare column and each Experiments variant."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

from ui.temperature import temperature_input
from yiem.model_setup import DEFAULT_MODELS, LOCAL, MAX_TOKENS_LIMIT, ModelSetup, asks_base_url, calls_tools
from yiem.providers import PRESETS

# The embedded model first: it is what works with no key and no network.
PROVIDERS = [LOCAL, *(name for name in PRESETS if name != LOCAL)]
FIELDS = ("provider", "model", "url", "key", "system", "temp_default", "temp", "max_tokens", "tools")
"""The form's widget names; `key(name)` makes each one's session key."""

WidgetKey = Callable[[str], str]


def _init(key: str, value: Any) -> str:
    if key not in st.session_state:
        st.session_state[key] = value
    return key


def model_fields(setup: ModelSetup, key: WidgetKey, ask_key: bool = True) -> ModelSetup:
    """Provider, model, base URL (every provider but the embedded one) and a key for this session."""
    provider = st.selectbox("Provider", PROVIDERS, key=_init(key("provider"), setup.provider or LOCAL))
    model_id = st.text_input(
        "Model", key=_init(key("model"), setup.model_id or DEFAULT_MODELS.get(provider, ""))
    )
    base_url, api_key = "", setup.api_key
    if asks_base_url(provider):
        preset = PRESETS.get(provider)
        base_url = st.text_input(
            "Base URL",
            key=_init(key("url"), setup.base_url),
            placeholder=(preset.base_url if preset else "") or "http://127.0.0.1:8080/v1",
        )
        if ask_key:
            api_key = st.text_input("API key (this session only)", type="password", key=key("key")) or api_key
    return setup.model_copy(
        update={
            "provider": provider,
            "model_id": model_id.strip(),
            "base_url": base_url.strip(),
            "api_key": api_key.strip(),
        }
    )


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
    system_prompt = st.text_area(prompt_label, key=_init(key("system"), setup.system_prompt))
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
        key=_init(key("tools"), [name for name in setup.tools if name in names]),
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
