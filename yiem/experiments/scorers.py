"""Scorers: each gives an outcome a score in [0, 1], pass or fail at a threshold, and a one-line reason.

`from yiem.experiments import scorers`, then `scorers.contains("Paris")`, `scorers.regex(r"\\d+")`,
`scorers.json_schema({...})`, `scorers.called_tool("get_time", {"timezone": "UTC"})`,
`scorers.rubric("Is it polite?", judge=Variant(...))`. Scorers are pydantic models, so a run stores
them and a Ray worker receives them as data.
"""

from __future__ import annotations

import json
import math
import re
from typing import Annotated, Any, Literal, Self

import jsonschema
import re2
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from yiem._unicode import replace_lone_surrogates
from yiem.amounts import dollars, duration
from yiem.errors import json_error_words
from yiem.experiments._code_scorer import CodeScorerError, run_code_scorer
from yiem.experiments._dataset import DatasetItem
from yiem.experiments._outcome import ItemOutcome, Score
from yiem.experiments._rubric import Judge, RubricVerdict
from yiem.experiments._scorer_base import (
    BrokenScorerError,
    ScorerError,
    ScorerSpecError,
    _matches,
    _Scorer,
    _short,
)
from yiem.experiments._trajectory import ExpectedCall, ForbiddenTools, MaxTurns, ToolSequence
from yiem.experiments._variant import Variant

__all__ = [
    "AnyScorer",
    "BrokenScorerError",
    "CalledTool",
    "Code",
    "CodeScorerError",
    "Contains",
    "CostLimit",
    "Exact",
    "ExpectedCall",
    "ForbiddenTools",
    "JsonSchema",
    "LatencyLimit",
    "MaxTurns",
    "Numeric",
    "Regex",
    "Rubric",
    "ScorerError",
    "ScorerSpecError",
    "ToolSequence",
    "ValidJson",
    "called_tool",
    "code",
    "contains",
    "cost_limit",
    "exact",
    "forbidden_tools",
    "json_schema",
    "latency_limit",
    "max_turns",
    "numeric",
    "regex",
    "rubric",
    "tool_sequence",
    "valid_json",
]


class Exact(_Scorer):
    """1 when the output equals the expected text (whitespace at the ends ignored)."""

    kind: Literal["exact"] = "exact"
    value: str | None = None
    case_sensitive: bool = True

    def grade(self, item: DatasetItem, outcome: ItemOutcome) -> tuple[float, str]:
        expected = self._expected(self.value, item).strip()
        output = outcome.output.strip()
        same = output == expected if self.case_sensitive else output.casefold() == expected.casefold()
        return (1.0, "matches exactly") if same else (0.0, f"expected {_short(expected)!r}")


class Contains(_Scorer):
    """The share of the given texts found in the output (default: the item's expected)."""

    kind: Literal["contains"] = "contains"
    values: list[str] = Field(default_factory=list)
    case_sensitive: bool = False

    def grade(self, item: DatasetItem, outcome: ItemOutcome) -> tuple[float, str]:
        wanted = self.values or [self._expected(None, item)]
        output = outcome.output if self.case_sensitive else outcome.output.casefold()
        missing = [v for v in wanted if (v if self.case_sensitive else v.casefold()) not in output]
        found = len(wanted) - len(missing)
        if not missing:
            return 1.0, f"contains {_short(', '.join(wanted))!r}"
        return found / len(wanted), f"missing {_short(', '.join(missing))!r}"


class Regex(_Scorer):
    """1 when the pattern matches somewhere in the output; RE2 syntax, linear time in the output."""

    kind: Literal["regex"] = "regex"
    pattern: str
    _compiled: Any = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _compile(self) -> Regex:
        try:
            self._compiled = re2.compile(self.pattern)
        except re2.error as error:
            raise ScorerSpecError(
                f"the pattern {self.pattern!r} is not a valid RE2 expression: {error}"
            ) from None
        return self

    def grade(self, item: DatasetItem, outcome: ItemOutcome) -> tuple[float, str]:
        # RE2 works on UTF-8, which a lone surrogate (a model's JSON "\ud800") cannot be encoded in.
        match = self._compiled.search(replace_lone_surrogates(outcome.output))
        if match is None:
            return 0.0, f"no match for /{_short(self.pattern)}/"
        return 1.0, f"matched {_short(match.group(0))!r}"


