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
from typing import Any

from pydantic import ValidationError
from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.engine import Connection, Engine

from yiem.experiments._access import (
    Access,
    Sharing,
    added_chat_items,
    chat_items,
    check_sharing,
    with_stored_chat_items,
)
from yiem.experiments._outcome import ItemOutcome
from yiem.experiments._outcome_rows import OutcomeRows
from yiem.experiments._results import ExperimentResult, RunStatus
from yiem.experiments._spec import RunSpec
from yiem.experiments._variant import Variant
from yiem.identity import LOCAL_OWNER_ID
from yiem.store import (
    PRIVATE,
    ConversationStore,
    StoreError,
    conversations,
    experiment_outcomes,
    experiment_runs,
    experiments,
    messages,
    usage,
)
from yiem.types import (
    AgentMessage,
    model_json,
    replace_lone_surrogates,
)


class ExperimentNotFoundError(StoreError):
    """No experiment or run has this id (deleted, or a stale link)."""


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class ExperimentRecord:
    """A saved experiment: its name, the page's draft (dataset, variants, scorers, settings), whose it
    is and how it is shared."""

    id: str
    name: str
    data: dict[str, Any]
    updated_ms: int
    owner: str = LOCAL_OWNER_ID
    sharing: Sharing = "private"

    @property
    def chat_items(self) -> dict[str, str]:
        """Its items taken from conversations: item id -> whose conversation."""
        return chat_items(self.data)


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


def _blob(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False)


def _record(row: Any) -> ExperimentRecord:
    return ExperimentRecord(row.id, row.name, json.loads(row.data), row.updated_ms, row.owner, row.sharing)


