"""The model-graded rubric's judge: any configured model asked for a score, its usage kept apart."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, PrivateAttr

from yiem.events import AgentEndEvent
from yiem.experiments._dataset import DatasetItem
from yiem.experiments._outcome import summarize_messages
from yiem.experiments._variant import Variant
from yiem.llm import LlmClient
from yiem.loop import run_agent_loop
from yiem.types import (
    AbortSignal,
    AgentContext,
    AgentLoopConfig,
    LlmModel,
    LlmUsage,
    TextContent,
    UserMessage,
)

if TYPE_CHECKING:
    from yiem.budgets import BudgetCheck, BudgetGuard

OnRefuse = Callable[["BudgetCheck", AbortSignal | None], None]

JUDGE_SYSTEM_PROMPT = (
    "You grade an answer against a rubric. Reply with only a JSON object: "
    '{"score": <a number from 0 to 1>, "reason": "<one short sentence>"}.'
)

JUDGE_MAX_TOKENS = 256
"""The longest verdict a judge may write when its variant sets no limit."""

_JSON_OBJECT = re.compile(r"\{[^{}]*\}", re.DOTALL)
_SCORE_WORD = re.compile(r"score\W{0,5}(\d+(?:\.\d+)?)(\s*/\s*(\d+))?", re.IGNORECASE)
_FIRST_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?![\w.])")


@dataclass(frozen=True)
class RubricVerdict:
    """The judge's score and reason; `ok` is False when no score could be read from its reply."""

    score: float
    reason: str
    ok: bool
    usage: LlmUsage
    cost: float | None
    model: str = ""
    at_ms: int | None = None


def judge_prompt(rubric: str, item: DatasetItem, output: str) -> str:
    """What the judge is asked: the task, the expected answer if any, the answer and the rubric."""
    parts = [f"Task:\n{item.input}"]
    if item.expected is not None:
        parts.append(f"Expected answer:\n{item.expected}")
    parts += [f"Answer to grade:\n{output}", f"Rubric:\n{rubric}", "Reply with the JSON object only."]
    return "\n\n".join(parts)


def parse_verdict(reply: str) -> tuple[float, str] | None:
    """A score in [0, 1] and a reason from the judge's reply: its JSON, `score: 7/10`, or a lone number."""
    for match in _JSON_OBJECT.finditer(reply):
        try:
            data = json.loads(match.group(0))
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict) and isinstance(data.get("score"), int | float):
            reason = str(data.get("reason") or "").strip() or "no reason given"
            return _unit(float(data["score"])), " ".join(reason.split())[:200]
    found = _SCORE_WORD.search(reply)
    if found:
        value, scale = float(found.group(1)), found.group(3)
        return _unit(value / float(scale) if scale else value), _first_line(reply)
    numbers = _FIRST_NUMBER.findall(reply)
    if len(numbers) == 1:
        return _unit(float(numbers[0])), _first_line(reply)
    return None


def _unit(value: float) -> float:
    # Judges that answer on a 0-10 or 0-100 scale despite the prompt are read on that scale.
    if value > 10:
        value /= 100
    elif value > 1:
        value /= 10
    return min(1.0, max(0.0, value))


def _first_line(reply: str) -> str:
    line = next((line.strip() for line in reply.splitlines() if line.strip()), "")
    return line[:200] or "no reason given"


class Judge(BaseModel):
    """A variant used as the judge; the client is connected once and shared by every grading thread."""

    variant: Variant
    _lock: Any = PrivateAttr(default_factory=threading.Lock)
    _connection: tuple[LlmClient, LlmModel] | None = PrivateAttr(default=None)
    _guard: tuple[BudgetGuard, OnRefuse | None] | None = PrivateAttr(default=None)
    _budgeted: tuple[LlmClient, LlmModel] | None = PrivateAttr(default=None)

    def limit_spending(self, guard: BudgetGuard | None, on_refuse: OnRefuse | None = None) -> None:
        """From now on every verdict asks `guard` first: reserved, or refused in words (None: no limits)."""
        with self._lock:
            self._guard = None if guard is None else (guard, on_refuse)
            self._budgeted = None

    def connection(self) -> tuple[LlmClient, LlmModel]:
        with self._lock:
            if self._connection is None:
                self._connection = self.variant.connect()
            if self._guard is None:
                return self._connection
            if self._budgeted is None:
                llm, model = self._connection
                guard, on_refuse = self._guard
                self._budgeted = (guard.wrap(llm, on_refuse), model)
            return self._budgeted

    def grade(self, rubric: str, item: DatasetItem, output: str) -> RubricVerdict:
        """Ask the judge once; a reply without a readable score fails with what it said."""
        llm, model = self.connection()
        context = AgentContext.model_construct(
            system_prompt=self.variant.system_prompt or JUDGE_SYSTEM_PROMPT,
            messages=[UserMessage(content=[TextContent(text=judge_prompt(rubric, item, output))])],
            tools=None,
        )
        # A verdict is one short JSON object: a judge that rambles is cut off, not paid for at length.
        max_tokens = self.variant.max_tokens or JUDGE_MAX_TOKENS
        config = AgentLoopConfig(max_turns=1, temperature=self.variant.temperature, max_tokens=max_tokens)
        added: list[Any] = []
        error: str | None = None
        for event in run_agent_loop(context, llm, model, config):
            if isinstance(event, AgentEndEvent):
                added, error = event.messages, event.error_message
        reply, usage, cost, _turns = summarize_messages(added)
        # Named and timed as the reply is, so its usage row replaces the reservation made for it.
        last = added[-1] if added else None
        name = f"{model.provider}/{getattr(last, 'model', '') or model.id}"
        at = int(last.timestamp.timestamp() * 1000) if last is not None else None
        if error:
            return RubricVerdict(0.0, f"the judge failed: {error}", False, usage, cost, name, at)
        parsed = parse_verdict(reply)
        if parsed is None:
            said = " ".join(reply.split())[:80]
            return RubricVerdict(0.0, f"the judge gave no score: {said!r}", False, usage, cost, name, at)
        return RubricVerdict(parsed[0], parsed[1], True, usage, cost, name, at)


def limit_judges(
    scorers: Sequence[Any], guard: BudgetGuard | None, on_refuse: OnRefuse | None = None
) -> None:
    """Every rubric judge among `scorers` asks `guard` before each verdict (see `Judge.limit_spending`);
    None lifts a previous run's limits from judges used again."""
    for scorer in scorers:
        judge = getattr(scorer, "judge", None)
        if isinstance(judge, Judge):
            judge.limit_spending(guard, on_refuse)
