"""Trajectory scorers: which tools the agent called, in what order, with what arguments, in how many turns.

`ToolSequence` checks the calls in order (exactly, or as a subsequence) or as a set, each call's
arguments matched exactly, as a subset, or by a JSON Schema; `MaxTurns` the number of model turns;
`ForbiddenTools` that no tool the scorer or the item forbids was called.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import jsonschema
from pydantic import BaseModel, Field, PrivateAttr, model_validator

from yiem.experiments._dataset import DatasetItem
from yiem.experiments._outcome import ItemOutcome
from yiem.experiments._scorer_base import ScorerSpecError, _matches, _Scorer, _short
from yiem.types import AgentToolCall


class ExpectedCall(BaseModel):
    """One tool call the agent should make; `arguments` compared as `match` says (None: any arguments)."""

    tool: str
    arguments: dict[str, Any] | None = None
    match: Literal["exact", "subset", "schema"] = "subset"
    _validator: Any = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _check_schema(self) -> ExpectedCall:
        if self.match == "schema":
            if self.arguments is None:
                raise ScorerSpecError(f"the call to {self.tool} matches by schema but gives no schema")
            cls = jsonschema.validators.validator_for(self.arguments)
            try:
                cls.check_schema(self.arguments)
            except jsonschema.SchemaError as error:
                raise ScorerSpecError(
                    f"the argument schema for {self.tool} is not a valid JSON Schema: {error.message}"
                ) from None
            self._validator = cls(self.arguments)
        return self

    def accepts(self, call: AgentToolCall) -> bool:
        """Whether `call` is this call: the same tool, and arguments that match."""
        if call.name != self.tool:
            return False
        if self.arguments is None:
            return True
        if self.match == "exact":
            return call.arguments == self.arguments
        if self.match == "subset":
            return _matches(self.arguments, call.arguments)
        return bool(self._validator.is_valid(call.arguments))

    def words(self) -> str:
        if self.arguments is None:
            return self.tool
        return f"{self.tool}({_short(json.dumps(self.arguments, ensure_ascii=False), 40)})"


class ToolSequence(_Scorer):
    """The share of `calls` the agent made: `order` "exact" (these calls and no others, in this order),
    "in_order" (in this order, other calls allowed between) or "any_order" (each, in any order)."""

    kind: Literal["tool_sequence"] = "tool_sequence"
    calls: list[ExpectedCall] = Field(min_length=1)
    order: Literal["exact", "in_order", "any_order"] = "in_order"

    def grade(self, item: DatasetItem, outcome: ItemOutcome) -> tuple[float, str]:
        made = outcome.tool_calls
        if self.order == "exact":
            matched = sum(1 for want, call in zip(self.calls, made, strict=False) if want.accepts(call))
            share = matched / max(len(self.calls), len(made))
            if share == 1.0:
                return 1.0, f"called exactly {', '.join(c.words() for c in self.calls)}"
            return share, f"expected {self._list()} but the calls were {_made(made)}"
        missing = self._missing_in_order(made) if self.order == "in_order" else self._missing_any_order(made)
        share = (len(self.calls) - len(missing)) / len(self.calls)
        if not missing:
            return 1.0, f"called {self._list()}" + (" in order" if self.order == "in_order" else "")
        return share, f"missing {', '.join(c.words() for c in missing)}; the calls were {_made(made)}"

    def _list(self) -> str:
        return ", ".join(call.words() for call in self.calls)

    def _missing_in_order(self, made: list[AgentToolCall]) -> list[ExpectedCall]:
        # Greedy subsequence: each expected call takes the first matching call after the last one taken.
        position = 0
        missing = []
        for want in self.calls:
            found = next((i for i in range(position, len(made)) if want.accepts(made[i])), None)
            if found is None:
                missing.append(want)
            else:
                position = found + 1
        return missing

    def _missing_any_order(self, made: list[AgentToolCall]) -> list[ExpectedCall]:
        free = list(made)
        missing = []
        for want in self.calls:
            found = next((call for call in free if want.accepts(call)), None)
            if found is None:
                missing.append(want)
            else:
                free.remove(found)
        return missing


def _made(made: list[AgentToolCall]) -> str:
    return ", ".join(call.name for call in made) if made else "none"


class MaxTurns(_Scorer):
    """1 when the agent took at most `max_turns` model turns (each reply, with or without tool calls)."""

    kind: Literal["max_turns"] = "max_turns"
    max_turns: int = Field(ge=1)

    def grade(self, item: DatasetItem, outcome: ItemOutcome) -> tuple[float, str]:
        if outcome.turns <= self.max_turns:
            return 1.0, f"{outcome.turns} turn(s) ≤ {self.max_turns}"
        return 0.0, f"{outcome.turns} turns > {self.max_turns}"


class ForbiddenTools(_Scorer):
    """1 when the agent called none of `tools` nor of the item's `forbidden_tools`."""

    kind: Literal["forbidden_tools"] = "forbidden_tools"
    tools: list[str] = Field(default_factory=list)

    def grade(self, item: DatasetItem, outcome: ItemOutcome) -> tuple[float, str]:
        forbidden = set(self.tools) | set(item.forbidden_tools)
        called = [call.name for call in outcome.tool_calls if call.name in forbidden]
        if called:
            return 0.0, f"called forbidden {', '.join(dict.fromkeys(called))}"
        return 1.0, "no forbidden tool called" if forbidden else "no tool is forbidden"
