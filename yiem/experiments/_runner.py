"""`run_experiment`: dataset × variants × repeats, each item a full agent run, bounded per provider.

Tasks go out provider by provider, at most `concurrency` at a time each; results come back to the
caller's thread, which scores nothing itself: it records each outcome and reports progress. The
budget is tallied as each outcome arrives, before its worker takes another item. Items finished
before a restart (the recorder's) are never run again; an item stopped midway is not recorded, so
it runs again on resume.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from queue import SimpleQueue
from time import perf_counter
from typing import Literal, Protocol, TypedDict, Unpack

from yiem.budgets import BudgetCheck, BudgetGuard
from yiem.experiments._dataset import Dataset, DatasetItem
from yiem.experiments._item_run import run_item
from yiem.experiments._outcome import ItemOutcome, OutcomeKey
from yiem.experiments._results import ExperimentResult, RunStatus
from yiem.experiments._rubric import limit_judges
from yiem.experiments._simulated_user import connect_player
from yiem.experiments._spec import (
    BUDGET_REASON,
    DEFAULT_CONCURRENCY,
    RAY_ADDRESS_ENV,
    RunSpec,
    check_spec,
)
from yiem.experiments._variant import Variant
from yiem.experiments.scorers import AnyScorer
from yiem.types import AbortSignal, AgentTool

QUEUE_AHEAD = 64


@dataclass(frozen=True)
class Progress:
    """How far a run is: counts, dollars so far (variants, judges, simulated users), time and time left.

    `cost` sums the known prices only; `unpriced` counts the outcomes with a price unknown (a local
    model), so a run of those is never shown as costing $0.
    """

    done: int
    total: int
    errors: int
    cost: float
    elapsed_s: float
    resumed: int = 0
    last: ItemOutcome | None = None
    unpriced: int = 0

    @property
    def cost_known(self) -> float | None:
        """Dollars so far; None while no finished outcome has a known price (none yet, a local model)."""
        return self.cost if self.done > self.unpriced else None

    @property
    def eta_s(self) -> float | None:
        """Seconds left at the pace of the items run in this session; None before the first."""
        ran = self.done - self.resumed
        if ran <= 0:
            return None
        return self.elapsed_s / ran * (self.total - self.done)


class RunRecorder(Protocol):
    """Where outcomes go as they finish (the store, or memory); called from the caller's thread."""

    def finished(self) -> list[ItemOutcome]:
        """Outcomes recorded before (a resumed run skips them)."""
        ...

    def record(self, outcomes: Sequence[ItemOutcome]) -> list[ItemOutcome]:
        """Keep outcomes that finished together (one write for all); may return them with fields
        filled (e.g. their stored conversations)."""
        ...

    def finish(self, status: RunStatus, stop_reason: str | None) -> None:
        """The run ended (finished, stopped, over budget, or failed)."""
        ...


class MemoryRecorder:
    """Keeps outcomes in a list: runs from Python without a store."""

    def __init__(self, outcomes: Sequence[ItemOutcome] = ()) -> None:
        self.outcomes = list(outcomes)
        self.status: RunStatus = "running"
        self.stop_reason: str | None = None

    def finished(self) -> list[ItemOutcome]:
        return list(self.outcomes)

    def record(self, outcomes: Sequence[ItemOutcome]) -> list[ItemOutcome]:
        self.outcomes.extend(outcomes)
        return list(outcomes)

    def finish(self, status: RunStatus, stop_reason: str | None) -> None:
        self.status, self.stop_reason = status, stop_reason


class RunStore(Protocol):
    """Where a new run is kept (ExperimentStore): the runner needs only these two, so it never imports it."""

    def create_run(self, spec: RunSpec, experiment_id: str | None = None) -> str: ...

    def recorder(self, run_id: str) -> RunRecorder: ...


