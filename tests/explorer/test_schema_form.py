"""The form builder on its own: every field kind makes arguments that the schema accepts."""

from __future__ import annotations

import json
from typing import Any, Literal

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from yiem.explorer import (
    FieldKind,
    FormState,
    FormValueError,
    RawJsonError,
    ToolForm,
    format_raw_json,
    parse_raw_json,
)

ENUMS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
        "level": {"type": "integer", "enum": [1, 2, 3]},
        "mode": {"const": "fast"},
        "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "uniqueItems": True},
    },
    "required": ["level"],
}

NULLABLE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "note": {"type": ["string", "null"]},
        "limit": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}], "default": None},
        "ratio": {"type": "number", "nullable": True},
        "color": {"enum": ["red", "green", None]},
    },
    "required": ["note"],
}

NESTED: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "Who to greet", "maxLength": 40},
        "body": {"type": "string"},
        "count": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3},
        "scale": {"type": "number"},
        "loud": {"type": "boolean", "default": False},
        "options": {
            "type": "object",
            "properties": {
                "depth": {"type": "integer"},
                "flags": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["depth"],
            "additionalProperties": False,
        },
        "anything": {},
    },
    "required": ["name", "count"],
    "additionalProperties": False,
}

ARRAYS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "numbers": {"type": "array", "items": {"type": "number"}, "minItems": 1},
        "pairs": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
        "people": {
            "type": "array",
            "items": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        },
    },
    "required": ["numbers"],
}

REFS: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "Unit": {"type": "string", "enum": ["m", "ft"], "description": "Length unit"},
        "Point": {
            "type": "object",
            "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
            "required": ["x", "y"],
        },
        "Tree": {
            "type": "object",
            "properties": {
                "value": {"type": "integer"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}},
            },
        },
        "Count": {"type": "integer", "minimum": 0},
    },
    "properties": {
        "unit": {"$ref": "#/$defs/Unit"},
        "origin": {"$ref": "#/$defs/Point", "description": "Where to start"},
        "tree": {"$ref": "#/$defs/Tree"},
        "count": {"allOf": [{"$ref": "#/$defs/Count"}], "default": 2},
        "maybe_point": {"anyOf": [{"$ref": "#/$defs/Point"}, {"type": "null"}]},
    },
    "required": ["unit", "origin"],
}

DRAFT7_DEFINITIONS: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "definitions": {"Level": {"type": "string", "enum": ["low", "high"]}},
    "properties": {"level": {"$ref": "#/definitions/Level"}},
    "required": ["level"],
}


class Address(BaseModel):
    street: str
    city: str


class Booking(BaseModel):
    """A pydantic model: its schema uses $defs, anyOf-null and Literal enums, as FastMCP tools do."""

    guest: str = Field(description="Name on the booking")
    nights: int = Field(ge=1)
    rate: float
    breakfast: bool = False
    room: Literal["single", "double"] = "double"
    address: Address
    previous: Address | None = None
    notes: str | None = None


# A sample widget value for each kind, chosen to satisfy the schemas above.
def _fill(form: ToolForm) -> FormState:
    state = form.initial_state()
    for field in form.fields:
        if field.kind == FieldKind.SELECT:
            state.values[field.name] = field.options[-1]
        elif field.kind == FieldKind.MULTISELECT:
            state.values[field.name] = field.options[:2]
        elif field.kind == FieldKind.INTEGER:
            state.values[field.name] = 2
        elif field.kind == FieldKind.NUMBER:
            state.values[field.name] = "2.5"  # typed text is accepted when it is a number
        elif field.kind == FieldKind.BOOLEAN:
            state.values[field.name] = True
        elif field.kind in (FieldKind.TEXT, FieldKind.TEXTAREA):
            state.values[field.name] = "hello"
        else:
            state.values[field.name] = json.dumps(_json_sample(form, field.name))
    return state


JSON_SAMPLES: dict[str, Any] = {
    "options": {"depth": 2, "flags": ["x"]},
    "anything": {"free": [1, "form"]},
    "numbers": [1, 2.5],
    "pairs": [[1, 2], [3]],
    "people": [{"name": "Ada"}],
    "origin": {"x": 1, "y": 2},
    "tree": {"value": 1, "children": [{"value": 2, "children": []}]},
    "maybe_point": {"x": 0, "y": 0},
    "address": {"street": "Main St 1", "city": "Bern"},
    "previous": {"street": "Old Rd 2", "city": "Basel"},
}


def _json_sample(form: ToolForm, name: str) -> Any:
    return JSON_SAMPLES[name]


SCHEMAS = {
    "enums": ENUMS,
    "nullable": NULLABLE,
    "nested": NESTED,
    "arrays": ARRAYS,
    "refs": REFS,
    "draft7": DRAFT7_DEFINITIONS,
    "pydantic": Booking.model_json_schema(),
}


