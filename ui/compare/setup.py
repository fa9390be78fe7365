"""The columns' settings: provider, model, base URL, system prompt and temperature for each, or a
saved Experiments variant's in one pick."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from ui import bootstrap
from ui.model_form import FIELDS, setup_form
from ui.state import TOOL_REGISTRY
from yiem.chat import Preset
from yiem.compare import MAX_COLUMNS, MIN_COLUMNS
from yiem.experiments import Variant
from yiem.model_setup import ModelSetup
from yiem.store import StoreError

SPECS = "compare_specs"
"""Session key: a list of ModelSetup a test (or a saved comparison) starts the page with."""


_WIDGETS = FIELDS


def _widget_key(index: int) -> Callable[[str], str]:
    return lambda name: f"cmp_{name}_{index}"


def preset_columns(specs: list[ModelSetup]) -> None:
    """Start the settings boxes from these columns (a reopened comparison), forgetting what was typed."""
    st.session_state[SPECS] = specs
    for key in [key for key in st.session_state if isinstance(key, str) and key.startswith("cmp_")]:
        if key == "cmp_count" or key == "cmp_blind" or key.rsplit("_", 1)[0][4:] in _WIDGETS:
            del st.session_state[key]


def _variant_label(experiment: str, variant: Variant) -> str:
    return f"{experiment} › {variant.name} ({variant.label})"


def _fill_from_variant(index: int, variants: dict[str, Variant]) -> None:
    """The pick's callback: column `index` takes the variant's settings, the other columns keep theirs."""
    picked = st.session_state.get(f"cmp_variant_{index}")
    st.session_state[f"cmp_variant_{index}"] = None  # shown empty again, ready for another pick
    if picked not in variants:
        return
    count = int(st.session_state.get("cmp_count", MIN_COLUMNS))
    specs = [_defaults(i) for i in range(max(count, index + 1))]
    specs[index] = variants[picked].as_stored()
    st.session_state[SPECS] = specs
    for widget in _WIDGETS:
        st.session_state.pop(f"cmp_{widget}_{index}", None)


def _defaults(index: int) -> ModelSetup:
    preset: list[ModelSetup] | None = st.session_state.get(SPECS)
    if preset is not None and index < len(preset):
        return preset[index]
    chat = bootstrap.settings()
    return ModelSetup(provider=chat.provider, base_url=chat.base_url, model_id=chat.model_id)


def _fill_from_preset(index: int, presets: dict[str, Preset]) -> None:
    # The column starts again from the preset, as a reopened comparison's columns do; the others
    # keep what was typed in them.
    key = f"cmp_preset_{index}"
    chosen = presets.get(st.session_state.get(key) or "")
    if chosen is None:
        return
    specs: list[ModelSetup] = list(st.session_state.get(SPECS) or [])
    while len(specs) <= index:
        specs.append(_defaults(len(specs)))
    specs[index] = chosen.setup
    st.session_state[SPECS] = specs
    for name in _WIDGETS:
        if name != "key":  # a key typed for the column stays with it
            st.session_state.pop(f"cmp_{name}_{index}", None)
    st.session_state[key] = None  # ready to fill it again


def _saved_presets() -> dict[str, Preset]:
    try:
        return {preset.name: preset for preset in bootstrap.library().presets()}
    except StoreError as error:
        st.caption(f"The setups saved in Chat could not be read: {error}")
        return {}


def draw_column_settings(saved: list[tuple[str, Variant]]) -> list[ModelSetup]:
    """Draw one settings box per column (2 to 6) and return the columns as set.

    `saved`: the Experiments page's saved variants, `(experiment name, variant)`, any of which fills a column.
    """
    variants = {_variant_label(experiment, variant): variant for experiment, variant in saved}
    preset: list[ModelSetup] | None = st.session_state.get(SPECS)
    start = len(preset) if preset else MIN_COLUMNS
    count = int(
        st.number_input("Columns", min_value=MIN_COLUMNS, max_value=MAX_COLUMNS, value=start, key="cmp_count")
    )
    offered = sorted(TOOL_REGISTRY().tools)
    presets = _saved_presets()
    specs: list[ModelSetup] = []
    boxes = st.columns(min(count, 3))
    for index in range(count):
        spec = _defaults(index)
        with boxes[index % len(boxes)].expander(f"Column {index + 1}: {spec.label}", expanded=False):
            if presets:
                st.selectbox(
                    "Fill from a setup saved in Chat",
                    list(presets),
                    index=None,
                    placeholder="Choose a saved setup",
                    key=f"cmp_preset_{index}",
                    on_change=_fill_from_preset,
                    args=(index, presets),
                )
            st.selectbox(
                "Fill from a saved Experiments variant",
                list(variants),
                index=None,
                placeholder="Choose a variant" if variants else "None saved on the Experiments page yet",
                key=f"cmp_variant_{index}",
                on_change=_fill_from_variant,
                args=(index, variants),
                disabled=not variants,
            )
            specs.append(setup_form(spec, _widget_key(index), offered))
    return specs
