"""Experiments, runs and outcomes in the store; each item's transcript a hidden conversation.

Outcomes that finished together are one transaction: each one's conversation, messages, usage rows
(tagged with the experiment and run, the judges' too) and outcome row, so a killed app has either
all of an outcome or none, and a resumed run re-runs exactly the items that have no outcome row.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Unpack

from pydantic import ValidationError
from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.engine import Engine

from yiem.experiments._outcome import ItemOutcome
from yiem.experiments._results import ExperimentResult, RunStatus
from yiem.experiments._spec import RunSpec
from yiem.experiments._variant import Variant
from yiem.identity import LOCAL_OWNER_ID
from yiem.store import (
    ConversationStore,
    StoreError,
    conversations,
    experiment_outcomes,
    experiment_runs,
    experiments,
    messages,
    usage,
    usage_row,
)

if TYPE_CHECKING:
    from yiem.experiments._runner import RunOptions

from yiem.types import (
    AgentMessage,
    AssistantMessage,
    AssistantMessageToolCall,
    model_json,
    replace_lone_surrogates,
)


class ExperimentNotFoundError(StoreError):
    """No experiment or run has this id (deleted, or a stale link)."""


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class ExperimentRecord:
    """A saved experiment: its name and the page's draft (dataset, variants, scorers, settings)."""

    id: str
    name: str
    data: dict[str, Any]
    updated_ms: int


@dataclass(frozen=True)
class RunRecord:
    """A run's header: status, counts and when."""

    id: str
    experiment_id: str
    status: RunStatus
    stop_reason: str | None
    dataset_version: str
    total: int
    done: int
    created_ms: int
    updated_ms: int


