"""Drawing a `ToolForm` as Streamlit widgets, with a raw-JSON mode that stays in step with the fields:
a tool's, a prompt's or a resource template's arguments on the Tools page, a server's questions."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import streamlit as st

from ui.state import FormKeys, widget
from yiem.explorer import (
    FieldKind,
    FormField,
    FormState,
    FormValueError,
    RawJsonError,
    ToolForm,
    format_raw_json,
    parse_raw_json,
)


def _state_from_widgets(form: ToolForm, keys: FormKeys) -> FormState:
    return FormState(
        values={field.name: widget(keys.value(field.name)).get() for field in form.fields},
        nulls={field.name for field in form.fields if widget(keys.null(field.name)).get()},
        extra=dict(widget(keys.extra).get() or {}),
    )


def set_widgets(form: ToolForm, keys: FormKeys, state: FormState) -> None:
    """Put `state` into the widgets (before they are drawn in this run, or from a callback)."""
    for field in form.fields:
        widget(keys.value(field.name)).set(state.values.get(field.name))
        if field.nullable:
            widget(keys.null(field.name)).set(field.name in state.nulls)
    widget(keys.extra).set(dict(state.extra))
    if widget(keys.raw_mode).get():
        widget(keys.raw_text).set(format_raw_json(form.partial_arguments(state)))


def load_arguments(form: ToolForm, keys: FormKeys, arguments: Mapping[str, Any]) -> None:
    """Fill the form (and the raw editor) with `arguments`, e.g. to replay a call."""
    widget(keys.raw_text).set(format_raw_json(arguments))
    try:
        set_widgets(form, keys, form.state_from_arguments(arguments))
    except FormValueError:  # the tool's schema changed since: the JSON editor shows them as sent
        widget(keys.raw_mode).set(True)


def _raw_mode_changed(form: ToolForm, keys: FormKeys) -> None:
    widget(keys.errors).set({})
    if widget(keys.raw_mode).get():
        widget(keys.raw_text).set(format_raw_json(form.partial_arguments(_state_from_widgets(form, keys))))
        return
    try:
        state = form.state_from_arguments(parse_raw_json(widget(keys.raw_text).get("")))
    except (RawJsonError, FormValueError) as error:
        # Stay in raw mode: going back to the form would throw the text away.
        widget(keys.raw_mode).set(True)
        widget(keys.errors).set({"": f"{error} Fix it before going back to the form."})
        return
    set_widgets(form, keys, state)


def remember(key: str, default: Any = None) -> None:
    """Keep a widget's value while it is not drawn (another tab or tool) and put it back when it is.

    Streamlit forgets a widget's value after a run that does not draw it; call this before drawing.
    """
    kept = f"{key}:@kept"
    if widget(key).present():
        widget(kept).set(widget(key)())
    elif widget(kept).present():
        widget(key).set(widget(kept)())
    elif default is not None:
        widget(key).set(default)


def draw_form(form: ToolForm, keys: FormKeys, what: str = "tool") -> None:
    """The fields, or the raw-JSON editor; errors from the last attempt shown next to their field."""
    for key in (keys.raw_mode, keys.raw_text):
        remember(key)
    for field in form.fields:
        remember(keys.value(field.name))
        if field.nullable:
            remember(keys.null(field.name))
    raw_mode = bool(widget(keys.raw_mode).get())
    # Field widgets are not drawn in raw mode, so Streamlit drops their values; the JSON holds them then.
    if not raw_mode and any(not widget(keys.value(field.name)).present() for field in form.fields):
        # First draw of this form.
        set_widgets(form, keys, form.initial_state())
    st.toggle(
        "Edit as JSON",
        key=keys.raw_mode,
        on_change=_raw_mode_changed,
        args=(form, keys),
        help="The arguments as one JSON object; switching back fills the form from it.",
    )
    errors: dict[str, str] = widget(keys.errors).get() or {}
    if widget(keys.raw_mode).get():
        if not widget(keys.raw_text).present():
            widget(keys.raw_text).set(
                format_raw_json(form.partial_arguments(_state_from_widgets(form, keys)))
            )
        st.text_area("Arguments (JSON)", key=keys.raw_text, height=220)
        for message in errors.values():
            st.error(_plain(message))
        return
    if not form.fields:
        st.caption(f"This {what} takes no arguments.")
    for field in form.fields:
        _draw_field(form, field, keys)
        if field.name in errors:
            st.error(_plain(errors[field.name]))
    if "" in errors:
        st.error(_plain(errors[""]))
    extra = widget(keys.extra).get() or {}
    if extra:
        st.caption(f"Also sent (from the JSON editor): {', '.join(sorted(extra))}")


def _label(field: FormField) -> str:
    marker = " \\*" if field.required else ""
    return f"{field.label}{marker}"


def _help(field: FormField) -> str | None:
    notes = [field.description] if field.description else []
    if field.kind == FieldKind.JSON:
        kind = field.field_schema.get("type")
        notes.append(
            f"JSON{f' ({kind})' if isinstance(kind, str) else ''}, checked against the tool's schema."
        )
    if field.minimum is not None or field.maximum is not None:
        low = "" if field.minimum is None else f"{field.minimum:g} ≤ "
        high = "" if field.maximum is None else f" ≤ {field.maximum:g}"
        notes.append(f"{low}value{high}")
    return "\n\n".join(notes) or None


def _draw_field(form: ToolForm, field: FormField, keys: FormKeys) -> None:
    key = keys.value(field.name)
    label, help_text = _label(field), _help(field)
    null_key = keys.null(field.name)
    is_null = bool(widget(null_key).get()) if field.nullable else False
    columns = st.columns([6, 1], vertical_alignment="bottom") if field.nullable else None
    area = columns[0] if columns else st.container()
    with area:
        if field.kind == FieldKind.TEXT:
            st.text_input(label, key=key, help=help_text, disabled=is_null)
        elif field.kind == FieldKind.TEXTAREA:
            st.text_area(label, key=key, help=help_text, disabled=is_null, height=68)
        elif field.kind == FieldKind.SELECT:
            st.selectbox(
                label,
                field.options,
                key=key,
                help=help_text,
                disabled=is_null,
                format_func=_option_words,
                placeholder="Choose…",
            )
        elif field.kind == FieldKind.MULTISELECT:
            st.multiselect(
                label, field.options, key=key, help=help_text, disabled=is_null, format_func=_option_words
            )
        elif field.kind == FieldKind.INTEGER:
            st.number_input(
                label, key=key, step=1, help=help_text, disabled=is_null, placeholder="a whole number"
            )
        elif field.kind == FieldKind.NUMBER:
            st.number_input(
                label,
                key=key,
                step=0.1,
                format="%g",
                help=help_text,
                disabled=is_null,
                placeholder="a number",
            )
        elif field.kind == FieldKind.BOOLEAN:
            if field.required or field.has_default:
                if widget(key).get() is None:
                    widget(key).set(False)
                st.checkbox(label, key=key, help=help_text, disabled=is_null)
            else:
                st.selectbox(
                    label,
                    [True, False],
                    key=key,
                    help=help_text,
                    disabled=is_null,
                    format_func=lambda value: "yes" if value else "no",
                    placeholder="not set",
                )
        else:
            st.text_area(
                label, key=key, help=help_text, disabled=is_null, height=100, placeholder=_json_hint(field)
            )
            problem = None if is_null else form.field_error(field.name, widget(key).get())
            if problem:
                st.caption(f":red[:material/error: {_plain(problem)}]")
    if columns:
        with columns[1]:
            st.checkbox("null", key=null_key, help="Send null for this argument.")


_MARKDOWN = re.compile(r"([\\`*_\[\]<>#|~$])")


def _plain(text: str) -> str:
    """Text shown literally inside Markdown (schema messages hold brackets and quotes)."""
    return _MARKDOWN.sub(r"\\\1", text)


def _option_words(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _json_hint(field: FormField) -> str:
    kind = field.field_schema.get("type")
    return "[ … ]" if kind == "array" else "{ … }" if kind == "object" else "JSON"


def form_arguments(form: ToolForm, keys: FormKeys) -> dict[str, Any] | None:
    """The arguments the form holds now, or None with the errors put next to their fields."""
    try:
        if widget(keys.raw_mode).get():
            arguments = parse_raw_json(widget(keys.raw_text).get(""))
            form.validate(arguments)
        else:
            arguments = form.arguments(_state_from_widgets(form, keys))
    except FormValueError as error:
        widget(keys.errors).set(error.field_errors if not widget(keys.raw_mode).get() else _flat(error))
        return None
    except RawJsonError as error:
        widget(keys.errors).set({"": str(error)})
        return None
    widget(keys.errors).set({})
    return arguments


def _flat(error: FormValueError) -> dict[str, str]:
    return {name: (f"{name}: {message}" if name else message) for name, message in error.field_errors.items()}