@pytest.mark.parametrize("name", SCHEMAS)
def test_every_field_kind_makes_arguments_the_schema_accepts(name: str) -> None:
    schema = SCHEMAS[name]
    form = ToolForm(schema)
    arguments = form.arguments(_fill(form))
    jsonschema.validate(arguments, schema)
    assert set(arguments) == {field.name for field in form.fields}


@pytest.mark.parametrize("name", SCHEMAS)
def test_defaults_alone_make_arguments_when_required_fields_are_filled(name: str) -> None:
    schema = SCHEMAS[name]
    form = ToolForm(schema)
    state = form.initial_state()
    filled = _fill(form)
    for field in form.fields:
        if field.required and not field.has_default:
            state.values[field.name] = filled.values[field.name]
    arguments = form.arguments(state)
    jsonschema.validate(arguments, schema)
    for field in form.fields:
        if not field.required and not field.has_default:
            assert field.name not in arguments, "an empty optional field is left out"
        if field.has_default and not field.required:
            assert arguments[field.name] == field.default


@pytest.mark.parametrize("name", SCHEMAS)
def test_raw_json_round_trip_keeps_the_arguments(name: str) -> None:
    form = ToolForm(SCHEMAS[name])
    arguments = form.arguments(_fill(form))
    text = format_raw_json(arguments)
    again = form.arguments(form.state_from_arguments(parse_raw_json(text)))
    assert again == arguments


def test_field_kinds_follow_the_schema() -> None:
    kinds = {field.name: field.kind for field in ToolForm(NESTED).fields}
    assert kinds == {
        "name": FieldKind.TEXT,
        "body": FieldKind.TEXTAREA,
        "count": FieldKind.INTEGER,
        "scale": FieldKind.NUMBER,
        "loud": FieldKind.BOOLEAN,
        "options": FieldKind.JSON,
        "anything": FieldKind.JSON,
    }
    fields = {field.name: field for field in ToolForm(NESTED).fields}
    assert fields["name"].required and fields["name"].description == "Who to greet"
    assert fields["count"].default == 3 and fields["count"].minimum == 1 and fields["count"].maximum == 10
    assert not fields["scale"].required


def test_enums_are_selects_with_their_options() -> None:
    fields = {field.name: field for field in ToolForm(ENUMS).fields}
    assert fields["unit"].kind == FieldKind.SELECT and fields["unit"].options == ["celsius", "fahrenheit"]
    assert fields["level"].options == [1, 2, 3]
    assert fields["mode"].options == ["fast"]
    assert fields["tags"].kind == FieldKind.MULTISELECT


def test_nullable_forms_are_recognised_and_send_null() -> None:
    form = ToolForm(NULLABLE)
    fields = {field.name: field for field in form.fields}
    assert all(field.nullable for field in fields.values())
    assert fields["note"].kind == FieldKind.TEXTAREA
    assert fields["limit"].kind == FieldKind.INTEGER
    assert fields["ratio"].kind == FieldKind.NUMBER
    assert fields["color"].kind == FieldKind.SELECT and fields["color"].options == ["red", "green"]
    state = form.initial_state()
    assert state.nulls == {"limit"}, "a null default starts as null"
    state.nulls |= {"note", "color"}
    arguments = form.arguments(state)
    assert arguments == {"note": None, "limit": None, "color": None}
    jsonschema.validate(arguments, NULLABLE)
    assert form.state_from_arguments(arguments).nulls == {"note", "limit", "color"}


def test_refs_are_resolved_with_sibling_keys_kept() -> None:
    fields = {field.name: field for field in ToolForm(REFS).fields}
    assert fields["unit"].kind == FieldKind.SELECT and fields["unit"].description == "Length unit"
    assert fields["origin"].kind == FieldKind.JSON and fields["origin"].description == "Where to start"
    assert fields["count"].kind == FieldKind.INTEGER and fields["count"].default == 2
    assert fields["maybe_point"].nullable and fields["maybe_point"].kind == FieldKind.JSON


def test_text_that_is_not_a_number_is_refused_in_words() -> None:
    form = ToolForm(NESTED)
    state = form.initial_state()
    state.values.update(name="Ada", count="three", scale="1,5")
    with pytest.raises(FormValueError) as caught:
        form.arguments(state)
    assert caught.value.field_errors == {
        "count": "“three” is not a number.",
        "scale": "“1,5” is not a number.",
    }
    state.values.update(count="2.5", scale="nan")
    with pytest.raises(FormValueError) as caught:
        form.arguments(state)
    assert caught.value.field_errors["count"] == "“2.5” is not a whole number."
    assert "finite" in caught.value.field_errors["scale"]
    state.values.update(count="4.0", scale=" 7 ")
    assert form.arguments(state) == {"name": "Ada", "count": 4, "scale": 7.0, "loud": False}


