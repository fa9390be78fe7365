"""The experiment as edited in the page (dataset, variants, scorers, run settings), and runs of it
in a background thread the page polls."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, Field

from yiem.budgets import BudgetGuard
from yiem.experiments._dataset import Dataset
from yiem.experiments._replay import OriginalReply, up_to_here
from yiem.experiments._results import ExperimentResult
from yiem.experiments._runner import Progress, RunOptions, RunRecorder, run_spec
from yiem.experiments._spec import DEFAULT_CONCURRENCY, RunSpec
from yiem.experiments._storage import ExperimentStore
from yiem.experiments._variant import Variant
from yiem.experiments.scorers import AnyScorer
from yiem.model_setup import ModelSetup
from yiem.types import AbortSignal, AgentMessage, AgentTool


class ExperimentDraft(BaseModel):
    """Everything the page edits; stored as the experiment's data (keys never are)."""

    name: str = "Untitled experiment"
    dataset: Dataset = Field(default_factory=Dataset)
    variants: list[Variant] = Field(default_factory=list)
    scorers: list[AnyScorer] = Field(default_factory=list)
    repeats: int = Field(default=1, ge=1)
    concurrency: int = Field(default=DEFAULT_CONCURRENCY, ge=1)
    budget_usd: float | None = Field(default=None, gt=0)
    # Items taken from someone's conversations (item id -> whose): sharing them asks that person first.
    chat_items: dict[str, str] = Field(default_factory=dict)
    # An item made from a Chat reply (item id -> that reply): the results show the replay beside it.
    originals: dict[str, OriginalReply] = Field(default_factory=dict)
    # The model that plays the users of items with a persona and a goal, and their most turns.
    user_model: Variant | None = None
    user_max_turns: int = Field(default=5, ge=1, le=50)

    @classmethod
    def from_chat(
        cls,
        title: str,
        conversation_id: str,
        messages: Sequence[AgentMessage],
        index: int,
        owner: str,
        setup: ModelSetup | None = None,
    ) -> ExperimentDraft:
        """An experiment of one item: the conversation up to the reply at `index`, that reply kept as
        the original to compare with; `setup` (the Chat's model) its first variant."""
        item, original = up_to_here(conversation_id, messages, index)
        draft = cls(name=f"{title or 'Chat'} up to here")
        draft.dataset = draft.add_from_conversations(Dataset(name=draft.name, items=[item]), owner)
        draft.originals[item.id] = original
        if setup is not None:
            draft.variants = [
                Variant.named(
                    setup.model_id or setup.provider or "chat", setup.model_copy(update={"api_key": ""})
                )
            ]
        return draft

    def add_from_conversations(self, loaded: Dataset, owner: str) -> Dataset:
        """The dataset with `owner`'s conversation items added (turns already in it are not added twice)."""
        known = {item.id for item in self.dataset.items}
        added = [item for item in loaded.items if item.id not in known]
        self.chat_items.update({item.id: owner for item in added})
        return Dataset(name=self.dataset.name, items=[*self.dataset.items, *added])

    def spec(self) -> RunSpec:
        """A new run of this draft, the dataset frozen as it is now; each simulated user gets the
        experiment's most turns. The user model goes with the run only when an item has a simulated user."""
        simulated = any(item.user is not None for item in self.dataset.items)
        items = [
            item.model_copy(update={"user": item.user.model_copy(update={"max_turns": self.user_max_turns})})
            if item.user is not None
            else item
            for item in self.dataset.items
        ]
        return RunSpec.build(
            Dataset(name=self.dataset.name, items=items),
            self.variants,
            self.scorers,
            name=self.name,
            repeats=self.repeats,
            concurrency=self.concurrency,
            budget_usd=self.budget_usd,
            user_model=self.user_model if simulated else None,
        )


class BackgroundRun:
    """A run (new or resumed) in a daemon thread: the page reads `progress`, `error`, `result` and
    calls `stop()`; everything it needs is stored as it goes, so a restart loses only items in flight.

    `start` stores a new run and runs the spec it was given; `resume` goes on with a stored one."""

    def __init__(
        self,
        store: ExperimentStore,
        spec: RunSpec,
        tools: Mapping[str, AgentTool] | None = None,
        executor: Literal["threads", "ray"] | None = None,
    ) -> None:
        self.run_id = spec.run_id
        self.signal = AbortSignal()
        self.progress: Progress | None = None
        self.result: ExperimentResult | None = None
        self.error: str | None = None
        options: RunOptions = {"progress": self._on_progress, "signal": self.signal, "tools": tools}
        options["executor"] = executor  # None: Ray when YIEM_RAY_ADDRESS is set, else threads
        options["budget"] = BudgetGuard(store.engine, store.owner)  # the person's spending limits
        self._thread = threading.Thread(
            target=self._run,
            args=(spec, store.recorder(spec.run_id), options),
            name="yiem-experiment",
            daemon=True,
        )
        self._thread.start()

    @classmethod
    def start(
        cls,
        store: ExperimentStore,
        spec: RunSpec,
        experiment_id: str | None = None,
        tools: Mapping[str, AgentTool] | None = None,
        executor: Literal["threads", "ray"] | None = None,
    ) -> BackgroundRun:
        """Store `spec` as a new run (its variants' keys are never stored) and run it as given."""
        store.create_run(spec, experiment_id)
        return cls(store, spec, tools, executor)

    @classmethod
    def resume(
        cls, store: ExperimentStore, spec: RunSpec, tools: Mapping[str, AgentTool] | None = None
    ) -> BackgroundRun:
        """Run what a stored run (`store.load_spec`, keys typed this session put back) has left."""
        store.set_status(spec.run_id, "running")
        return cls(store, spec, tools)

    def _on_progress(self, progress: Progress) -> None:
        self.progress = progress

    def _run(self, spec: RunSpec, recorder: RunRecorder, options: RunOptions) -> None:
        try:
            self.result = run_spec(spec, recorder, **options)
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
