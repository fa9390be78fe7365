"""The one settings form of a model setup, drawn by Chat, each Compare column and each Experiments variant."""

from __future__ import annotations

import json
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
    ResponseSchemaError,
    asks_base_url,
    calls_tools,
    key_status,
    parse_response_schema,
    response_schema_note,
    starting_base_url,
)
from yiem.providers import PRESETS

# The embedded model first: it is what works with no key and no network.
PROVIDERS = [LOCAL, *(name for name in PRESETS if name != LOCAL)]
FIELDS = (
    "provider",
    "model",
    "url",
    "key",
    "system",
    "temp_default",
    "temp",
    "max_tokens",
    "response_schema",
    "tools",
    "mode",
)
"""The form's widget names; `key(name)` makes each one's session key."""
PER_PROVIDER = ("url", "key", "model", "model_id")
"""The fields a form with `per_provider` keys once per provider (`url_openai`), so each keeps its own."""

TOOL_MODES = ("parallel", "sequential")
NO_TOOLS_SENT = (
    "The embedded SmolLM2 cannot call tools (its chat template has none), so messages are sent "
    "without the tools chosen. Pick another provider to use them."
)
SCHEMA_EXAMPLE = '{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}'

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
    prompt: str = "System prompt"
    tools: str = "Tools it may call (from the Tools page's servers)"


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


def response_schema_field(setup: ModelSetup, key: WidgetKey) -> ModelSetup:
    """The response schema: every reply must then be JSON it accepts. Said plainly where the provider
    cannot ask for it; refused in words while it is not a usable schema (replies stay plain)."""
    shown = "" if setup.response_schema is None else json.dumps(setup.response_schema, indent=2)
    raw = st.text_area(
        "Response must be JSON matching this schema",
        key=init_widget(key("response_schema"), shown),
        placeholder=f"e.g. {SCHEMA_EXAMPLE}",
        help="A JSON Schema; every reply is then JSON that it accepts. Leave it empty for plain replies.",
    )
    try:
        schema = parse_response_schema(raw)
    except ResponseSchemaError as error:
        st.error(f"{error} Replies stay plain until it is fixed.", icon=":material/data_object:")
        schema = None
    if schema is not None and (note := response_schema_note(setup.provider)):
        st.warning(note, icon=":material/data_object:")
    return setup.model_copy(update={"response_schema": schema})


def tools_field(setup: ModelSetup, offered: Sequence[str], key: WidgetKey, label: str) -> ModelSetup:
    """The tools this setup may call, from those the Tools page's servers offer (and those it names).

    The embedded model is sent none (`calls_tools`): the form says so once some are chosen."""
    names = sorted(set(offered) | set(setup.tools))
    if not names:
        st.caption("No tools yet: connect an MCP server on the Tools page, or list it in mcp.json.")
        return setup
    tools = st.multiselect(label, names, key=init_widget(key("tools"), list(setup.tools)))
    if tools and not calls_tools(setup.provider):
        st.caption(NO_TOOLS_SENT)
    return setup.model_copy(update={"tools": list(tools)})


def tool_mode_field(setup: ModelSetup, key: WidgetKey) -> ModelSetup:
    """Whether the tool calls of one reply run side by side or one after another."""
    mode = st.radio(
        "Tool calls of one reply run",
        TOOL_MODES,
        horizontal=True,
        key=init_widget(key("mode"), setup.tool_execution),
    )
    return setup.model_copy(update={"tool_execution": mode})


def setup_form(
    setup: ModelSetup,
    key: WidgetKey,
    offered_tools: Sequence[str],
    *,
    ask_key: bool = True,
    labels: ModelLabels = ModelLabels(),
    models: ModelList | None = None,
    per_provider: bool = False,
    after_model: Callable[[ModelSetup], ModelSetup] | None = None,
) -> ModelSetup:
    """The whole form, as Chat's settings, each Compare column and each Experiments variant draw it:
    provider, base URL, key and model; then `after_model`, a page's own block (Chat's model for MCP
    servers' sampling); the prompt and sampling; the response schema; the tools and their mode.

    `ask_key`: whether a key may be typed here (not for a variant: a stored run never holds one);
    `models`, `per_provider`: as `connection_fields` takes them."""
    setup = provider_field(setup, key, labels.provider)
    setup = connection_fields(setup, key, ask_key, labels, models, per_provider)
    if after_model is not None:
        setup = after_model(setup)
    setup = sampling_fields(setup, key, labels.prompt)
    setup = response_schema_field(setup, key)
    setup = tools_field(setup, offered_tools, key, labels.tools)
    return tool_mode_field(setup, key)
