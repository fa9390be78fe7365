"""Human review of a run's cells: each person's thumbs, 1-5 rating, comment and correction, and the queue.

A person sees others' comments and corrections only once every assigned reviewer has reviewed every
cell, or the experiment's owner has opened them; their own are always theirs to see.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.sql import ColumnElement

from yiem.experiments._access import Access
from yiem.experiments._dataset import Dataset
from yiem.experiments._outcome import ItemOutcome, OutcomeKey
from yiem.experiments._review_model import Review
from yiem.experiments._storage import ExperimentRecord, ExperimentStore
from yiem.identity import LOCAL_OWNER, Owner
from yiem.store import (
    ReviewError,
    StoreError,
    check_rating,
    experiment_outcomes,
    experiment_reviews,
    experiments,
    review_assignments,
    review_reveals,
)
from yiem.types import replace_lone_surrogates


class ReviewPermissionError(StoreError):
    """Only the experiment's owner (or an admin) may assign reviewers or open everyone's comments early."""


class ReviewerCannotSeeError(ReviewError):
    """Someone asked to review a run whose experiment is not shared with them; nobody was asked."""


@dataclass(frozen=True)
class QueueCell:
    """The next cell to review: its outcome, its variant's blind name, and how many are left."""

    outcome: ItemOutcome
    blind_name: str
    left: int
    total: int


def blind_names(run_id: str, variants: Sequence[str]) -> dict[str, str]:
    """Variant name to "Variant A", "Variant B"... in an order fixed per run but unrelated to the names."""
    order = sorted(variants, key=lambda name: hashlib.sha256(f"{run_id}:{name}".encode()).hexdigest())
    return {name: f"Variant {_letters(index)}" for index, name in enumerate(order)}


def _letters(index: int) -> str:
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = chr(ord("A") + rest) + name
    return name


def _now_ms() -> int:
    return int(time.time() * 1000)