class ExperimentStore:
    """Reads and writes experiments, runs and outcomes on the store's engine, as one person.

    `owner` sees their own experiments and those shared with the team; an `admin` may also rename,
    delete and re-share the shared ones.
    """

    def __init__(self, engine: Engine, owner: str = LOCAL_OWNER_ID, *, admin: bool = False) -> None:
        # The transcripts and usage rows of a run are its runner's, whoever owns the experiment.
        self.engine = engine
        self.owner = owner
        self.access = Access(owner, admin)
        self.conversations = ConversationStore(engine, owner)

    # experiments

    def save_experiment(
        self,
        name: str,
        data: dict[str, Any],
        experiment_id: str | None = None,
        *,
        confirm_chat_items: bool = False,
    ) -> str:
        """Create (this person's, private) or update an experiment's draft; returns its id.

        Items from this person's conversations added to a shared experiment are saved only with
        `confirm_chat_items` (the team sees them at once); the stored record of whose chats items came
        from is kept whatever `data` says of it.
        """
        now = _now_ms()
        name = replace_lone_surrogates(name)  # JSON's "\ud800" cannot be written as UTF-8
        data = replace_lone_surrogates(data)
        with self.engine.begin() as conn:
            if experiment_id is not None:
                row = conn.execute(select(experiments).where(experiments.c.id == experiment_id)).first()
                if row is not None:
                    data = self._checked_update(conn, row, name, data, confirm_chat_items)
                    conn.execute(
                        update(experiments)
                        .where(experiments.c.id == experiment_id)
                        .values(name=name, data=_blob(data), updated_ms=now)
                    )
                    return experiment_id
            new_id = experiment_id or uuid.uuid4().hex
            conn.execute(
                insert(experiments).values(
                    id=new_id, name=name, data=_blob(data), created_ms=now, updated_ms=now, owner=self.owner
                )
            )
        return new_id

    def _checked_update(
        self, conn: Connection, row: Any, name: str, data: dict[str, Any], confirmed: bool
    ) -> dict[str, Any]:
        """`data` as it may be stored over the row, or the reason it may not (`StoreError`)."""
        visible = select(experiments.c.id).where(experiments.c.id == row.id, self.access.visible())
        if not conn.execute(visible).first():
            raise _missing(row.id)
        self.access.require_edit(row.owner, row.sharing, row.name)
        if name != row.name:
            self.access.require_manage(row.owner, row.name, "rename")
        stored = json.loads(row.data)
        data = with_stored_chat_items(stored, data)
        if row.sharing != PRIVATE:
            added = added_chat_items(stored, data)
            self.access.require_chat_confirmation(added, row.name, confirmed, adding=True)
        return data

    def experiment_named(self, name: str) -> str:
        """The id of this person's most recent experiment with this name, created empty when there is none."""
        name = replace_lone_surrogates(name)  # as `save_experiment` stores it
        with self.engine.connect() as conn:
            found = conn.execute(
                select(experiments.c.id)
                .where(experiments.c.name == name, experiments.c.owner == self.owner)
                .order_by(experiments.c.updated_ms.desc())
                .limit(1)
            ).scalar()
        return str(found) if found is not None else self.save_experiment(name, {})

    def list_experiments(self) -> list[ExperimentRecord]:
        """The ones this person sees (their own, the team's shared ones), most recently edited first."""
        query = select(experiments).where(self.access.visible()).order_by(experiments.c.updated_ms.desc())
        with self.engine.connect() as conn:
            return [_record(row) for row in conn.execute(query)]

    def saved_variants(self) -> list[tuple[str, Variant]]:
        """Every visible experiment's variants as `(experiment name, variant)`, most recently edited first."""
        found: list[tuple[str, Variant]] = []
        for record in self.list_experiments():
            for data in record.data.get("variants", []):
                try:
                    found.append((record.name, Variant.model_validate(data)))
                except ValidationError:
                    continue  # a variant this version cannot read is not offered, not an error
        return found

    def get_experiment(self, experiment_id: str) -> ExperimentRecord:
        """The experiment, if this person sees it; else `ExperimentNotFoundError` (never told apart)."""
        with self.engine.connect() as conn:
            row = conn.execute(
                select(experiments).where(experiments.c.id == experiment_id, self.access.visible())
            ).first()
        if row is None:
            raise _missing(experiment_id)
        return _record(row)

    def may_edit(self, record: ExperimentRecord) -> bool:
        """Whether this person may change the experiment's draft and run it."""
        return self.access.may_edit(record.owner, record.sharing)

    def may_manage(self, record: ExperimentRecord) -> bool:
        """Whether this person may rename, delete or re-share the experiment."""
        return self.access.may_manage(record.owner)

    def share(self, experiment_id: str, sharing: str, *, confirm_chat_items: bool = False) -> None:
        """Share the experiment with the team to read or edit, or make it private again (owner or admin).

        Items taken from conversations are shared only when the person whose chats they are confirms.
        """
        wanted = check_sharing(sharing)
        record = self.get_experiment(experiment_id)
        self.access.require_manage(record.owner, record.name, "share")
        if wanted != "private":
            self.access.require_chat_confirmation(record.chat_items, record.name, confirm_chat_items)
        with self.engine.begin() as conn:
            conn.execute(update(experiments).where(experiments.c.id == experiment_id).values(sharing=wanted))

    def copy_experiment(self, experiment_id: str, name: str | None = None) -> str:
        """A copy of a visible experiment's draft as this person's own (private); its runs stay behind."""
        record = self.get_experiment(experiment_id)
        return self.save_experiment(name or f"{record.name} (copy)", record.data)

    def delete_experiment(self, experiment_id: str) -> None:
        """Remove the experiment, its runs and outcomes (owner or admin); transcripts and usage rows stay."""
        record = self.get_experiment(experiment_id)
        self.access.require_manage(record.owner, record.name, "delete")
        with self.engine.begin() as conn:
            runs = select(experiment_runs.c.id).where(experiment_runs.c.experiment_id == experiment_id)
            conn.execute(delete(experiment_outcomes).where(experiment_outcomes.c.run_id.in_(runs)))
            conn.execute(delete(experiment_runs).where(experiment_runs.c.experiment_id == experiment_id))
            conn.execute(delete(experiments).where(experiments.c.id == experiment_id))

    # runs

    def create_run(self, spec: RunSpec, experiment_id: str | None = None) -> str:
        """Store a new run of `spec` (under the experiment named in it when no id is given)."""
        experiment_id = experiment_id or self.experiment_named(spec.experiment or "Untitled")
        record = self.get_experiment(experiment_id)
        self.access.require_edit(record.owner, record.sharing, record.name)
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
                    owner=self.owner,
                )
            )
        return spec.run_id

    def list_runs(self, experiment_id: str | None = None) -> list[RunRecord]:
        """Newest first, with how many outcomes each has."""
        done = (
            select(func.count()).where(experiment_outcomes.c.run_id == experiment_runs.c.id).scalar_subquery()
        )
        query = (
            select(experiment_runs, done.label("done"))
            .where(experiment_runs.c.id.in_(self.access.visible_runs()))
            .order_by(experiment_runs.c.created_ms.desc())
        )
        if experiment_id is not None:
            query = query.where(experiment_runs.c.experiment_id == experiment_id)
        with self.engine.connect() as conn:
            return [_run_record(row) for row in conn.execute(query)]

    def get_run(self, run_id: str) -> RunRecord:
        runs = [r for r in self.list_runs() if r.id == run_id]
        if not runs:
            raise ExperimentNotFoundError(f"No experiment run with id {run_id!r}{_NOT_SHARED}.")
        return runs[0]

    def load_spec(self, run_id: str, variants: Sequence[Variant] = ()) -> RunSpec:
        """The run's stored spec; `variants` replace stored ones of the same name (client objects, keys)."""
        with self.engine.connect() as conn:
            blob = conn.execute(
                select(experiment_runs.c.spec).where(
                    experiment_runs.c.id == run_id, experiment_runs.c.id.in_(self.access.visible_runs())
                )
            ).scalar()
        if blob is None:
            raise ExperimentNotFoundError(f"No experiment run with id {run_id!r}{_NOT_SHARED}.")
        spec = RunSpec.model_validate_json(blob)
        given = {variant.name: variant for variant in variants}
        spec.variants = [given.get(variant.name, variant) for variant in spec.variants]
        return spec

    def set_status(self, run_id: str, status: RunStatus, stop_reason: str | None = None) -> None:
        """Mark the run (stopped, finished, running again) if this person may edit its experiment."""
        with self.engine.begin() as conn:
            self._editable_run(conn, run_id, "its status was not changed")
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
                    experiment_outcomes.c.run_id == run_id,
                    experiment_outcomes.c.run_id.in_(self.access.visible_runs()),
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
            experiment_id = self._editable_run(conn, run_id, "the item was not saved")
            # The rows written are the runner's (this person's), whoever owns the experiment.
            tags = {"experiment_id": experiment_id, "run_id": run_id, "owner": self.owner}
            rows = OutcomeRows(run_id, tags)
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

    def _editable_run(self, conn: Connection, run_id: str, consequence: str) -> str:
        """The run's experiment id, if this person sees it and may edit it (the experiment's rule)."""
        row = conn.execute(
            select(experiments.c.id, experiments.c.owner, experiments.c.sharing, experiments.c.name)
            .join(experiment_runs, experiment_runs.c.experiment_id == experiments.c.id)
            .where(experiment_runs.c.id == run_id, self.access.visible())
        ).first()
        if row is None:
            raise ExperimentNotFoundError(
                f"No experiment run with id {run_id!r}{_NOT_SHARED}; {consequence}."
            )
        self.access.require_edit(row.owner, row.sharing, row.name)
        return str(row.id)

    def recorder(self, run_id: str) -> StoreRecorder:
        """What `run_experiment(recorder=...)` writes through."""
        return StoreRecorder(self, run_id)


_NOT_SHARED = ", or its experiment is not shared with you"


def _missing(experiment_id: str) -> ExperimentNotFoundError:
    # Someone else's private experiment reads as a deleted one: its existence is not told either.
    return ExperimentNotFoundError(
        f"This experiment no longer exists or is not shared with you (it was deleted, or it is someone "
        f"else's and private; id {experiment_id})."
    )


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
