"""The fan-out: one prompt to every column, each its own `Agent` in its own thread, all at once."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from time import perf_counter
from typing import Literal

from yiem.agent import Agent
from yiem.budgets import BudgetGuard, request_cost
from yiem.compare._columns import ColumnFigures, CompareError, cheapest_and_fastest, check_columns
from yiem.compare._storage import ComparisonRecord, ComparisonStore
from yiem.events import AgentEndEvent, AgentEvent, MessageEndEvent, MessageUpdateEvent
from yiem.llm import LlmClient
from yiem.model_setup import ModelSettingsError, ModelSetup, calls_tools, connect
from yiem.store import StoreError
from yiem.types import (
    AgentMessage,
    AgentTool,
    AssistantMessage,
    AssistantMessageToolCall,
    ImageContent,
    LlmModel,
    UserMessage,
)

ColumnStatus = Literal["idle", "running", "done", "stopped", "error"]
Connector = Callable[[ModelSetup], tuple[LlmClient, LlmModel]]


def connect_column(spec: ModelSetup) -> tuple[LlmClient, LlmModel]:
    """The column's client and model, built by Chat's own `connect` from the same settings."""
    return connect(spec)


@dataclass
class ColumnState:
    """What a column shows right now: its text so far, its status, its error in words, its figures."""

    spec: ModelSetup
    status: ColumnStatus = "idle"
    text: str = ""
    error: str | None = None
    figures: ColumnFigures = field(default_factory=ColumnFigures)
    agent: Agent | None = None
    turn: list[AgentMessage] = field(default_factory=list)
    """The latest prompt and what followed it, finished messages only (tool calls and results too)."""
    partial: str = ""
    """The text of the reply streaming now, not yet in `turn`."""
    conversation_id: str | None = None
    """The hidden conversation its transcript is saved in (with a store)."""
    history: list[AgentMessage] = field(default_factory=list)
    """A reopened column's earlier messages: its agent continues from them."""

    @property
    def turns(self) -> int:
        """How many prompts its conversation has answered: the latest turn's number, which names its reply."""
        messages = self.agent.state.messages if self.agent is not None else self.history
        return sum(isinstance(message, UserMessage) for message in messages)