class TaskExecutor(Protocol):
    """Runs one task somewhere (a thread, a Ray worker) and hands back a future of its outcome.

    An executor that itself runs at most `spec.limit(provider)` tasks of a provider at once says so
    with `queues_ahead = True`: the runner then hands it `QUEUE_AHEAD` more per provider, waiting, so
    a slot that frees takes its next item at once instead of after a round trip to the caller's
    thread, and the items that finish while the caller stores the last ones are stored together.
    """

    def submit(
        self, variant: Variant, item: DatasetItem, repeat: int, spec: RunSpec, signal: AbortSignal
    ) -> Future[ItemOutcome | None]: ...

    def close(self) -> None: ...


class ThreadExecutor:
    """A thread pool per provider in this process, of its concurrency; each variant is connected
    once and its tools picked once.

    With `budget`, each variant's client and each rubric judge check the spending limits before
    every request they send.
    """

    def __init__(
        self,
        spec: RunSpec,
        tools: Mapping[str, AgentTool],
        budget: BudgetGuard | None = None,
        on_refuse: Callable[[BudgetCheck, AbortSignal | None], None] | None = None,
    ) -> None:
        # Each pool bounds its provider, so the runner may queue items ahead of the free slots.
        self._pools = {
            provider: ThreadPoolExecutor(max_workers=spec.limit(provider), thread_name_prefix="yiem-exp")
            for provider in {variant.provider_key for variant in spec.variants}
        }
        self.queues_ahead = True
        self._ready = {}
        limit_judges(spec.scorers, budget, on_refuse)
        for variant in spec.variants:
            llm, model = variant.connect()
            if budget is not None:
                llm = budget.wrap(llm, on_refuse)
            self._ready[variant.name] = (llm, model, variant.select_tools(tools))
        self._player = connect_player(spec.user_model, budget, on_refuse)

    def submit(
        self, variant: Variant, item: DatasetItem, repeat: int, spec: RunSpec, signal: AbortSignal
    ) -> Future[ItemOutcome | None]:
        llm, model, tools = self._ready[variant.name]
        pool = self._pools[variant.provider_key]
        return pool.submit(
            run_item, variant, item, repeat, llm, model, tools, spec.scorers, signal, self._player
        )

    def close(self) -> None:
        for pool in self._pools.values():
            pool.shutdown(wait=True, cancel_futures=True)


class RunOptions(TypedDict, total=False):
    """How a run goes, besides what it runs (its `RunSpec`); none of it is stored.

    `tools`: the connected MCP servers' tools the variants may call. `progress`: called in the
    caller's thread after each outcome. `signal.abort()` stops the run (items in flight are dropped
    and run again on resume). `executor`: threads, Ray (also chosen by `YIEM_RAY_ADDRESS`), or one's
    own. `budget`: the person's spending limits; a request they refuse (a variant's or a rubric
    judge's) is never sent and stops the run, keeping the items finished.
    """

    tools: Mapping[str, AgentTool] | None
    progress: Callable[[Progress], None] | None
    signal: AbortSignal | None
    executor: Literal["threads", "ray"] | TaskExecutor | None
    budget: BudgetGuard | None


def run_experiment(
    dataset: Dataset,
    variants: Sequence[Variant],
    scorers: Sequence[AnyScorer] = (),
    *,
    repeats: int = 1,
    concurrency: int | Mapping[str, int] = DEFAULT_CONCURRENCY,
    budget_usd: float | None = None,
    name: str = "",
    store: RunStore | None = None,
    user_model: Variant | None = None,
    **options: Unpack[RunOptions],
) -> ExperimentResult:
    """Run every item of `dataset` under every variant `repeats` times, score it, and return the results.

    `concurrency` bounds items in flight per provider (an int for all, or `{"openai": 8, "*": 4}`);
    the run stops once `budget_usd` is spent. With `store`, the run and every item's transcript are
    saved there (the Experiments page shows them). `user_model` plays the user of items that have a
    persona and a goal. `options`: see `RunOptions`.
    """
    spec = RunSpec.build(
        dataset,
        variants,
        scorers,
        name=name,
        repeats=repeats,
        concurrency=concurrency,
        budget_usd=budget_usd,
        user_model=user_model,
    )
    check_spec(spec)
    recorder = None
    if store is not None:
        store.create_run(spec)
        recorder = store.recorder(spec.run_id)
    return run_spec(spec, recorder, **options)


