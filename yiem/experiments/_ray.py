"""Items as Ray tasks (`YIEM_RAY_ADDRESS`): each worker builds its own client and MCP connections
from the variant's settings; outcomes come back to the driver as they finish and are stored there.

A worker that dies mid-item (killed, out of memory, its node lost) is retried by Ray (`max_retries`);
Stop cancels the tasks in flight, which then count as not finished and run again on resume.

Under spending limits each worker opens the app's database itself (its URL travels with the task,
like a typed key) and reserves every request there, so the limits hold across the whole cluster; a
refusal comes back with the task and stops the run as on the thread pool.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yiem.experiments._dataset import DatasetItem
from yiem.experiments._item_run import run_item
from yiem.experiments._outcome import ItemOutcome
from yiem.experiments._rubric import limit_judges
from yiem.experiments._simulated_user import connect_player
from yiem.experiments._spec import RAY_ADDRESS_ENV, ExperimentError, RunSpec
from yiem.experiments._variant import Variant
from yiem.types import AbortSignal, AgentTool, model_json

if TYPE_CHECKING:
    from yiem.budgets import BudgetCheck, BudgetGuard

TASK_RETRIES = 3

# Per worker process: the runs' specs, and each variant's client and tools, made once.
_specs: dict[str, RunSpec] = {}
_ready: dict[tuple[str, str], tuple[Any, Any, list[AgentTool]]] = {}
_guards: dict[tuple[str, str, str], BudgetGuard] = {}
_judges_limited: set[str] = set()  # the runs whose rubric judges ask the limits first
_worker_lock = threading.Lock()
# The refusal of the item this thread runs: requests and judges run in the item's own thread.
_refusal = threading.local()

Limits = tuple[str, str, str]
"""(database URL, owner id, the budgets file's limits as JSON): where a worker checks the spending
limits, whose they are, and the driver's file (a worker's folder may hold another, or none)."""


def _refused(checked: BudgetCheck, signal: AbortSignal | None) -> None:
    if getattr(_refusal, "message", None) is None:
        _refusal.message = checked.message
    if signal is not None:
        signal.abort(checked.message)


def _worker_guard(limits: Limits) -> BudgetGuard:
    from pydantic import TypeAdapter

    from yiem.budgets import Budget, BudgetGuard
    from yiem.store import create_store_engine

    guard = _guards.get(limits)
    if guard is None:
        url, owner_id, configured = limits
        from_file = TypeAdapter(list[Budget]).validate_json(configured)
        guard = _guards[limits] = BudgetGuard(create_store_engine(url), owner_id, from_file)
    return guard


def worker_limits(guard: BudgetGuard) -> Limits:
    """What a worker needs to check `guard`'s limits; a database only this process sees cannot be."""
    from pydantic import TypeAdapter

    from yiem.budgets import Budget

    url = guard.ledger.engine.url
    if url.get_backend_name() == "sqlite":
        if url.database in (None, "", ":memory:"):
            raise ExperimentError(
                "Spending limits cannot be checked on Ray workers against an in-memory database: "
                "set YIEM_DATABASE_URL to a file or PostgreSQL, or unset " + RAY_ADDRESS_ENV
            )
        url = url.set(database=str(Path(url.database).resolve()))
    configured = TypeAdapter(list[Budget]).dump_json(guard.ledger.limits.from_config()).decode()
    return url.render_as_string(hide_password=False), guard.owner_id, configured


def _worker_tools(names: list[str]) -> dict[str, AgentTool]:
    """The worker's own MCP connections, from its mcp.json (`YIEM_MCP_CONFIG`), for the named tools."""
    if not names:
        return {}
    from pathlib import Path

    from yiem.mcp import connect_server, load_mcp_config
    from yiem.tool_registry import ToolRegistry

    config = load_mcp_config(Path(os.environ.get("YIEM_MCP_CONFIG", "mcp.json")))
    registry = ToolRegistry()
    for name, entry in config.servers.items():
        registry.add_mcp_server(name, connect_server(name, entry))
    return registry.tools


def run_remote_item(
    spec: RunSpec,
    variant_name: str,
    item_index: int,
    repeat: int,
    limits: Limits | None = None,
) -> tuple[str | None, str | None]:
    """What a Ray task runs: one item of a run's spec under one variant. The outcome as JSON (None if
    cancelled or refused), and the words of a spending limit that refused one of its requests."""
    run_id = spec.run_id
    with _worker_lock:
        if limits is not None and run_id not in _judges_limited:
            limit_judges(spec.scorers, _worker_guard(limits), _refused)
            _judges_limited.add(run_id)
        variant = next(v for v in spec.variants if v.name == variant_name)
        ready = _ready.get((run_id, variant_name))
        if ready is None:
            llm, model = variant.connect()
            if limits is not None:
                llm = _worker_guard(limits).wrap(llm, _refused)
            tools = variant.select_tools(_worker_tools(variant.tools))
            ready = _ready[(run_id, variant_name)] = (llm, model, tools)
    llm, model, tools = ready
    _refusal.message = None
    item = spec.dataset.items[item_index]
    guard = _worker_guard(limits) if limits is not None else None
    player = connect_player(spec.user_model, guard, _refused) if item.user is not None else None
    outcome = run_item(variant, item, repeat, llm, model, tools, spec.scorers, AbortSignal(), player)
    return (None if outcome is None else model_json(outcome)), _refusal.message


