"""One person's budget guard, and an `LlmClient` that asks it before every request it sends."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from sqlalchemy import Engine

from yiem._tool_runner import takes_keyword
from yiem.budgets._estimate import request_cost
from yiem.budgets._ledger import BudgetCheck, Ledger
from yiem.budgets._limits import Budget
from yiem.llm import GenerationOptions, LlmClient, StreamDone, StreamEvent
from yiem.types import (
    AbortSignal,
    AgentContext,
    AgentMessage,
    AnyAssistantMessage,
    AssistantMessage,
    LlmModel,
)


class BudgetGuard:
    """The limits as they apply to one person (`owner_id`) on one store."""

    def __init__(self, engine: Engine, owner_id: str, configured: Sequence[Budget] | None = None) -> None:
        self.ledger = Ledger(engine, configured)
        self.owner_id = owner_id

    def check(self, provider: str, estimated_cost: float | None) -> BudgetCheck:
        """ok / warn / refuse for a request to `provider` costing up to `estimated_cost`; reserves nothing."""
        return self.ledger.check(self.owner_id, provider, estimated_cost)

    def check_request(
        self, model: LlmModel, system_prompt: str, messages: Sequence[AgentMessage], max_tokens: int | None
    ) -> BudgetCheck:
        """`check` for a request sending `messages` to `model` (cost estimated as `request_cost` does)."""
        return self.check(model.provider, request_cost(model, system_prompt, messages, max_tokens))

    def wrap(
        self, llm: LlmClient, on_refuse: Callable[[BudgetCheck, AbortSignal | None], None] | None = None
    ) -> BudgetedLlm:
        """`llm` with every request checked and reserved first; see `BudgetedLlm`."""
        return BudgetedLlm(llm, self, on_refuse)


def _usage_ms(message: AnyAssistantMessage) -> int:
    # The usage row's created_ms (yiem.store.usage_row): how a settled reservation finds its row.
    return int(message.timestamp.timestamp() * 1000)


class BudgetedLlm:
    """An `LlmClient` that reserves each request's estimated cost before sending it.

    A request the limits refuse is never sent: its reply is an error in words (and `on_refuse`, when
    given, is told, e.g. to stop an experiment). The reservation is settled to the reply's real cost.
    """

    def __init__(
        self,
        inner: LlmClient,
        guard: BudgetGuard,
        on_refuse: Callable[[BudgetCheck, AbortSignal | None], None] | None = None,
    ) -> None:
        self.inner = inner
        self.guard = guard
        self.on_refuse = on_refuse
        self.last_check: BudgetCheck | None = None
        self._options = takes_keyword(inner.stream, "options")

    def stream(
        self,
        model: LlmModel,
        context: AgentContext,
        signal: AbortSignal | None = None,
        *,
        options: GenerationOptions | None = None,
    ) -> Iterator[StreamEvent]:
        max_tokens = options.max_tokens if options is not None else None
        estimate = request_cost(model, context.system_prompt, context.messages, max_tokens)
        checked = self.guard.ledger.reserve(self.guard.owner_id, model.provider, model.id, estimate)
        self.last_check = checked
        if not checked.allowed:
            if self.on_refuse is not None:
                self.on_refuse(checked, signal)
            refused = AssistantMessage(
                api=model.api,
                provider=model.provider,
                model=model.id,
                stop_reason="error",
                error_message=checked.message,
            )
            return iter([StreamDone(message=refused)])
        extra = {"options": options} if self._options else {}
        events = self.inner.stream(model, context, signal, **extra)
        return self._relay(events, checked.reservation_id, model)

    def _relay(
        self, events: Iterator[StreamEvent], reservation: str | None, model: LlmModel
    ) -> Iterator[StreamEvent]:
        settled = False
        try:
            for event in events:
                if isinstance(event, StreamDone) and reservation is not None:
                    final = event.message
                    cost = model.cost_of(final.usage)
                    self.guard.ledger.settle(
                        reservation, cost.total if cost else 0.0, _usage_ms(final), final.model or model.id
                    )
                    settled = True
                yield event
        finally:
            close = getattr(events, "close", None)
            if close is not None:
                close()
            if reservation is not None and not settled:
                # Stopped mid-stream: the reply saved for it (estimated tokens) counts from now on.
                self.guard.ledger.release(reservation)
