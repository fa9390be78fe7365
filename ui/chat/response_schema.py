"""Chat settings' "Response must be JSON matching this schema": the setup's response schema, said
plainly where the provider cannot ask for it, and refused in words when it is not a usable schema."""

from __future__ import annotations

import json

import streamlit as st

from ui.state import chat_setting
from yiem.model_setup import ModelSetup, ResponseSchemaError, parse_response_schema, response_schema_note

WIDGET = chat_setting("response_schema")  # set-response-schema, cleared when a setup is restored
EXAMPLE = '{"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}'


def response_schema_field(settings: ModelSetup) -> ModelSetup:
    """The field; `settings` with the schema typed, or with none while it is empty or unusable."""
    if not WIDGET.present():
        shown = settings.response_schema
        WIDGET.set(json.dumps(shown, indent=2) if shown is not None else "")
    raw = st.text_area(
        "Response must be JSON matching this schema",
        key=WIDGET.name,
        placeholder=f"e.g. {EXAMPLE}",
        help="A JSON Schema; every reply is then JSON that it accepts. Leave it empty for plain replies.",
    )
    try:
        schema = parse_response_schema(raw)
    except ResponseSchemaError as error:
        st.error(f"{error} Replies stay plain until it is fixed.", icon=":material/data_object:")
        schema = None
    if schema is not None and (note := response_schema_note(settings.provider)):
        st.warning(note, icon=":material/data_object:")
    return settings.model_copy(update={"response_schema": schema})