class RayExecutor:
    """Submits items to the Ray cluster at `address` (default `YIEM_RAY_ADDRESS`)."""

    def __init__(
        self,
        spec: RunSpec,
        address: str | None = None,
        *,
        budget: BudgetGuard | None = None,
        on_refuse: Callable[[BudgetCheck, AbortSignal | None], None] | None = None,
    ) -> None:
        try:
            import ray
        except ImportError as error:
            raise ExperimentError(
                f"{RAY_ADDRESS_ENV} is set but Ray is not installed: install the ray of requirements.txt"
            ) from error
        self._ray = ray
        missing = [variant.name for variant in spec.variants if variant.llm is not None]
        if missing:
            raise ExperimentError(
                f"Variant(s) {', '.join(missing)} carry a client object, which cannot travel to Ray workers; "
                "give them provider settings, or unset " + RAY_ADDRESS_ENV
            )
        if not ray.is_initialized():
            target = address or os.environ.get(RAY_ADDRESS_ENV) or None
            try:
                ray.init(
                    address=target, ignore_reinit_error=True, log_to_driver=False, include_dashboard=False
                )
            except ConnectionError as error:
                raise ExperimentError(f"Cannot reach the Ray cluster at {target}: {error}") from error
        self._limits = worker_limits(budget) if budget is not None else None
        self._on_refuse = on_refuse
        # Keys typed in the page travel with the task (never stored); the spec's JSON leaves them out.
        self._keys = {variant.name: variant.api_key for variant in spec.variants if variant.api_key}
        # In the object store once, and boxed so that Ray does not fetch it for every task: a worker
        # reads it only for its first task of the run. Sent inline it was the whole dataset per task.
        self._spec_box = [ray.put(model_json(spec))]
        self._remote = ray.remote(max_retries=TASK_RETRIES, num_cpus=1)(_task)
        self._index = {item.id: index for index, item in enumerate(spec.dataset.items)}
        self._refs: list[Any] = []

    def submit(
        self, variant: Variant, item: DatasetItem, repeat: int, spec: RunSpec, signal: AbortSignal
    ) -> Future[ItemOutcome | None]:
        ref = self._remote.remote(
            self._spec_box,
            self._keys,
            spec.run_id,
            variant.name,
            (self._index[item.id], repeat),
            self._limits,
        )
        self._refs.append(ref)
        result: Future[ItemOutcome | None] = Future()
        raw = ref.future()
        unlink = signal.on_abort(lambda _reason: self._ray.cancel(ref))

        def deliver(done: Future[Any]) -> None:
            unlink()
            try:
                value = done.result()
            except self._ray.exceptions.TaskCancelledError:  # Stop: not finished, runs again on resume
                result.set_result(None)
                return
            except Exception as error:  # failed past its retries: the run fails and says why
                result.set_exception(ExperimentError(f"An item failed on the Ray cluster: {error}"))
                return
            outcome, refusal = value
            if refusal is not None and self._on_refuse is not None:
                from yiem.budgets import BudgetCheck

                self._on_refuse(BudgetCheck(verdict="refuse", message=refusal), None)
            result.set_result(None if outcome is None else ItemOutcome.model_validate_json(outcome))

        raw.add_done_callback(deliver)
        return result

    def close(self) -> None:
        for ref in self._refs:
            with contextlib.suppress(Exception):  # finished already
                self._ray.cancel(ref)
        self._refs.clear()


def _task(
    spec_box: list[Any],
    keys: dict[str, str],
    run_id: str,
    variant_name: str,
    item_repeat: tuple[int, int],
    limits: Limits | None,
) -> tuple[str | None, str | None]:
    with _worker_lock:
        spec = _specs.get(run_id)
        if spec is None:
            # Parsed once per worker and run, not per task: the spec holds the whole dataset.
            import ray

            spec = RunSpec.model_validate_json(ray.get(spec_box[0]))
            if keys:
                for variant in spec.variants:
                    variant.api_key = keys.get(variant.name, "")
            _specs[run_id] = spec
    return run_remote_item(spec, variant_name, *item_repeat, limits)