class ExperimentStore:
    """Reads and writes experiments, runs and outcomes on the store's engine."""

    def __init__(self, engine: Engine, owner: str = LOCAL_OWNER_ID) -> None:
        # The experiments are the team's; the transcripts and usage rows of a run are its runner's.
        self.engine = engine
        self.owner = owner
        self.conversations = ConversationStore(engine, owner)

    # experiments

    def save_experiment(self, name: str, data: dict[str, Any], experiment_id: str | None = None) -> str:
        """Create or update an experiment's draft; returns its id."""
        now = _now_ms()
        name = replace_lone_surrogates(name)  # JSON's "\ud800" cannot be written as UTF-8
        blob = json.dumps(replace_lone_surrogates(data), ensure_ascii=False)
        with self.engine.begin() as conn:
            if experiment_id is not None:
                done = conn.execute(
                    update(experiments)
                    .where(experiments.c.id == experiment_id)
                    .values(name=name, data=blob, updated_ms=now)
                )
                if done.rowcount:
                    return experiment_id
            new_id = experiment_id or uuid.uuid4().hex
            conn.execute(
                insert(experiments).values(id=new_id, name=name, data=blob, created_ms=now, updated_ms=now)
            )
        return new_id

    def experiment_named(self, name: str) -> str:
        """The id of the most recent experiment with this name, created empty when there is none."""
        name = replace_lone_surrogates(name)  # as `save_experiment` stores it
        with self.engine.connect() as conn:
            found = conn.execute(
                select(experiments.c.id)
                .where(experiments.c.name == name)
                .order_by(experiments.c.updated_ms.desc())
                .limit(1)
            ).scalar()
        return str(found) if found is not None else self.save_experiment(name, {})

    def list_experiments(self) -> list[ExperimentRecord]:
        """Most recently edited first."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(experiments).order_by(experiments.c.updated_ms.desc())).all()
        return [ExperimentRecord(r.id, r.name, json.loads(r.data), r.updated_ms) for r in rows]

    def saved_variants(self) -> list[tuple[str, Variant]]:
        """Every saved experiment's variants as `(experiment name, variant)`, most recently edited first."""
        found: list[tuple[str, Variant]] = []
        for record in self.list_experiments():
            for data in record.data.get("variants", []):
                try:
                    found.append((record.name, Variant.model_validate(data)))
                except ValidationError:
                    continue  # a variant this version cannot read is not offered, not an error
        return found

    def get_experiment(self, experiment_id: str) -> ExperimentRecord:
        with self.engine.connect() as conn:
            row = conn.execute(select(experiments).where(experiments.c.id == experiment_id)).first()
        if row is None:
            raise ExperimentNotFoundError(f"No experiment with id {experiment_id!r}.")
        return ExperimentRecord(row.id, row.name, json.loads(row.data), row.updated_ms)

    def delete_experiment(self, experiment_id: str) -> None:
        """Remove the experiment, its runs and outcomes; transcripts and usage rows stay."""
        with self.engine.begin() as conn:
            runs = select(experiment_runs.c.id).where(experiment_runs.c.experiment_id == experiment_id)
            conn.execute(delete(experiment_outcomes).where(experiment_outcomes.c.run_id.in_(runs)))
            conn.execute(delete(experiment_runs).where(experiment_runs.c.experiment_id == experiment_id))
            conn.execute(delete(experiments).where(experiments.c.id == experiment_id))

    # runs

    def create_run(self, spec: RunSpec, experiment_id: str | None = None) -> str:
        """Store a new run of `spec` (under the experiment named in it when no id is given)."""
        experiment_id = experiment_id or self.experiment_named(spec.experiment or "Untitled")
        now = _now_ms()
        with self.engine.begin() as conn:
            conn.execute(
                insert(experiment_runs).values(
                    id=spec.run_id,
                    experiment_id=experiment_id,
                    status="running",
                    spec=model_json(spec, by_alias=True),
                    dataset_version=spec.dataset.version,
                    total=len(spec.dataset.items) * len(spec.variants) * spec.repeats,
                    created_ms=now,
                    updated_ms=now,
                )
            )
        return spec.run_id

    def list_runs(self, experiment_id: str | None = None) -> list[RunRecord]:
        """Newest first, with how many outcomes each has."""
        done = (
            select(func.count()).where(experiment_outcomes.c.run_id == experiment_runs.c.id).scalar_subquery()
        )
        query = select(experiment_runs, done.label("done")).order_by(experiment_runs.c.created_ms.desc())
        if experiment_id is not None:
            query = query.where(experiment_runs.c.experiment_id == experiment_id)
        with self.engine.connect() as conn:
            return [_run_record(row) for row in conn.execute(query)]

    def get_run(self, run_id: str) -> RunRecord:
        runs = [r for r in self.list_runs() if r.id == run_id]
        if not runs:
            raise ExperimentNotFoundError(f"No experiment run with id {run_id!r}.")
        return runs[0]

    def load_spec(self, run_id: str, variants: Sequence[Variant] = ()) -> RunSpec:
        """The run's stored spec; `variants` replace stored ones of the same name (client objects, keys)."""
        with self.engine.connect() as conn:
            blob = conn.execute(select(experiment_runs.c.spec).where(experiment_runs.c.id == run_id)).scalar()
        if blob is None:
            raise ExperimentNotFoundError(f"No experiment run with id {run_id!r}.")
        spec = RunSpec.model_validate_json(blob)
        given = {variant.name: variant for variant in variants}
        spec.variants = [given.get(variant.name, variant) for variant in spec.variants]
        return spec

    def set_status(self, run_id: str, status: RunStatus, stop_reason: str | None = None) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                update(experiment_runs)
                .where(experiment_runs.c.id == run_id)
                .values(status=status, stop_reason=stop_reason, updated_ms=_now_ms())
            )

    def outcomes(self, run_id: str) -> list[ItemOutcome]:
        """The run's outcomes without their transcripts (`transcript()` loads one)."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(experiment_outcomes.c.data, experiment_outcomes.c.conversation_id).where(
                    experiment_outcomes.c.run_id == run_id
                )
            ).all()
        loaded = []
        for row in rows:
            outcome = ItemOutcome.model_validate_json(row.data)
            outcome.conversation_id = row.conversation_id
            loaded.append(outcome)
        return loaded

    def load_result(self, run_id: str) -> ExperimentResult:
        """A stored run as an ExperimentResult (outcomes in the run's order, transcripts left out)."""
        spec = self.load_spec(run_id)
        record = self.get_run(run_id)
        found = {outcome.key: outcome for outcome in self.outcomes(run_id)}
        ordered = [
            found[key]
            for item, repeat, variant in spec.tasks()
            if (key := (item.id, variant.name, repeat)) in found
        ]
        return ExperimentResult(
            run_id=run_id,
            experiment=spec.experiment,
            dataset=spec.dataset,
            dataset_version=record.dataset_version,
            variants=[variant.name for variant in spec.variants],
            scorers=[scorer.name for scorer in spec.scorers],
            repeats=spec.repeats,
            outcomes=ordered,
            status=record.status,
            stop_reason=record.stop_reason,
        )

    def transcript(self, outcome: ItemOutcome) -> list[AgentMessage]:
        """The whole transcript of an outcome, tool calls and all."""
        if outcome.messages or outcome.conversation_id is None:
            return list(outcome.messages)
        return self.conversations.load_messages(outcome.conversation_id)

    def record(self, run_id: str, outcomes: Sequence[ItemOutcome]) -> list[ItemOutcome]:
        """Store outcomes with their transcripts and usage in one transaction; returns them with their
        conversation ids (the stored copies keep no messages)."""
        now = _now_ms()
        with self.engine.begin() as conn:
            experiment_id = conn.execute(
                select(experiment_runs.c.experiment_id).where(experiment_runs.c.id == run_id)
            ).scalar()
            if experiment_id is None:
                raise ExperimentNotFoundError(
                    f"No experiment run with id {run_id!r}; the item was not saved."
                )
            tags = {"experiment_id": experiment_id, "run_id": run_id, "owner": self.owner}
            rows = _OutcomeRows(run_id, tags)
            recorded = [rows.add(outcome, now) for outcome in outcomes]
            # One statement per table for all of them: per-row statements cost more than the items.
            for table, values in (
                (conversations, rows.conversations),
                (messages, rows.messages),
                (usage, rows.usage),
                (experiment_outcomes, rows.outcomes),
            ):
                if values:
                    conn.execute(insert(table), values)
            conn.execute(update(experiment_runs).where(experiment_runs.c.id == run_id).values(updated_ms=now))
        return recorded

    def recorder(self, run_id: str) -> StoreRecorder:
        """What `run_experiment(recorder=...)` writes through."""
        return StoreRecorder(self, run_id)


def _run_record(row: Any) -> RunRecord:
    return RunRecord(
        id=row.id,
        experiment_id=row.experiment_id,
        status=row.status,
        stop_reason=row.stop_reason,
        dataset_version=row.dataset_version,
        total=row.total,
        done=int(row.done or 0),
        created_ms=row.created_ms,
        updated_ms=row.updated_ms,
    )


def _judge_row(score: Any, now: int, tags: dict[str, str]) -> dict[str, Any]:
    tokens = score.judge_usage
    provider, _, model = (score.judge_model or "").partition("/")
    return {
        "created_ms": score.judge_ms or now,
        "conversation_id": None,
        "provider": provider,
        "api": "",
        "model": model or provider,
        "input_tokens": tokens.input_tokens,
        "output_tokens": tokens.output_tokens,
        "cache_read_tokens": tokens.cache_read_tokens,
        "cache_write_tokens": tokens.cache_write_tokens,
        "reasoning_tokens": tokens.reasoning_tokens,
        # The judge's dollars are known only in total; the split stays 0 rather than guessed.
        "cost_input": 0.0,
        "cost_output": 0.0,
        "cost_cache_read": 0.0,
        "cost_cache_write": 0.0,
        "cost_total": score.judge_cost or 0.0,
        "price_known": score.judge_cost is not None,
        "latency_ms": None,
        "ttft_ms": None,
        "error": None,
        "stop_reason": "judge",
        **tags,
    }


class _OutcomeRows:
    """The rows of outcomes that are stored together, table by table."""

    def __init__(self, run_id: str, tags: dict[str, str]) -> None:
        self.run_id = run_id
        self.tags = tags
        self.conversations: list[dict[str, Any]] = []
        self.messages: list[dict[str, Any]] = []
        self.usage: list[dict[str, Any]] = []
        self.outcomes: list[dict[str, Any]] = []

    def add(self, outcome: ItemOutcome, now: int) -> ItemOutcome:
        """Add one outcome's rows; returns it with its conversation's id."""
        conversation_id = str(uuid.uuid4())
        replies = [m for m in outcome.messages if isinstance(m, AssistantMessage | AssistantMessageToolCall)]
        self.conversations.append(
            {
                "id": conversation_id,
                "title": f"{outcome.variant} · {outcome.item_id}",
                "provider": replies[0].provider if replies else "",
                "model": replies[0].model if replies else "",
                "system_prompt": "",
                "created_ms": now,
                "updated_ms": now,
                "hidden": True,
                "owner": self.tags["owner"],
            }
        )
        self.messages += [
            {
                "conversation_id": conversation_id,
                "position": position,
                "role": message.role,
                "data": message.to_json(),
                "created_ms": now,
            }
            for position, message in enumerate(outcome.messages)
        ]
        self.usage += [
            {**usage_row(reply, None, conversation_id), **self.tags, "price_known": reply.cost is not None}
            for reply in replies
        ]
        self.usage += [
            _judge_row(score, now, self.tags) for score in outcome.scores if score.judge_usage is not None
        ]
        stored = outcome.model_copy(update={"messages": [], "conversation_id": conversation_id})
        self.outcomes.append(
            {
                "run_id": self.run_id,
                "item_id": outcome.item_id,
                "variant": outcome.variant,
                "repeat": outcome.repeat,
                "conversation_id": conversation_id,
                "passed": outcome.passed,
                "cost": outcome.cost,
                "latency_ms": outcome.latency_ms,
                "data": model_json(stored, by_alias=True),
                "created_ms": now,
            }
        )
        return outcome.model_copy(update={"conversation_id": conversation_id})


class StoreRecorder:
    """A `RunRecorder` on the store: what finished before a restart is read back, never re-run."""

    def __init__(self, store: ExperimentStore, run_id: str) -> None:
        self.store = store
        self.run_id = run_id

    def finished(self) -> list[ItemOutcome]:
        return self.store.outcomes(self.run_id)

    def record(self, outcomes: Sequence[ItemOutcome]) -> list[ItemOutcome]:
        return self.store.record(self.run_id, outcomes)

    def finish(self, status: RunStatus, stop_reason: str | None) -> None:
        self.store.set_status(self.run_id, status, stop_reason)


def resume_experiment(
    store: ExperimentStore, run_id: str, variants: Sequence[Variant] = (), **options: Unpack[RunOptions]
) -> ExperimentResult:
    """Run what a stored run has left (after a Stop or a restart); finished items are not run again.

    `variants` replace stored ones by name (a client object or a key is never stored); `options`:
    see `RunOptions`.
    """
    from yiem.experiments._runner import run_spec

    spec = store.load_spec(run_id, variants)
    store.set_status(run_id, "running")
    return run_spec(spec, store.recorder(run_id), **options)
