"""Tool-argument validation: the spec's required-argument check (SP-023, SP-024) and full JSON Schema.

Problems come back one per line with the argument's path, so a model can read them and correct
its call. Schemas come from MCP servers, so the check goes through `yiem.json_schema`: patterns
match in linear time, and a schema too deep or with too long a `$ref` chain is refused in words.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Union

from yiem.errors import YiemError
from yiem.types import AgentTool, AgentToolCall

if TYPE_CHECKING:  # jsonschema is imported on the first full check, not with `import yiem`
    from jsonschema import ValidationError
    from jsonschema.protocols import Validator

logger = logging.getLogger(__name__)


class ToolArgumentError(YiemError, ValueError):
    """The arguments of a tool call do not fit the tool; `problems` has one line per problem."""

    def __init__(self, message: str, *, tool_name: str | None = None, problems: list[str] | None = None):
        super().__init__(message)
        self.tool_name = tool_name
        self.problems = problems if problems is not None else message.splitlines()


def validate_required_args(args: Mapping[str, Any], input_schema: Mapping[str, Any]) -> str | None:
    """SP-023: None when every required argument is present, else `Missing required arguments: a, b`."""
    required = input_schema.get("required") or []
    missing = [name for name in required if name not in args]
    if not missing:
        return None
    return f"Missing required arguments: {', '.join(str(name) for name in missing)}"


class ToolSchemaError(ToolArgumentError):
    """The tool's own input schema cannot be used to check arguments (too deep, endless `$ref`s)."""


_CACHE_SIZE = 256
# Per schema: its validator, None to check required arguments only, or why it is refused.
_Checked = Union["Validator", None, str]
_validators: OrderedDict[int, tuple[Mapping[str, Any], _Checked]] = OrderedDict()
_validators_lock = threading.Lock()


def _validator(schema: Mapping[str, Any]) -> _Checked:
    # Building a validator checks the schema, which costs far more than validating a call;
    # tools keep the same schema object, so cache by identity (holding the schema keeps its id).
    key = id(schema)
    with _validators_lock:
        cached = _validators.get(key)
        if cached is not None and cached[0] is schema:
            _validators.move_to_end(key)
            return cached[1]
    from yiem.json_schema import InvalidSchemaError, UnusableSchemaError, usable_validator

    checked: _Checked
    try:
        checked = usable_validator(schema)
    except InvalidSchemaError as error:
        # A server's slip in one keyword must not make its tool unusable: skip the full check.
        logger.warning("tool input schema is not valid JSON Schema, checking required only: %s", error)
        checked = None
    except UnusableSchemaError as error:
        checked = str(error)
    with _validators_lock:
        _validators[key] = (schema, checked)
        if len(_validators) > _CACHE_SIZE:
            _validators.popitem(last=False)
    return checked


def _refusal(reason: object) -> ToolSchemaError:
    return ToolSchemaError(f"The tool's input schema cannot be used to check its arguments: {reason}")


def format_path(path: Iterable[Any]) -> str:
    """`items[0].name` for a JSON path; `arguments` for the root."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "arguments"


def _problem(error: ValidationError) -> str:
    return f"{format_path(error.absolute_path)}: {error.message}"


def schema_problems(args: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    """Every way `args` breaks `schema` (types, enums, nested objects, arrays), one line each.

    Raises `ToolSchemaError` when the schema itself cannot be used to check them.
    """
    checked = _validator(schema)
    if checked is None:
        return []
    if isinstance(checked, str):
        raise _refusal(checked)
    from yiem.json_schema import UnusableSchemaError, schema_errors

    try:
        found = schema_errors(checked, dict(args))
    except UnusableSchemaError as error:
        raise _refusal(error) from None
    errors = sorted(found, key=lambda e: [str(p) for p in e.absolute_path])
    return [_problem(error) for error in errors]


def argument_problems(args: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    """The SP-023 line first (when arguments are missing), then every other JSON Schema problem."""
    problems: list[str] = []
    missing = validate_required_args(args, schema)
    if missing:
        problems.append(missing)
    for error_line in schema_problems(args, schema):
        # The SP-023 line already names the missing top-level arguments.
        if missing and error_line.startswith("arguments: ") and "is a required property" in error_line:
            continue
        problems.append(error_line)
    return problems


def validate_tool_arguments(tool: AgentTool, tool_call: AgentToolCall) -> dict[str, Any]:
    """SP-024: the arguments when they fit the tool, else `ToolArgumentError`.

    A tool's own `validate_required_args` replaces the default check entirely.
    """
    args = tool_call.arguments
    if tool.validate_required_args is not None:
        result = tool.validate_required_args(args)
        if result is not None:
            raise ToolArgumentError(result, tool_name=tool.name)
        return args
    try:
        problems = argument_problems(args, tool.input_schema)
    except ToolSchemaError as error:
        error.tool_name = tool.name
        raise
    if problems:
        raise ToolArgumentError("\n".join(problems), tool_name=tool.name, problems=problems)
    return args
