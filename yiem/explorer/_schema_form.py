"""A form described by a tool's JSON Schema: fields to draw, and the arguments the filled form means.

The Tools page draws one widget per field; this module decides which widget, turns what the
widgets hold back into `tools/call` arguments, and keeps a raw-JSON view in step with the form.
It never imports Streamlit.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from jsonschema.exceptions import ValidationError
from pydantic import BaseModel, ConfigDict, Field
from referencing import Registry
from referencing.exceptions import Unresolvable

from yiem.errors import YiemError, json_error_words
from yiem.json_schema import SCHEMA_URI, UnusableSchemaError, iter_errors, schema_registry, usable_validator

# Strings this long or with a format read better on one line than in a text area.
_SHORT_STRING = 100


class FieldKind(StrEnum):
    """Which widget draws a field."""

    TEXT = "text"
    TEXTAREA = "textarea"
    SELECT = "select"
    MULTISELECT = "multiselect"
    NUMBER = "number"
    INTEGER = "integer"
    BOOLEAN = "boolean"
    JSON = "json"


class FormValueError(YiemError, ValueError):
    """The filled form does not make valid arguments; `field_errors` maps each field to what is wrong."""

    def __init__(self, field_errors: Mapping[str, str]) -> None:
        self.field_errors = dict(field_errors)
        summary = "; ".join(f"{name}: {error}" if name else error for name, error in field_errors.items())
        super().__init__(summary or "The arguments are not valid.")


class FieldValueError(YiemError, ValueError):
    """One widget value that is not a valid argument, in words; FormValueError gathers them per field."""


class RawJsonError(YiemError, ValueError):
    """Text in the raw-JSON editor that is not a JSON object."""


class FormField(BaseModel):
    """One top-level argument of a tool, resolved, with what the widget needs to draw it."""

    model_config = ConfigDict(frozen=True)

    name: str
    kind: FieldKind
    label: str
    description: str = ""
    required: bool = False
    nullable: bool = False
    has_default: bool = False
    default: Any = None
    options: list[Any] = Field(default_factory=list)
    minimum: float | None = None
    maximum: float | None = None
    field_schema: dict[str, Any] = Field(default_factory=dict)


class FormState(BaseModel):
    """What the widgets hold: a value per field, the fields set to null, keys without a field."""

    values: dict[str, Any] = Field(default_factory=dict)
    nulls: set[str] = Field(default_factory=set)
    extra: dict[str, Any] = Field(default_factory=dict)


class ToolForm:
    """The form for one input schema: its fields, and conversions between widget values and arguments."""

    def __init__(self, input_schema: Mapping[str, Any] | None) -> None:
        """Raises `UnusableSchemaError` in words for a schema the form cannot draw (show raw JSON then)."""
        self.schema: dict[str, Any] = dict(input_schema or {"type": "object"})
        self._registry: Registry[Any] = schema_registry(self.schema)
        self._resolver = self._registry.resolver(base_uri=SCHEMA_URI)
        self._validator = usable_validator(self.schema, self._registry)
        try:
            root = self._resolve(self.schema)
            if root.get("type", "object") != "object" and "properties" not in root:
                raise UnusableSchemaError(
                    f"The input schema must describe an object, not {root.get('type')!r}."
                )
            required = set(root.get("required", []))
            self.fields: list[FormField] = [
                self._field(name, prop, name in required) for name, prop in root.get("properties", {}).items()
            ]
        except RecursionError:  # `$ref` chains are bounded, but `allOf` can still nest without end
            raise UnusableSchemaError("it is nested too deeply to draw") from None
        self.allows_extra = root.get("additionalProperties", True) is not False

    # --- building -----------------------------------------------------------------------------

    def _resolve(self, schema: Mapping[str, Any], seen: frozenset[str] = frozenset()) -> dict[str, Any]:
        """Follow `$ref` (local `$defs`/`definitions`) and fold single-item `allOf`, keeping sibling keys."""
        result = dict(schema)
        ref = result.pop("$ref", None)
        if isinstance(ref, str):
            if ref in seen:
                raise UnusableSchemaError(f"The schema refers to itself through {ref!r}.")
            try:
                target = self._resolver.lookup(ref).contents
            except Unresolvable as error:
                raise UnusableSchemaError(f"The schema's reference {ref!r} does not resolve.") from error
            result = {**self._resolve(target, seen | {ref}), **result}
        all_of = result.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict):
            del result["allOf"]
            result = {**self._resolve(all_of[0], seen), **result}
        return result

    def _split_null(self, schema: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """The non-null part of a schema and whether null is allowed (`type: [X, "null"]` or `anyOf`)."""
        kind = schema.get("type")
        if isinstance(kind, list) and "null" in kind:
            rest = [item for item in kind if item != "null"]
            inner = {**schema, "type": rest[0] if len(rest) == 1 else rest}
            return inner, True
        for key in ("anyOf", "oneOf"):
            options = schema.get(key)
            if not isinstance(options, list):
                continue
            resolved = [self._resolve(option) for option in options]
            non_null = [option for option in resolved if option.get("type") != "null"]
            if len(non_null) < len(resolved):
                outer = {k: v for k, v in schema.items() if k != key}
                if len(non_null) == 1:
                    return {**non_null[0], **outer}, True
                return {**outer, key: non_null}, True
        if schema.get("nullable") is True:  # OpenAPI 3.0 style, still seen in the wild
            return schema, True
        if "enum" in schema and None in schema["enum"]:
            return {**schema, "enum": [item for item in schema["enum"] if item is not None]}, True
        return schema, False

    def _field(self, name: str, prop: Any, required: bool) -> FormField:
        schema = self._resolve(prop) if isinstance(prop, Mapping) else {}
        inner, nullable = self._split_null(schema)
        kind, options = _kind_of(inner)
        has_default = "default" in schema
        return FormField(
            name=name,
            kind=kind,
            label=str(schema.get("title") or name),
            description=str(schema.get("description") or inner.get("description") or ""),
            required=required,
            nullable=nullable,
            has_default=has_default,
            default=schema.get("default"),
            options=options,
            minimum=_number_or_none(inner.get("minimum")),
            maximum=_number_or_none(inner.get("maximum")),
            field_schema=inner,
        )

    # --- widget values <-> arguments ----------------------------------------------------------

    def initial_state(self) -> FormState:
        """Widget values before the user touches anything: defaults filled, the rest empty."""
        state = FormState()
        for field in self.fields:
            if field.has_default and field.default is None and field.nullable:
                state.nulls.add(field.name)
                state.values[field.name] = _empty_value(field)
            else:
                try:
                    default = widget_value(field, field.default) if field.has_default else _empty_value(field)
                except ValueError:  # a default that contradicts its own schema is left out
                    default = _empty_value(field)
                state.values[field.name] = default
        return state

    def arguments(self, state: FormState) -> dict[str, Any]:
        """The arguments the widgets mean, validated against the schema; raises `FormValueError`."""
        errors: dict[str, str] = {}
        arguments: dict[str, Any] = dict(state.extra)
        for field in self.fields:
            if field.name in state.nulls and field.nullable:
                arguments[field.name] = None
                continue
            try:
                value = argument_value(field, state.values.get(field.name))
            except ValueError as error:
                errors[field.name] = str(error)
                continue
            if value is _OMIT:
                if field.required:
                    errors[field.name] = "This field is required."
                continue
            arguments[field.name] = value
        if errors:
            raise FormValueError(errors)
        self.validate(arguments)
        return arguments

    def partial_arguments(self, state: FormState) -> dict[str, Any]:
        """Arguments as far as they convert, with values that do not kept as typed (nothing is lost)."""
        arguments: dict[str, Any] = dict(state.extra)
        for field in self.fields:
            if field.name in state.nulls and field.nullable:
                arguments[field.name] = None
                continue
            raw = state.values.get(field.name)
            try:
                value = argument_value(field, raw)
            except ValueError:
                value = raw
            if value is not _OMIT:
                arguments[field.name] = value
        return arguments

    def field_error(self, name: str, value: Any) -> str | None:
        """What is wrong with one field's widget value on its own (for live checks), or None."""
        field = next((field for field in self.fields if field.name == name), None)
        if field is None:
            return None
        try:
            argument = argument_value(field, value)
        except ValueError as error:
            return str(error)
        if argument is _OMIT:
            return None
        try:
            self.validate({name: argument})
        except FormValueError as error:
            return error.field_errors.get(name)
        return None

    def validate(self, arguments: Mapping[str, Any]) -> None:
        """Check arguments against the whole schema; errors are reported per top-level field."""
        errors: dict[str, str] = {}
        found = iter_errors(self._validator, dict(arguments))
        for error in sorted(found, key=lambda e: [str(part) for part in e.absolute_path]):
            name = str(error.absolute_path[0]) if error.absolute_path else ""
            errors.setdefault(name, _describe(error))
        if errors:
            raise FormValueError(errors)

    def state_from_arguments(self, arguments: Mapping[str, Any]) -> FormState:
        """Widget values that stand for these arguments (the raw-JSON editor's way back to the form).

        Raises `FormValueError` naming each field whose value its widget cannot show, so nothing is lost.
        """
        state = FormState()
        errors: dict[str, str] = {}
        names = {field.name for field in self.fields}
        for field in self.fields:
            if field.name not in arguments:
                state.values[field.name] = _empty_value(field)
            elif arguments[field.name] is None and field.nullable:
                state.nulls.add(field.name)
                state.values[field.name] = _empty_value(field)
            else:
                try:
                    state.values[field.name] = widget_value(field, arguments[field.name])
                except ValueError as error:
                    errors[field.name] = str(error)
        if errors:
            raise FormValueError(errors)
        state.extra = {key: value for key, value in arguments.items() if key not in names}
        return state