_FENCE = re.compile(r"^\s*```[\w-]*\s*\n(.*?)\n\s*```\s*$", re.DOTALL)


def _parse_json(output: str) -> Any:
    fenced = _FENCE.match(output)
    text = fenced.group(1) if fenced else output
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ScorerError(f"not valid JSON: {json_error_words(error)}") from None


class ValidJson(_Scorer):
    """1 when the output (or its one ``` fenced block) is valid JSON."""

    kind: Literal["valid_json"] = "valid_json"

    def grade(self, item: DatasetItem, outcome: ItemOutcome) -> tuple[float, str]:
        value = _parse_json(outcome.output)
        return 1.0, f"valid JSON ({type(value).__name__})"


class JsonSchema(_Scorer):
    """1 when the output is JSON that the schema (any draft `jsonschema` knows) accepts; with no schema
    of its own, each variant's response schema (what that variant asked the model for)."""

    kind: Literal["json_schema"] = "json_schema"
    json_schema: dict[str, Any] | None = Field(default=None, alias="schema")
    _validator: Any = PrivateAttr(default=None)

    model_config = ConfigDict(populate_by_name=True, arbitrary_types_allowed=True)

    @model_validator(mode="after")
    def _check_schema(self) -> JsonSchema:
        if self.json_schema is None:
            return self
        cls = jsonschema.validators.validator_for(self.json_schema)
        try:
            cls.check_schema(self.json_schema)
        except jsonschema.SchemaError as error:
            raise ScorerSpecError(f"the JSON Schema is not valid: {error.message}") from None
        self._validator = cls(self.json_schema)
        return self

    def for_variant(self, variant: Variant) -> Self:
        if self.json_schema is not None or variant.response_schema is None:
            return self
        return type(self)(name=self.name, threshold=self.threshold, schema=variant.response_schema)

    def grade(self, item: DatasetItem, outcome: ItemOutcome) -> tuple[float, str]:
        if self._validator is None:
            raise ScorerError(
                f"{self.name}: no JSON Schema to check against: give the scorer one, or the variant a "
                "response schema"
            )
        value = _parse_json(outcome.output)
        error = jsonschema.exceptions.best_match(self._validator.iter_errors(value))
        if error is None:
            return 1.0, "matches the schema"
        where = "/".join(str(part) for part in error.absolute_path) or "the top level"
        return 0.0, f"at {where}: {_short(error.message, 80)}"


_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?")


class Numeric(_Scorer):
    """1 when the last number in the output is within `tolerance` of the expected number."""

    kind: Literal["numeric"] = "numeric"
    value: float | None = None
    tolerance: float = Field(default=0.0, ge=0.0)
    relative: bool = False

    def grade(self, item: DatasetItem, outcome: ItemOutcome) -> tuple[float, str]:
        if self.value is not None:
            expected = self.value
        else:
            try:
                expected = float(self._expected(None, item).replace(",", ""))
            except ValueError:
                raise ScorerError(
                    f"{self.name}: the expected value {item.expected!r} is not a number"
                ) from None
        numbers = _NUMBER.findall(outcome.output)
        if not numbers:
            return 0.0, "no number in the output"
        got = float(numbers[-1].replace(",", ""))
        allowed = self.tolerance * abs(expected) if self.relative else self.tolerance
        if math.isclose(got, expected, rel_tol=0.0, abs_tol=allowed + 1e-12 * max(1.0, abs(expected))):
            return 1.0, f"{got:g} is within {allowed:g} of {expected:g}"
        return 0.0, f"{got:g} is {abs(got - expected):g} away from {expected:g} (allowed {allowed:g})"


