"""JSON Schemas from MCP servers, made safe to use: unusable ones refused in words, patterns in linear time.

A server's schema is untrusted input, checked both by the Tools page's form and by the agent loop
before it runs a tool. A malformed one (`properties` as a list, `required` as a number) makes
`jsonschema` raise mid-validation, a long `$ref` chain or deep nesting exhausts the recursion
limit, and a pattern such as `^(a+)+$` makes Python's backtracking `re` run for ages on "aaa…a!".
Schemas are checked against their metaschema and their `$ref` chains bounded before use, and
`pattern`, `patternProperties` and `additionalProperties` match with RE2, which runs in linear
time. A pattern RE2 cannot run (look-around, back-references) is left for the server to check.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any

import jsonschema
import re2
from jsonschema.exceptions import ValidationError, best_match
from jsonschema.protocols import Validator
from referencing import Registry
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

from yiem.errors import YiemError

# Real tool schemas follow a handful of `$ref`s; a chain this long is a mistake or an attack.
MAX_REF_STEPS = 64
SCHEMA_URI = "urn:yiem:schema"  # where a schema's own `#/...` references are looked up


class UnusableSchemaError(YiemError, ValueError):
    """A schema that cannot be used to draw a form or check values; the message says why, in words."""


class InvalidSchemaError(UnusableSchemaError):
    """The schema breaks its metaschema (a server's slip rather than a hostile shape)."""


def validator_class(schema: Mapping[str, Any]) -> type[Validator]:
    """The schema's draft (`$schema`, else 2020-12), matching patterns with RE2."""
    declared = schema.get("$schema")
    base: type[Validator] = jsonschema.Draft202012Validator
    if isinstance(declared, str):
        base = jsonschema.validators.validator_for(dict(schema), default=base)
    return _linear_time(base)


def schema_registry(schema: Mapping[str, Any]) -> Registry[Any]:
    """A registry holding the schema at `SCHEMA_URI` (read as 2020-12 whatever its `$schema` says)."""
    registry: Registry[Any] = Registry().with_resource(SCHEMA_URI, DRAFT202012.create_resource(dict(schema)))
    return registry


def check_usable(schema: Mapping[str, Any], registry: Registry[Any]) -> None:
    """Raise `UnusableSchemaError` unless the schema is valid, not too deep, and its `$ref`s short."""
    cls = validator_class(schema)
    meta = jsonschema.validators.validator_for(cls.META_SCHEMA, default=cls)(cls.META_SCHEMA)
    try:
        # No format checker: an ECMA-262 pattern Python cannot compile is still a valid schema.
        problem = best_match(meta.iter_errors(dict(schema)))
    except RecursionError:
        raise UnusableSchemaError("it is nested too deeply to draw or check") from None
    if problem is not None:
        where = "/".join(str(part) for part in problem.absolute_path)
        raise InvalidSchemaError(
            f"it is not valid JSON Schema: {where + ': ' if where else ''}{problem.message}"
        )
    _check_ref_chains(schema, registry)


def _check_ref_chains(schema: Mapping[str, Any], registry: Registry[Any]) -> None:
    resolver = registry.resolver(base_uri=SCHEMA_URI)
    steps_to_end: dict[str, int] = {}  # each reference is followed once, however often it is used
    for start in _refs(schema):
        chain: list[str] = []
        ref: Any = start
        # A loop ends the walk here; the form names it when it meets it.
        while isinstance(ref, str) and ref not in steps_to_end and ref not in chain:
            chain.append(ref)
            if len(chain) > MAX_REF_STEPS:
                break
            try:
                target = resolver.lookup(ref).contents
            except Unresolvable:
                break
            ref = target.get("$ref") if isinstance(target, Mapping) else None
        tail = steps_to_end.get(ref, 0) if isinstance(ref, str) else 0
        for index, name in enumerate(reversed(chain), start=1):
            steps_to_end[name] = tail + index
        if steps_to_end.get(start, 0) > MAX_REF_STEPS:
            raise UnusableSchemaError(f"its reference {start!r} goes through more than {MAX_REF_STEPS} steps")


def _refs(schema: Any) -> Iterator[str]:
    """Every `$ref` string in the schema, found without recursion."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            ref = node.get("$ref")
            if isinstance(ref, str):
                yield ref
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def usable_validator(schema: Mapping[str, Any], registry: Registry[Any] | None = None) -> Validator:
    """A validator matching patterns with RE2, for a schema `check_usable` accepts (else it raises)."""
    registry = registry if registry is not None else schema_registry(schema)
    check_usable(schema, registry)
    return validator_class(schema)(dict(schema), registry=registry)


def schema_errors(validator: Validator, instance: Any) -> list[ValidationError]:
    """The validation errors; `UnusableSchemaError` in words when the schema is too deep or broken."""
    try:
        return list(validator.iter_errors(instance))
    except RecursionError:
        raise UnusableSchemaError("it is nested too deeply to check") from None
    except Unresolvable as error:  # jsonschema wraps an unresolved `$ref` as Unresolvable
        raise UnusableSchemaError(f"its reference {getattr(error, 'ref', '')!r} does not resolve") from None


def iter_errors(validator: Validator, instance: Any) -> list[ValidationError]:
    """The validation errors; none when the schema is too deep or broken to check (the server will)."""
    try:
        return schema_errors(validator, instance)
    except UnusableSchemaError:
        return []


_NO_LOGS = re2.Options()
_NO_LOGS.log_errors = False  # a pattern RE2 cannot run is expected, not worth a line on stderr


@functools.lru_cache(maxsize=512)
def _compiled(pattern: str) -> Any:
    """The pattern for RE2, or None when RE2 cannot run it."""
    try:
        return re2.compile(pattern, _NO_LOGS)
    except re2.error:
        return None


def _matches(pattern: str, text: str) -> bool | None:
    """Whether `pattern` finds a match in `text`; None when RE2 cannot run the pattern."""
    compiled = _compiled(pattern)
    return None if compiled is None else bool(compiled.search(text))


def _pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    is_text = isinstance(pattern, str) and validator.is_type(instance, "string")
    if is_text and _matches(pattern, instance) is False:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object") or not isinstance(patterns, Mapping):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _matches(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: Any, allowed: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    # A key a pattern RE2 cannot run might have matched it: it is not counted as extra.
    extras = sorted(
        (
            key
            for key in instance
            if key not in properties and not any(_matches(p, key) is not False for p in patterns)
        ),
        key=str,
    )
    if validator.is_type(allowed, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], allowed, path=extra)
    elif allowed is False and extras:
        joined = ", ".join(repr(extra) for extra in extras)
        if patterns:
            verb = "does" if len(extras) == 1 else "do"
            regexes = ", ".join(repr(pattern) for pattern in sorted(patterns))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {regexes}")
        else:
            verb = "was" if len(extras) == 1 else "were"
            yield ValidationError(f"Additional properties are not allowed ({joined} {verb} unexpected)")


@functools.cache
def _linear_time(base: type[Validator]) -> type[Validator]:
    # Keyword functions take jsonschema's concrete validator (it has `descend`), so they are typed Any.
    keywords = {
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
    }
    extended: type[Validator] = jsonschema.validators.extend(base, keywords)  # type: ignore[no-untyped-call]
    return extended