class ReviewStore:
    """One person's reviews of runs, and the run owner's assignments, on the store's engine."""

    def __init__(self, engine: Engine, person: Owner = LOCAL_OWNER) -> None:
        self.engine = engine
        self.person = person
        # Reviews follow the experiment's sharing: a run this person cannot see is not theirs to review.
        self._experiments = ExperimentStore(engine, person.id, admin=person.is_admin)

    def _seen(self, run_id: str) -> None:
        self._experiments.get_run(run_id)  # ExperimentNotFoundError when it is not shared with them

    def _experiment(self, run_id: str) -> ExperimentRecord:
        """The experiment the run belongs to (ExperimentNotFoundError when it is not shared with them)."""
        return self._experiments.get_experiment(self._experiments.get_run(run_id).experiment_id)

    # writing

    def save(
        self,
        run_id: str,
        key: OutcomeKey,
        *,
        passed: bool,
        rating: int | None = None,
        comment: str = "",
        expected: str = "",
        use_expected: bool = False,
    ) -> Review:
        """Keep this person's review of a cell, replacing their earlier one."""
        self._seen(run_id)
        item_id, variant, repeat = key
        check_rating(rating)
        review = Review(
            item_id=item_id,
            variant=variant,
            repeat=repeat,
            reviewer=self.person.id,
            reviewer_name=self.person.label,
            passed=passed,
            rating=rating,
            comment=replace_lone_surrogates(comment.strip()),
            expected=replace_lone_surrogates(expected.strip()),
            use_expected=use_expected and bool(expected.strip()),
        )
        cell = (
            (experiment_outcomes.c.run_id == run_id)
            & (experiment_outcomes.c.item_id == item_id)
            & (experiment_outcomes.c.variant == variant)
            & (experiment_outcomes.c.repeat == repeat)
        )
        values = review.model_dump(exclude={"item_id", "variant", "repeat", "reviewer", "hidden"})
        now = _now_ms()
        with self.engine.begin() as conn:
            if conn.execute(select(experiment_outcomes.c.run_id).where(cell)).first() is None:
                raise ReviewError(f"This run has no result for item {item_id!r} under {variant!r} to review.")
            mine = self._mine(run_id, key)
            if conn.execute(update(experiment_reviews).where(mine).values(updated_ms=now, **values)).rowcount:
                return review
            conn.execute(
                insert(experiment_reviews).values(
                    run_id=run_id,
                    item_id=item_id,
                    variant=variant,
                    repeat=repeat,
                    reviewer=self.person.id,
                    created_ms=now,
                    updated_ms=now,
                    **values,
                )
            )
        return review

    def assign(self, run_id: str, reviewers: Sequence[Owner]) -> None:
        """Ask these people to review the run (the experiment's owner only); replaces the earlier list.

        Everyone asked must be able to see the run: someone it is not shared with would be counted as
        a reviewer who never finishes, keeping everyone's comments hidden for good."""
        record = self._owner_only(run_id, "ask people to review its runs")
        blind = [person for person in reviewers if not self._sees(person, record.id)]
        if blind:
            who = ", ".join(person.label or person.id for person in blind)
            raise ReviewerCannotSeeError(
                f"The experiment {record.name!r} is not shared with {who}, so they cannot see this run to "
                "review it; nobody was asked. Share it with the team (to read is enough), then ask again."
            )
        now = _now_ms()
        with self.engine.begin() as conn:
            conn.execute(delete(review_assignments).where(review_assignments.c.run_id == run_id))
            for person in {person.id: person for person in reviewers}.values():
                conn.execute(
                    insert(review_assignments).values(
                        run_id=run_id,
                        reviewer=person.id,
                        reviewer_name=person.label,
                        assigned_by=self.person.id,
                        created_ms=now,
                    )
                )

    def reveal(self, run_id: str) -> None:
        """Open every reviewer's comments now (the experiment's owner only)."""
        self._owner_only(run_id, "open everyone's comments early")
        with self.engine.begin() as conn:
            if conn.execute(select(review_reveals.c.run_id).where(review_reveals.c.run_id == run_id)).first():
                return
            conn.execute(
                insert(review_reveals).values(run_id=run_id, revealed_by=self.person.id, created_ms=_now_ms())
            )

    # reading

    def may_manage(self, run_id: str) -> bool:
        """Whether this person may ask reviewers and open comments: the experiment's owner, or an admin."""
        return self._experiments.may_manage(self._experiment(run_id))

    def assigned(self, run_id: str) -> list[Owner]:
        """The people asked to review the run, in the order asked."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(review_assignments.c.reviewer, review_assignments.c.reviewer_name)
                .where(review_assignments.c.run_id == run_id)
                .order_by(review_assignments.c.created_ms, review_assignments.c.reviewer)
            ).all()
        return [Owner(id=row.reviewer, label=row.reviewer_name) for row in rows]

    def reviews(self, run_id: str, outcomes: Sequence[ItemOutcome]) -> list[Review]:
        """Everyone's reviews of the run; others' comments and corrections blanked until they are open."""
        self._seen(run_id)
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(experiment_reviews)
                .where(experiment_reviews.c.run_id == run_id)
                .order_by(experiment_reviews.c.created_ms, experiment_reviews.c.reviewer)
            ).all()
        found = [
            Review.model_validate(
                {name: getattr(row, name) for name in Review.model_fields if name != "hidden"}
            )
            for row in rows
        ]
        if self._comments_open(run_id, found, outcomes):
            return found
        return [
            review
            if review.reviewer == self.person.id
            else review.model_copy(update={"comment": "", "expected": "", "hidden": True})
            for review in found
        ]

    def comments_open(self, run_id: str, outcomes: Sequence[ItemOutcome]) -> bool:
        """Whether this person sees everyone's comments (all reviewers done, or opened by the owner)."""
        self._seen(run_id)
        return self._comments_open(run_id, self._verdicts(run_id), outcomes)

    def _verdicts(self, run_id: str) -> list[Review]:
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(experiment_reviews.c.item_id, experiment_reviews.c.variant)
                .add_columns(
                    experiment_reviews.c.repeat, experiment_reviews.c.reviewer, experiment_reviews.c.passed
                )
                .where(experiment_reviews.c.run_id == run_id)
            ).all()
        return [
            Review(
                item_id=row.item_id,
                variant=row.variant,
                repeat=row.repeat,
                reviewer=row.reviewer,
                passed=row.passed,
            )
            for row in rows
        ]

    def queue(
        self, run_id: str, outcomes: Sequence[ItemOutcome], variants: Sequence[str]
    ) -> QueueCell | None:
        """The next cell this person has not reviewed, in the run's order; None when they are done."""
        self._seen(run_id)
        done = {review.key for review in self._verdicts(run_id) if review.reviewer == self.person.id}
        left = [outcome for outcome in outcomes if outcome.key not in done]
        if not left:
            return None
        names = blind_names(run_id, variants)
        first = left[0]
        return QueueCell(
            outcome=first,
            blind_name=names.get(first.variant, first.variant),
            left=len(left),
            total=len(outcomes),
        )

    def corrected_expectations(self, run_id: str, outcomes: Sequence[ItemOutcome]) -> dict[str, str]:
        """Item id to a kept "what it should have said" this person may read (others' once they are open)."""
        readable = self.reviews(run_id, outcomes)  # others' words are blank until open
        return {
            review.item_id: review.expected for review in readable if review.use_expected and review.expected
        }

    # rules

    def _comments_open(self, run_id: str, found: Sequence[Review], outcomes: Sequence[ItemOutcome]) -> bool:
        with self.engine.connect() as conn:
            if conn.execute(select(review_reveals.c.run_id).where(review_reveals.c.run_id == run_id)).first():
                return True
        # The reader counts too: someone who has not finished never sees the others' words early.
        people = {person.id for person in self.assigned(run_id)} | {review.reviewer for review in found}
        people.add(self.person.id)
        cells = {outcome.key for outcome in outcomes}
        by_person: dict[str, set[OutcomeKey]] = {}
        for review in found:
            by_person.setdefault(review.reviewer, set()).add(review.key)
        return bool(cells) and all(cells <= by_person.get(person, set()) for person in people)

    def _owner_only(self, run_id: str, action: str) -> ExperimentRecord:
        # The experiment's owner, not whoever ran it: with editing shared, a teammate's run is still in
        # the owner's experiment; and who ran it is not known from its transcripts until one is stored.
        record = self._experiment(run_id)
        if not self._experiments.may_manage(record):
            raise ReviewPermissionError(
                f"Only {record.owner}, who owns the experiment {record.name!r}, or an admin may {action}; "
                "nothing was changed."
            )
        return record

    def _sees(self, person: Owner, experiment_id: str) -> bool:
        # The experiments' one visibility rule, asked for the person being assigned.
        with self.engine.connect() as conn:
            found = conn.execute(
                select(experiments.c.id).where(experiments.c.id == experiment_id, Access(person.id).visible())
            ).first()
        return found is not None

    def _mine(self, run_id: str, key: OutcomeKey) -> ColumnElement[bool]:
        item_id, variant, repeat = key
        return (
            (experiment_reviews.c.run_id == run_id)
            & (experiment_reviews.c.item_id == item_id)
            & (experiment_reviews.c.variant == variant)
            & (experiment_reviews.c.repeat == repeat)
            & (experiment_reviews.c.reviewer == self.person.id)
        )


def with_corrections(dataset: Dataset, corrections: dict[str, str]) -> tuple[Dataset, int]:
    """The dataset with each corrected item's `expected` set to the kept correction; how many changed."""
    changed = 0
    items = []
    for item in dataset.items:
        kept = corrections.get(item.id)
        if kept is not None and kept != item.expected:
            item = item.model_copy(update={"expected": kept})
            changed += 1
        items.append(item)
    return dataset.model_copy(update={"items": items}), changed
