"""Items as Ray tasks (`YIEM_RAY_ADDRESS`): each worker builds its own client and MCP connections
from the variant's settings; outcomes come back to the driver as they finish and are stored there.

A worker that dies mid-item (killed, out of memory, its node lost) is retried by Ray (`max_retries`);
Stop cancels the tasks in flight, which then count as not finished and run again on resume.
"""

from __future__ import annotations

import contextlib
import os
import threading
from concurrent.futures import Future
from typing import Any

from yiem.experiments._dataset import DatasetItem
from yiem.experiments._item_run import run_item
from yiem.experiments._outcome import ItemOutcome
from yiem.experiments._spec import RAY_ADDRESS_ENV, ExperimentError, RunSpec
from yiem.experiments._variant import Variant
from yiem.types import AbortSignal, AgentTool, model_json

TASK_RETRIES = 3

# Per worker process: the runs' specs, and each variant's client and tools, made once.
_specs: dict[str, RunSpec] = {}
_ready: dict[tuple[str, str], tuple[Any, Any, list[AgentTool]]] = {}
_worker_lock = threading.Lock()


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
    spec_json: str, run_id: str, variant_name: str, item_index: int, repeat: int
) -> str | None:
    """What a Ray task runs: one item under one variant; the outcome as JSON (None if cancelled)."""
    with _worker_lock:
        spec = _specs.get(run_id)
        if spec is None:
            spec = _specs[run_id] = RunSpec.model_validate_json(spec_json)
        variant = next(v for v in spec.variants if v.name == variant_name)
        ready = _ready.get((run_id, variant_name))
        if ready is None:
            llm, model = variant.connect()
            tools = variant.select_tools(_worker_tools(variant.tools))
            ready = _ready[(run_id, variant_name)] = (llm, model, tools)
    llm, model, tools = ready
    outcome = run_item(
        variant, spec.dataset.items[item_index], repeat, llm, model, tools, spec.scorers, AbortSignal()
    )
    return None if outcome is None else model_json(outcome)


class RayExecutor:
    """Submits items to the Ray cluster at `address` (default `YIEM_RAY_ADDRESS`)."""

    def __init__(self, spec: RunSpec, address: str | None = None) -> None:
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
        # Keys typed in the page travel with the task (never stored); the spec's JSON leaves them out.
        self._keys = {variant.name: variant.api_key for variant in spec.variants if variant.api_key}
        self._spec_json = model_json(spec)
        self._remote = ray.remote(max_retries=TASK_RETRIES, num_cpus=1)(_task)
        self._index = {item.id: index for index, item in enumerate(spec.dataset.items)}
        self._refs: list[Any] = []

    def submit(
        self, variant: Variant, item: DatasetItem, repeat: int, spec: RunSpec, signal: AbortSignal
    ) -> Future[ItemOutcome | None]:
        ref = self._remote.remote(
            self._spec_json, self._keys, spec.run_id, variant.name, self._index[item.id], repeat
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
            result.set_result(None if value is None else ItemOutcome.model_validate_json(value))

        raw.add_done_callback(deliver)
        return result

    def close(self) -> None:
        for ref in self._refs:
            with contextlib.suppress(Exception):  # finished already
                self._ray.cancel(ref)
        self._refs.clear()


def _task(
    spec_json: str, keys: dict[str, str], run_id: str, variant_name: str, item: int, repeat: int
) -> str | None:
    if keys:
        spec = RunSpec.model_validate_json(spec_json)
        for variant in spec.variants:
            variant.api_key = keys.get(variant.name, "")
        with _worker_lock:
            _specs.setdefault(run_id, spec)
    return run_remote_item(spec_json, run_id, variant_name, item, repeat)