# A marker for "leave this argument out", distinct from an explicit null.
_OMIT: Any = object()


def _number_or_none(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _kind_of(schema: Mapping[str, Any]) -> tuple[FieldKind, list[Any]]:
    if "enum" in schema and isinstance(schema["enum"], list) and schema["enum"]:
        return FieldKind.SELECT, list(schema["enum"])
    if "const" in schema:
        return FieldKind.SELECT, [schema["const"]]
    kind = schema.get("type")
    if kind == "string":
        short = schema.get("format") or schema.get("maxLength", _SHORT_STRING + 1) <= _SHORT_STRING
        return (FieldKind.TEXT if short else FieldKind.TEXTAREA), []
    if kind == "integer":
        return FieldKind.INTEGER, []
    if kind == "number":
        return FieldKind.NUMBER, []
    if kind == "boolean":
        return FieldKind.BOOLEAN, []
    if kind == "array":
        items = schema.get("items")
        if isinstance(items, Mapping) and isinstance(items.get("enum"), list) and schema.get("uniqueItems"):
            return FieldKind.MULTISELECT, list(items["enum"])
    # Objects, arrays, unions and schemas with no type are edited as JSON and checked by the schema.
    return FieldKind.JSON, []


def _empty_value(field: FormField) -> Any:
    if field.kind in (FieldKind.TEXT, FieldKind.TEXTAREA, FieldKind.JSON):
        return ""
    if field.kind == FieldKind.MULTISELECT:
        return []
    return None


def widget_value(field: FormField, value: Any) -> Any:
    """What the field's widget holds to show `value`; `ValueError` in words when the widget cannot."""
    kind = field.kind
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    if kind == FieldKind.JSON:
        return json.dumps(value, indent=2, ensure_ascii=False)
    if kind in (FieldKind.TEXT, FieldKind.TEXTAREA) and isinstance(value, str):
        return value
    if kind == FieldKind.INTEGER and is_number and float(value).is_integer():
        return int(value)
    if kind == FieldKind.NUMBER and is_number:
        return float(value)
    if kind == FieldKind.BOOLEAN and isinstance(value, bool):
        return value
    if kind == FieldKind.SELECT and _is_option(value, field.options):
        return value
    if (
        kind == FieldKind.MULTISELECT
        and isinstance(value, list)
        and all(_is_option(item, field.options) for item in value)
    ):
        return list(value)
    expected = {
        FieldKind.TEXT: "text",
        FieldKind.TEXTAREA: "text",
        FieldKind.INTEGER: "a whole number",
        FieldKind.NUMBER: "a number",
        FieldKind.BOOLEAN: "true or false",
        FieldKind.SELECT: "one of the choices",
        FieldKind.MULTISELECT: "a list of the choices",
    }[kind]
    raise FieldValueError(f"{json.dumps(value, ensure_ascii=False)} is not {expected}.")


def _is_option(value: Any, options: list[Any]) -> bool:
    # `True == 1` in Python; a choice must match in type as well as value.
    return any(value == option and type(value) is type(option) for option in options)


def argument_value(field: FormField, value: Any) -> Any:
    """The argument a widget value means; `_OMIT` for an empty field; `ValueError` in words if it is wrong."""
    if value is None:
        return _OMIT
    if field.kind in (FieldKind.TEXT, FieldKind.TEXTAREA):
        text = str(value)
        return _OMIT if text == "" and not field.required else text
    if field.kind in (FieldKind.NUMBER, FieldKind.INTEGER):
        return _number(field, value)
    if field.kind == FieldKind.BOOLEAN:
        if isinstance(value, bool):
            return value
        raise FieldValueError(f"Expected true or false, got {value!r}.")
    if field.kind == FieldKind.SELECT:
        if not _is_option(value, field.options):
            raise FieldValueError(f"{value!r} is not one of the choices.")
        return value
    if field.kind == FieldKind.MULTISELECT:
        items = list(value)
        return _OMIT if not items and not field.required else items
    text = value if isinstance(value, str) else json.dumps(value)
    if not text.strip():
        return _OMIT
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise FieldValueError(f"Not valid JSON: {json_error_words(error)}.") from error


def _number(field: FormField, value: Any) -> int | float | Any:
    if isinstance(value, bool):
        raise FieldValueError(f"Expected a number, got {value!r}.")
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return _OMIT
        try:
            number: int | float = int(text) if field.kind == FieldKind.INTEGER else float(text)
        except ValueError:
            try:
                number = float(text)
            except ValueError:
                raise FieldValueError(f"“{value}” is not a number.") from None
    elif isinstance(value, int | float):
        number = value
    else:
        raise FieldValueError(f"Expected a number, got {value!r}.")
    if isinstance(number, float) and not math.isfinite(number):
        raise FieldValueError(f"“{value}” is not a finite number.")
    if field.kind == FieldKind.INTEGER and isinstance(number, float):
        if not number.is_integer():
            raise FieldValueError(f"“{value}” is not a whole number.")
        number = int(number)
    return number


def _describe(error: ValidationError) -> str:
    where = "/".join(str(part) for part in list(error.absolute_path)[1:])
    return f"{where}: {error.message}" if where else error.message


def parse_raw_json(text: str) -> dict[str, Any]:
    """The raw-JSON editor's text as an arguments object; `RawJsonError` in words if it is not one."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise RawJsonError(f"Not valid JSON: {json_error_words(error)}.") from error
    if not isinstance(value, dict):
        raise RawJsonError(f"The arguments must be a JSON object ({{...}}), not {type(value).__name__}.")
    return value


def format_raw_json(arguments: Mapping[str, Any]) -> str:
    """Arguments as the raw-JSON editor shows them."""
    return json.dumps(dict(arguments), indent=2, ensure_ascii=False)