class CalledTool(_Scorer):
    """1 when the model called `tool`, with arguments containing `arguments` (a subset) if given."""

    kind: Literal["called_tool"] = "called_tool"
    tool: str
    arguments: dict[str, Any] | None = None

    def grade(self, item: DatasetItem, outcome: ItemOutcome) -> tuple[float, str]:
        calls = [call for call in outcome.tool_calls if call.name == self.tool]
        if not calls:
            return 0.0, f"never called {self.tool}"
        if self.arguments is None:
            return 1.0, f"called {self.tool} {len(calls)}×"
        if any(_matches(self.arguments, call.arguments) for call in calls):
            return 1.0, f"called {self.tool} with {_short(json.dumps(self.arguments))}"
        return 0.0, f"called {self.tool}, but with {_short(json.dumps(calls[-1].arguments))}"


class CostLimit(_Scorer):
    """1 when the item cost at most `max_usd`; an unknown price fails (it is not known to be under)."""

    kind: Literal["cost_limit"] = "cost_limit"
    max_usd: float = Field(ge=0.0)

    def grade(self, item: DatasetItem, outcome: ItemOutcome) -> tuple[float, str]:
        if outcome.cost is None:
            return 0.0, "price unknown"
        if outcome.cost <= self.max_usd:
            return 1.0, f"{dollars(outcome.cost)} ≤ {dollars(self.max_usd)}"
        return 0.0, f"{dollars(outcome.cost)} > {dollars(self.max_usd)}"


class LatencyLimit(_Scorer):
    """1 when the whole agent run took at most `max_ms` milliseconds."""

    kind: Literal["latency_limit"] = "latency_limit"
    max_ms: float = Field(gt=0.0)

    def grade(self, item: DatasetItem, outcome: ItemOutcome) -> tuple[float, str]:
        took = outcome.latency_ms
        sign = "≤" if took <= self.max_ms else ">"
        return (1.0 if took <= self.max_ms else 0.0), f"{duration(took)} {sign} {duration(self.max_ms)}"


class Code(_Scorer):
    """A Python function `fn(output, expected, item)` in a file (a relative path in a spec file is from
    the spec's folder), run in a subprocess with limits; when it breaks, that is the cell's error."""

    kind: Literal["code"] = "code"
    path: str
    function: str = "score"
    timeout_s: float = Field(default=10.0, gt=0.0, le=600.0)
    memory_mb: int = Field(default=512, ge=64, le=16384)
    threshold: float = Field(default=0.5, ge=0.0, le=1.0)

    def grade(self, item: DatasetItem, outcome: ItemOutcome) -> tuple[float, str]:
        payload = {"output": outcome.output, "expected": item.expected, "item": item.model_dump(mode="json")}
        return run_code_scorer(
            self.path, self.function, payload, timeout_s=self.timeout_s, memory_mb=self.memory_mb
        )


class Rubric(_Scorer):
    """A judge model grades the output against the rubric; its usage is counted apart."""

    kind: Literal["rubric"] = "rubric"
    rubric: str
    judge: Judge
    threshold: float = Field(default=0.5, ge=0.0, le=1.0)

    def score(self, item: DatasetItem, outcome: ItemOutcome) -> Score:
        verdict: RubricVerdict = self.judge.grade(self.rubric, item, outcome.output)
        value = min(1.0, max(0.0, verdict.score))
        return Score(
            scorer=self.name,
            score=value,
            passed=verdict.ok and value >= self.threshold,
            reason=verdict.reason,
            judge_usage=verdict.usage,
            judge_cost=verdict.cost,
            judge_model=verdict.model,
            judge_ms=verdict.at_ms,
        )


AnyScorer = Annotated[
    Exact
    | Contains
    | Regex
    | ValidJson
    | JsonSchema
    | Numeric
    | CalledTool
    | CostLimit
    | LatencyLimit
    | Rubric
    | Code
    | ToolSequence
    | MaxTurns
    | ForbiddenTools,
    Field(discriminator="kind"),
]
"""Any scorer, as stored with a run (the `kind` field tells which)."""


def _build(cls: type[BaseModel], **fields: Any) -> Any:
    try:
        return cls(**{key: value for key, value in fields.items() if value is not None})
    except ValueError as error:  # pydantic's ValidationError is a ValueError
        raise ScorerError(f"{cls.__name__} scorer: {error}") from None


def exact(value: str | None = None, *, case_sensitive: bool = True, name: str = "") -> Exact:
    """Output equals `value` (default: the item's expected)."""
    result: Exact = _build(Exact, value=value, case_sensitive=case_sensitive, name=name)
    return result


