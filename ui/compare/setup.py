"""The columns' settings: provider, model, base URL, system prompt and temperature for each, or a
saved Experiments variant's in one pick."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from ui import bootstrap
from ui.model_form import FIELDS, setup_form
from ui.state import BLIND_TOGGLE, COMPARE_COUNT, COMPARE_SPECS, TOOL_REGISTRY, compare_widget
from yiem.compare import MAX_COLUMNS, MIN_COLUMNS
from yiem.experiments import Variant
from yiem.model_setup import ModelSetup, Preset
from yiem.store import StoreError

_WIDGETS = FIELDS


def _widget_key(index: int) -> Callable[[str], str]:
    return lambda name: compare_widget(name, index).name


def preset_columns(specs: list[ModelSetup]) -> None:
    """Start the settings boxes from these columns (a reopened comparison), forgetting what was typed."""
    COMPARE_SPECS.set(specs)
    COMPARE_COUNT.clear()
    BLIND_TOGGLE.clear()
    for index in range(MAX_COLUMNS):
        for name in _WIDGETS:
            compare_widget(name, index).clear()


def _variant_label(experiment: str, variant: Variant) -> str:
    return f"{experiment} › {variant.name} ({variant.label})"


def _fill_from_variant(index: int, variants: dict[str, Variant]) -> None:
    """The pick's callback: column `index` takes the variant's settings, the other columns keep theirs."""
    picked = compare_widget("variant", index).get()
    compare_widget("variant", index).set(None)  # shown empty again, ready for another pick
    if picked not in variants:
        return
    count = int(COMPARE_COUNT.get(MIN_COLUMNS))
    specs = [_defaults(i) for i in range(max(count, index + 1))]
    specs[index] = variants[picked].as_stored()
    COMPARE_SPECS.set(specs)
    for widget in _WIDGETS:
        compare_widget(widget, index).pop()


def _defaults(index: int) -> ModelSetup:
    preset: list[ModelSetup] | None = COMPARE_SPECS.get()
    if preset is not None and index < len(preset):
        return preset[index]
    return bootstrap.settings().model_only()


def _fill_from_preset(index: int, presets: dict[str, Preset]) -> None:
    # The column starts again from the preset, as a reopened comparison's columns do; the others
    # keep what was typed in them.
    key = compare_widget("preset", index)
    chosen = presets.get(key.get() or "")
    if chosen is None:
        return
    specs: list[ModelSetup] = list(COMPARE_SPECS.get() or [])
    while len(specs) <= index:
        specs.append(_defaults(len(specs)))
    specs[index] = chosen.setup
    COMPARE_SPECS.set(specs)
    for name in _WIDGETS:
        if name != "key":  # a key typed for the column stays with it
            compare_widget(name, index).pop()
    key.set(None)  # ready to fill it again


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
    preset: list[ModelSetup] | None = COMPARE_SPECS.get()
    start = len(preset) if preset else MIN_COLUMNS
    count = int(
        st.number_input(
            "Columns", min_value=MIN_COLUMNS, max_value=MAX_COLUMNS, value=start, key=COMPARE_COUNT.name
        )
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
                    key=compare_widget("preset", index).name,
                    on_change=_fill_from_preset,
                    args=(index, presets),
                )
            st.selectbox(
                "Fill from a saved Experiments variant",
                list(variants),
                index=None,
                placeholder="Choose a variant" if variants else "None saved on the Experiments page yet",
                key=compare_widget("variant", index).name,
                on_change=_fill_from_variant,
                args=(index, variants),
                disabled=not variants,
            )
            specs.append(setup_form(spec, _widget_key(index), offered))
    return specs
