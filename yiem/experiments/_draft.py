"""The experiment as edited in the page (dataset, variants, scorers, run settings), and runs of it
in a background thread the page polls."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from yiem.budgets import BudgetGuard
from yiem.experiments._dataset import Dataset
from yiem.experiments._results import ExperimentResult
from yiem.experiments._runner import Progress
from yiem.experiments._spec import DEFAULT_CONCURRENCY, RunSpec
from yiem.experiments._storage import ExperimentStore, resume_experiment
from yiem.experiments._variant import Variant
from yiem.experiments.scorers import AnyScorer
from yiem.types import AbortSignal, AgentTool


class ExperimentDraft(BaseModel):
    """Everything the page edits; stored as the experiment's data (keys never are)."""

    name: str = "Untitled experiment"
    dataset: Dataset = Field(default_factory=Dataset)
    variants: list[Variant] = Field(default_factory=list)
    scorers: list[AnyScorer] = Field(default_factory=list)
    repeats: int = Field(default=1, ge=1)
    concurrency: int = Field(default=DEFAULT_CONCURRENCY, ge=1)
    budget_usd: float | None = Field(default=None, gt=0)

    def spec(self) -> RunSpec:
        """A new run of this draft, the dataset frozen as it is now."""
        return RunSpec(
            experiment=self.name,
            dataset=self.dataset.frozen(),
            variants=[variant.model_copy() for variant in self.variants],
            scorers=list(self.scorers),
            repeats=self.repeats,
            concurrency={"*": self.concurrency},
            budget_usd=self.budget_usd,
        )


class BackgroundRun:
    """A run (new or resumed) in a daemon thread: the page reads `progress`, `error`, `result` and
    calls `stop()`; everything it needs is stored as it goes, so a restart loses only items in flight."""

    def __init__(
        self,
        store: ExperimentStore,
        run_id: str,
        *,
        spec: RunSpec | None = None,
        experiment_id: str | None = None,
        variants: Sequence[Variant] = (),
        tools: Mapping[str, AgentTool] | None = None,
    ) -> None:
        self.run_id = run_id
        self.signal = AbortSignal()
        self.progress: Progress | None = None
        self.result: ExperimentResult | None = None
        self.error: str | None = None
        if spec is not None:
            store.create_run(spec, experiment_id)
        options: dict[str, Any] = {"progress": self._on_progress, "signal": self.signal, "tools": tools}
        options["budget"] = BudgetGuard(store.engine, store.owner)  # the person's spending limits
        self._thread = threading.Thread(
            target=self._run, args=(store, variants, options), name="yiem-experiment", daemon=True
        )
        self._thread.start()

    def _on_progress(self, progress: Progress) -> None:
        self.progress = progress

    def _run(self, store: ExperimentStore, variants: Sequence[Variant], options: dict[str, Any]) -> None:
        try:
            self.result = resume_experiment(store, self.run_id, variants, **options)
        except Exception as error:  # shown in the page in words; the run is marked failed in the store
            self.error = str(error) or type(error).__name__

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def stop(self) -> None:
        """Stop: items in flight are dropped (they run again on resume), finished ones are kept."""
        self.signal.abort("Stopped by you")

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)