def contains(*values: str, case_sensitive: bool = False, threshold: float = 1.0, name: str = "") -> Contains:
    """Output contains each of `values` (default: the item's expected); score = share found."""
    result: Contains = _build(
        Contains, values=list(values), case_sensitive=case_sensitive, threshold=threshold, name=name
    )
    return result


def regex(pattern: str, *, name: str = "") -> Regex:
    """Output matches the RE2 `pattern` somewhere."""
    result: Regex = _build(Regex, pattern=pattern, name=name)
    return result


def valid_json(*, name: str = "") -> ValidJson:
    """Output is valid JSON."""
    result: ValidJson = _build(ValidJson, name=name)
    return result


def json_schema(schema: dict[str, Any] | None = None, *, name: str = "") -> JsonSchema:
    """Output is JSON accepted by `schema` (default: each variant's response schema)."""
    result: JsonSchema = _build(JsonSchema, schema=schema, name=name)
    return result


def numeric(
    value: float | None = None, *, tolerance: float = 0.0, relative: bool = False, name: str = ""
) -> Numeric:
    """The output's last number is within `tolerance` (absolute, or a fraction if `relative`)."""
    result: Numeric = _build(Numeric, value=value, tolerance=tolerance, relative=relative, name=name)
    return result


def called_tool(tool: str, arguments: dict[str, Any] | None = None, *, name: str = "") -> CalledTool:
    """The model called `tool`, with arguments containing `arguments` if given."""
    result: CalledTool = _build(CalledTool, tool=tool, arguments=arguments, name=name)
    return result


def cost_limit(max_usd: float, *, name: str = "") -> CostLimit:
    """The item cost at most `max_usd` dollars."""
    result: CostLimit = _build(CostLimit, max_usd=max_usd, name=name)
    return result


def latency_limit(max_ms: float, *, name: str = "") -> LatencyLimit:
    """The item's agent run took at most `max_ms` milliseconds."""
    result: LatencyLimit = _build(LatencyLimit, max_ms=max_ms, name=name)
    return result


def rubric(text: str, judge: Any, *, threshold: float = 0.5, name: str = "") -> Rubric:
    """A judge (a `Variant`, or any `Judge`) grades the output against `text`."""
    if not isinstance(judge, Judge):
        judge = Judge(variant=judge)
    result: Rubric = _build(Rubric, rubric=text, judge=judge, threshold=threshold, name=name)
    return result


def code(
    path: str, function: str = "score", *, timeout_s: float = 10.0, memory_mb: int = 512, name: str = ""
) -> Code:
    """Score with `function(output, expected, item)` from a Python file, in a subprocess."""
    result: Code = _build(
        Code, path=path, function=function, timeout_s=timeout_s, memory_mb=memory_mb, name=name
    )
    return result


def tool_sequence(
    *calls: str | tuple[str, dict[str, Any]] | tuple[str, dict[str, Any], str] | ExpectedCall,
    order: str = "in_order",
    threshold: float = 1.0,
    name: str = "",
) -> ToolSequence:
    """The agent called these tools (a name, `(name, arguments)` or `(name, arguments, match)`) as
    `order` says: "exact", "in_order" or "any_order"; match is "subset" (default), "exact" or "schema"."""
    expected = []
    for call in calls:
        if isinstance(call, ExpectedCall):
            expected.append(call)
        elif isinstance(call, str):
            expected.append(_build(ExpectedCall, tool=call))
        else:
            fields = dict(zip(("tool", "arguments", "match"), call, strict=False))
            expected.append(_build(ExpectedCall, **fields))
    result: ToolSequence = _build(ToolSequence, calls=expected, order=order, threshold=threshold, name=name)
    return result


def max_turns(limit: int, *, name: str = "") -> MaxTurns:
    """The agent took at most `limit` model turns."""
    result: MaxTurns = _build(MaxTurns, max_turns=limit, name=name)
    return result


def forbidden_tools(*tools: str, name: str = "") -> ForbiddenTools:
    """The agent called none of `tools`, nor any tool the item forbids."""
    result: ForbiddenTools = _build(ForbiddenTools, tools=list(tools), name=name)
    return result