def test_missing_required_fields_and_schema_violations_name_the_field() -> None:
    form = ToolForm(NESTED)
    state = form.initial_state()
    state.values["count"] = None
    state.values["options"] = '{"flags": ["x"]}'
    with pytest.raises(FormValueError) as caught:
        form.arguments(state)
    # An empty required string is still a string (it can be meant); a missing number is not.
    assert caught.value.field_errors == {"count": "This field is required."}
    state.values.update(name="Ada", count=11)
    with pytest.raises(FormValueError) as caught:
        form.arguments(state)
    errors = caught.value.field_errors
    assert set(errors) == {"count", "options"}
    assert "11 is greater than the maximum of 10" in errors["count"]
    assert "'depth' is a required property" in errors["options"]


def test_bad_json_in_a_json_field_is_reported_with_its_place() -> None:
    form = ToolForm(ARRAYS)
    state = form.initial_state()
    state.values["numbers"] = "[1, 2,"
    with pytest.raises(FormValueError) as caught:
        form.arguments(state)
    assert caught.value.field_errors["numbers"].startswith("Not valid JSON: ")
    assert "line 1" in caught.value.field_errors["numbers"]


def test_nested_errors_say_where_inside_the_field() -> None:
    form = ToolForm(ARRAYS)
    state = form.initial_state()
    state.values["numbers"] = '[1, "two"]'
    with pytest.raises(FormValueError) as caught:
        form.arguments(state)
    assert caught.value.field_errors["numbers"] == "1: 'two' is not of type 'number'"


def test_raw_json_keeps_keys_the_form_has_no_field_for() -> None:
    form = ToolForm(ENUMS)
    state = form.state_from_arguments({"level": 2, "extra_key": [1]})
    assert state.extra == {"extra_key": [1]}
    assert form.arguments(state) == {"level": 2, "extra_key": [1]}


def test_additional_properties_false_refuses_unknown_keys() -> None:
    form = ToolForm(NESTED)
    state = form.state_from_arguments({"name": "Ada", "count": 1, "typo": 1})
    with pytest.raises(FormValueError) as caught:
        form.arguments(state)
    assert "typo" in caught.value.field_errors[""]


def test_raw_json_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(RawJsonError, match="line 1"):
        parse_raw_json("{")
    with pytest.raises(RawJsonError, match="not list"):
        parse_raw_json("[1]")
    assert parse_raw_json("  ") == {}


def test_a_tool_without_a_schema_has_an_empty_form() -> None:
    form = ToolForm(None)
    assert form.fields == []
    assert form.arguments(form.initial_state()) == {}


@settings(deadline=None)  # a busy CI machine must not turn slowness into a failure
@given(
    level=st.sampled_from([1, 2, 3]),
    count=st.integers(min_value=1, max_value=10),
    name=st.text(max_size=40),
    scale=st.floats(allow_nan=False, allow_infinity=False),
)
def test_any_valid_values_survive_the_raw_json_round_trip(
    level: int, count: int, name: str, scale: float
) -> None:
    for schema, arguments in (
        (ENUMS, {"level": level}),
        (NESTED, {"name": name, "count": count, "scale": scale}),
    ):
        form = ToolForm(schema)
        state = form.state_from_arguments(parse_raw_json(format_raw_json(arguments)))
        assert form.arguments(state) == arguments


def test_one_json_field_is_checked_on_its_own() -> None:
    form = ToolForm(REFS)
    assert form.field_error("origin", '{"x": 1, "y": 2}') is None
    assert form.field_error("origin", "") is None, "empty is not an error until the call"
    assert form.field_error("origin", '{"x": 1}') == "'y' is a required property"
    assert form.field_error("origin", '{"x": 1,').startswith("Not valid JSON: ")
    assert form.field_error("tree", '{"value": 1, "children": [{"value": "two"}]}') == (
        "children/0/value: 'two' is not of type 'integer'"
    )
    assert form.field_error("count", "-1") == "-1 is less than the minimum of 0"
    assert form.field_error("no-such-field", "{}") is None


def test_values_a_widget_cannot_show_keep_the_json_editor_open() -> None:
    form = ToolForm(NESTED)
    with pytest.raises(FormValueError) as caught:
        form.state_from_arguments({"name": 7, "count": "3", "loud": 1, "scale": True})
    assert caught.value.field_errors == {
        "name": "7 is not text.",
        "count": '"3" is not a whole number.',
        "scale": "true is not a number.",
        "loud": "1 is not true or false.",
    }
    assert form.state_from_arguments({"name": "a", "count": 4.0}).values["count"] == 4
    enums = ToolForm(ENUMS)
    with pytest.raises(FormValueError, match="level: true is not one of the choices"):
        enums.state_from_arguments({"level": True})  # True == 1, but it is not the choice 1
    with pytest.raises(FormValueError, match='tags: \\["a", "z"\\] is not a list of the choices'):
        enums.state_from_arguments({"tags": ["a", "z"]})


def test_a_default_that_breaks_its_own_schema_is_left_out() -> None:
    form = ToolForm({"type": "object", "properties": {"n": {"type": "integer", "default": "many"}}})
    assert form.initial_state().values == {"n": None}