def run_spec(
    spec: RunSpec, recorder: RunRecorder | None = None, **options: Unpack[RunOptions]
) -> ExperimentResult:
    """Run what `spec` has left: all of a new run, or what `recorder` has not finished (a resume)."""
    check_spec(spec)
    return _Run(
        spec,
        recorder or MemoryRecorder(),
        options.get("progress"),
        options.get("signal"),
        options.get("tools") or {},
        options.get("executor"),
        options.get("budget"),
    ).run()


class _Run:
    def __init__(
        self,
        spec: RunSpec,
        recorder: RunRecorder,
        progress: Callable[[Progress], None] | None,
        signal: AbortSignal | None,
        tools: Mapping[str, AgentTool],
        executor: Literal["threads", "ray"] | TaskExecutor | None,
        budget: BudgetGuard | None = None,
    ) -> None:
        self.spec = spec
        self.budget = budget
        self.refusal: str | None = None  # the spending limit's words, once one refused a request
        self.recorder = recorder
        self.progress = progress
        self.tools = tools
        self.executor_choice = executor
        # Our own signal, so the budget can stop the run without aborting the caller's signal.
        self.signal = AbortSignal()
        self._unlink = signal.on_abort(self.signal.abort) if signal is not None else (lambda: None)
        self.outcomes: dict[OutcomeKey, ItemOutcome] = {}
        self.cost = 0.0
        self.errors = 0
        self.unpriced = 0
        # Finished tasks, in the order they finished; and the dollars spent, tallied as they do.
        self._arrived: SimpleQueue[Future[ItemOutcome | None]] = SimpleQueue()
        self._spent = 0.0
        self._spent_lock = threading.Lock()

    def _executor(self) -> TaskExecutor:
        choice = self.executor_choice
        if choice is None:
            choice = "ray" if os.environ.get(RAY_ADDRESS_ENV) else "threads"
        if choice == "threads":
            return ThreadExecutor(self.spec, self.tools, self.budget, self._refused)
        if choice == "ray":
            from yiem.experiments._ray import RayExecutor

            return RayExecutor(self.spec, budget=self.budget, on_refuse=self._refused)
        executor: TaskExecutor = choice
        return executor

    def _refused(self, checked: BudgetCheck, _signal: AbortSignal | None) -> None:
        # Called from a worker thread: the first refusal's words stay; the run stops as at its own budget.
        if self.refusal is None:
            self.refusal = checked.message
        self.signal.abort(BUDGET_REASON)

    def _add(self, outcome: ItemOutcome) -> None:
        self.outcomes[outcome.key] = outcome
        self.cost += _spent_on(outcome)
        if outcome.error is not None:
            self.errors += 1
        if not outcome.price_known:
            self.unpriced += 1

    def _arrive(self, future: Future[ItemOutcome | None]) -> None:
        # In the thread that finished the task, before it takes another item: once the budget is
        # spent, no item starts, even while the caller's thread is still storing earlier ones.
        budget = self.spec.budget_usd
        if budget is not None and not future.cancelled() and future.exception() is None:
            outcome = future.result()
            if outcome is not None:
                with self._spent_lock:
                    self._spent += _spent_on(outcome)
                    over = self._spent >= budget
                if over:
                    self.signal.abort(BUDGET_REASON)
        self._arrived.put(future)

    def _arrivals(self) -> list[Future[ItemOutcome | None]]:
        """The next finished task (waiting for it) and all that finished meanwhile."""
        batch = [self._arrived.get()]
        while not self._arrived.empty():
            batch.append(self._arrived.get())
        return batch

    def _report(self, total: int, started: float, resumed: int, last: ItemOutcome | None) -> None:
        if self.progress is not None:
            self.progress(
                Progress(
                    done=len(self.outcomes),
                    total=total,
                    errors=self.errors,
                    cost=self.cost,
                    elapsed_s=perf_counter() - started,
                    resumed=resumed,
                    last=last,
                    unpriced=self.unpriced,
                )
            )

    def _over_budget(self) -> bool:
        budget = self.spec.budget_usd
        return budget is not None and self.cost >= budget

    def run(self) -> ExperimentResult:
        spec = self.spec
        started = perf_counter()
        for outcome in self.recorder.finished():
            self._add(outcome)
        resumed = len(self.outcomes)
        self._spent = self.cost
        tasks = spec.tasks()
        lanes: dict[str, deque[tuple[DatasetItem, int, Variant]]] = {}
        for item, repeat, variant in tasks:
            if (item.id, variant.name, repeat) not in self.outcomes:
                lanes.setdefault(variant.provider_key, deque()).append((item, repeat, variant))
        self._report(len(tasks), started, resumed, None)
        if self._over_budget():
            self.signal.abort(BUDGET_REASON)
        in_flight: dict[Future[ItemOutcome | None], str] = {}
        running = dict.fromkeys(lanes, 0)
        executor: TaskExecutor | None = None
        try:
            if any(lanes.values()) and not self.signal.aborted:
                executor = self._executor()
            ahead = QUEUE_AHEAD if getattr(executor, "queues_ahead", False) else 0
            while executor is not None:
                for provider, lane in lanes.items():
                    limit = spec.limit(provider) + ahead
                    while lane and running[provider] < limit and not self.signal.aborted:
                        item, repeat, variant = lane.popleft()
                        future = executor.submit(variant, item, repeat, spec, self.signal)
                        in_flight[future] = provider
                        running[provider] += 1
                        future.add_done_callback(self._arrive)
                if not in_flight:
                    break
                finished: list[ItemOutcome] = []
                for future in self._arrivals():
                    running[in_flight.pop(future)] -= 1
                    if (done := future.result()) is not None:
                        finished.append(done)
                # What finished while the last ones were stored goes in one write: the store's
                # commit, not the items, then sets the pace, and each outcome is kept as promptly.
                for recorded in self.recorder.record(finished) if finished else ():
                    self._add(recorded)
                    self._report(len(tasks), started, resumed, recorded)
        except Exception as error:
            self.recorder.finish("failed", str(error) or type(error).__name__)
            raise
        finally:
            if executor is not None:
                self.signal.abort("the run ended")  # in case an exception left tasks running
                executor.close()
            self._unlink()
        result = self._result(tasks)
        self.recorder.finish(result.status, result.stop_reason)
        return result

    def _result(self, tasks: list[tuple[DatasetItem, int, Variant]]) -> ExperimentResult:
        spec = self.spec
        ordered = [
            self.outcomes[key]
            for item, repeat, variant in tasks
            if (key := (item.id, variant.name, repeat)) in self.outcomes
        ]
        status: RunStatus = "finished"
        reason = None
        if len(ordered) < len(tasks):
            reason = self.signal.reason
            status = "budget" if reason == BUDGET_REASON else "stopped"
            if status == "budget" and self.refusal is not None:
                reason = self.refusal
        return ExperimentResult(
            run_id=spec.run_id,
            experiment=spec.experiment,
            dataset=spec.dataset,
            dataset_version=spec.dataset.version,
            variants=[variant.name for variant in spec.variants],
            scorers=[scorer.name for scorer in spec.scorers],
            repeats=spec.repeats,
            outcomes=ordered,
            status=status,
            stop_reason=reason,
        )


def _spent_on(outcome: ItemOutcome) -> float:
    """The known dollars of one outcome: its replies', its rubric judges' and its simulated user's."""
    return (outcome.cost or 0.0) + outcome.judge_cost + (outcome.user_cost or 0.0)