class Comparison:
    """Columns that answer the same prompts side by side; follow-ups continue each column's conversation.

    `start` returns at once; `wait` joins the threads; `stop` aborts every column. Read `columns`
    from any thread while it runs. With a `store`, the first prompt saves the comparison
    (`record_id`) and each column's messages and usage are saved as it ends.
    """

    def __init__(
        self,
        specs: Sequence[ModelSetup],
        tools: Mapping[str, AgentTool] | None = None,
        connector: Connector = connect_column,
        budget: BudgetGuard | None = None,
        store: ComparisonStore | None = None,
        blind: bool = False,
    ) -> None:
        check_columns(specs)
        self._budget = budget
        self.columns = [ColumnState(spec=spec) for spec in specs]
        self._tools = dict(tools or {})
        self._connector = connector
        self._store = store
        self.blind = blind
        self.record_id: str | None = None
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._stopped = threading.Event()

    @classmethod
    def reopen(
        cls,
        record: ComparisonRecord,
        store: ComparisonStore,
        tools: Mapping[str, AgentTool] | None = None,
        connector: Connector = connect_column,
    ) -> Comparison:
        """A saved comparison as it was: each column's last turn shown, follow-ups continue it."""
        comparison = cls([c.spec for c in record.columns], tools, connector, store=store, blind=record.blind)
        comparison.record_id = record.id
        for column, saved in zip(comparison.columns, record.columns, strict=True):
            column.conversation_id = saved.conversation_id
            column.history = store.transcript(saved.conversation_id)
            last_prompt = max(
                (i for i, m in enumerate(column.history) if isinstance(m, UserMessage)), default=0
            )
            column.turn = column.history[last_prompt:]
            column.text = "".join(
                m.text for m in column.turn if isinstance(m, AssistantMessage | AssistantMessageToolCall)
            )
        return comparison

    @property
    def running(self) -> bool:
        """Whether any column is still answering."""
        return any(thread.is_alive() for thread in self._threads)

    def start(self, prompt: str, images: Iterable[ImageContent] = ()) -> None:
        """Send `prompt` to every column at once; each column runs in its own thread."""
        if self.running:
            raise CompareError("The columns are still answering; wait for them or press Stop.")
        if not prompt.strip():
            raise CompareError("Type a prompt to send to the columns.")
        shown = list(images)
        if self._budget is not None:
            self._check_budget(UserMessage.from_text(prompt, shown))
        self._save_prompt(prompt)
        self._stopped.clear()
        self._threads = [
            threading.Thread(
                target=self._run_column, args=(column, prompt, shown), name=f"compare-{i}", daemon=True
            )
            for i, column in enumerate(self.columns)
        ]
        for thread in self._threads:
            thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for every column to end; False if some were still running after `timeout` seconds."""
        deadline = None if timeout is None else perf_counter() + timeout
        for thread in self._threads:
            thread.join(None if deadline is None else max(0.0, deadline - perf_counter()))
        return not self.running

    def stop(self) -> None:
        """Stop every column (one signal for all); what each said so far stays."""
        self._stopped.set()
        for column in self.columns:
            if column.agent is not None:
                column.agent.abort("stopped by the user")

    def marks(self) -> tuple[int | None, int | None]:
        """The cheapest and the fastest of the columns that finished."""
        return cheapest_and_fastest([c.figures if c.status == "done" else None for c in self.columns])

    def _save_prompt(self, prompt: str) -> None:
        if self._store is None:
            return
        if self.record_id is None:
            record = self._store.create([c.spec for c in self.columns], prompt, self.blind)
            self.record_id = record.id
            for column, saved in zip(self.columns, record.columns, strict=True):
                column.conversation_id = saved.conversation_id
        else:
            self._store.add_prompt(self.record_id, prompt)

    def _run_column(self, column: ColumnState, prompt: str, images: list[ImageContent]) -> None:
        column.status, column.error, column.text = "running", None, ""
        column.turn, column.partial = [], ""
        column.figures = ColumnFigures()
        started = perf_counter()
        agent: Agent | None = None
        before = 0
        try:
            agent = column.agent or self._new_agent(column)
            column.agent = agent
            before = len(agent.state.messages)
            if self._stopped.is_set():
                column.status = "stopped"
                return
            for event in agent.prompt(prompt, images):
                self._apply(column, event, started)
                if self._stopped.is_set():
                    agent.abort("stopped by the user")
        except (CompareError, ModelSettingsError) as error:
            column.status, column.error = "error", str(error)
        except Exception as error:  # one broken column must not take the others down
            column.status = "error"
            column.error = f"This column failed: {error or type(error).__name__}"
        finally:
            column.figures.finished_at = perf_counter()
            column.figures.total_ms = (column.figures.finished_at - started) * 1000
            if agent is not None:
                column.turn = list(agent.state.messages[before:])
                self._save_turn(column, agent)
            if column.status == "running":
                column.status = "done"

    def _check_budget(self, prompt: UserMessage) -> None:
        """Refuse the whole fan-out, before any request, when the columns together would cross a limit.

        Each column's limits are checked against every column's estimate summed: the columns spend at once.
        """
        assert self._budget is not None
        guard = self._budget
        priced: list[tuple[str, float]] = []
        for column in self.columns:
            try:
                column.agent = column.agent or self._new_agent(column)
            except (CompareError, ModelSettingsError):
                continue  # the column's thread says what is wrong with it
            agent = column.agent
            model = agent.state.model
            assert model is not None
            sent = [*agent.state.messages, prompt]
            cost = request_cost(model, agent.state.system_prompt, sent, agent.config.max_tokens)
            priced.append((model.provider, cost or 0.0))
        total = sum(cost for _provider, cost in priced)
        for provider in dict.fromkeys(name for name, _cost in priced):
            checked = guard.check(provider, total)
            if not checked.allowed:
                raise CompareError(checked.message.replace("this request", "this comparison"))

    def _save_turn(self, column: ColumnState, agent: Agent) -> None:
        if self._store is None or column.conversation_id is None or not column.turn:
            return
        try:
            self._store.append(column.conversation_id, column.turn, agent.state.model)
        except StoreError as error:
            column.status = "error"
            column.error = f"This column's answer was not saved: {error}"

    def _new_agent(self, column: ColumnState) -> Agent:
        spec = column.spec
        llm, model = self._connector(spec)
        if self._budget is not None:
            llm = self._budget.wrap(llm)
        missing = [name for name in spec.tools if name not in self._tools]
        if missing:
            raise CompareError(
                f"Tool(s) {', '.join(missing)} are not offered by any connected MCP server; connect "
                "the server on the Tools page or remove them from the column."
            )
        tools = [self._tools[name] for name in spec.tools] if calls_tools(spec.provider) else []
        agent = Agent(llm, model, system_prompt=spec.system_prompt, tools=tools, config=spec.loop_config())
        agent.state.messages = list(column.history)
        return agent

    def _apply(self, column: ColumnState, event: AgentEvent, started: float) -> None:
        figures = column.figures
        if isinstance(event, MessageUpdateEvent):
            if figures.first_token_at is None:
                figures.first_token_at = perf_counter()
                figures.ttft_ms = (figures.first_token_at - started) * 1000
            if event.kind == "text":
                column.text += event.delta
                column.partial += event.delta
        elif isinstance(event, MessageEndEvent):
            column.turn.append(event.message)
            column.partial = ""
        elif isinstance(event, AgentEndEvent):
            _add_usage(figures, event.messages)
            if event.stop_reason == "aborted" or self._stopped.is_set():
                column.status = "stopped"
            elif event.stop_reason == "error":
                column.status = "error"
                column.error = event.error_message or "The model answered with an error."
            generating_s = (perf_counter() - (figures.first_token_at or started)) or 0.0
            if figures.output_tokens and generating_s > 0:
                figures.tokens_per_s = figures.output_tokens / generating_s


def _add_usage(figures: ColumnFigures, messages: Sequence[object]) -> None:
    """Sum the replies' tokens and costs; one reply without a price makes the total unknown."""
    replies = [m for m in messages if isinstance(m, AssistantMessage | AssistantMessageToolCall)]
    cost: float | None = 0.0
    for reply in replies:
        figures.input_tokens += reply.usage.input_tokens
        figures.cached_tokens += reply.usage.cache_read_tokens
        figures.output_tokens += reply.usage.output_tokens
        cost = None if cost is None or reply.cost is None else cost + reply.cost.total
    figures.cost = cost if replies else None
