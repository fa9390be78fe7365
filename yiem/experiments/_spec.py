"""A run's spec (dataset × variants × scorers × repeats, limits) as data, and what cannot run."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field

from yiem.errors import YiemError
from yiem.experiments._dataset import Dataset, DatasetItem
from yiem.experiments._variant import Variant
from yiem.experiments.scorers import AnyScorer, JsonSchema

DEFAULT_CONCURRENCY = 4
RAY_ADDRESS_ENV = "YIEM_RAY_ADDRESS"
BUDGET_REASON = "the run's budget was reached"


class ExperimentError(YiemError):
    """The experiment cannot run as set up (no variants, duplicate names, an empty dataset)."""


class RunFields(BaseModel):
    """What a run does, written once: RunSpec's fields but its id, and so an exported spec file's."""

    experiment: str = ""
    dataset: Dataset
    variants: list[Variant]
    scorers: list[AnyScorer] = Field(default_factory=list)
    repeats: int = Field(default=1, ge=1)
    concurrency: dict[str, int] = Field(default_factory=dict)
    budget_usd: float | None = Field(default=None, gt=0)
    # The model that plays the simulated users of items that have one (any provider).
    user_model: Variant | None = None


class RunSpec(RunFields):
    """Everything a run needs, as data: stored with the run so it can resume after a restart."""

    run_id: str = Field(default_factory=lambda: uuid.uuid4().hex)

    @classmethod
    def build(
        cls,
        dataset: Dataset,
        variants: Sequence[Variant],
        scorers: Sequence[AnyScorer] = (),
        *,
        name: str = "",
        repeats: int = 1,
        concurrency: int | Mapping[str, int] = DEFAULT_CONCURRENCY,
        budget_usd: float | None = None,
        user_model: Variant | None = None,
    ) -> RunSpec:
        """A new run: the dataset frozen as it is now, a copy of each variant (what the page edits
        next is not this run's), `concurrency` an int for every provider or one per provider."""
        return cls(
            experiment=name,
            dataset=dataset.frozen(),
            variants=[variant.model_copy() for variant in variants],
            scorers=list(scorers),
            repeats=repeats,
            concurrency={"*": concurrency} if isinstance(concurrency, int) else dict(concurrency),
            budget_usd=budget_usd,
            user_model=user_model.model_copy() if user_model is not None else None,
        )

    def limit(self, provider: str) -> int:
        """How many items of `provider` may run at once."""
        return max(1, self.concurrency.get(provider, self.concurrency.get("*", DEFAULT_CONCURRENCY)))

    def tasks(self) -> list[tuple[DatasetItem, int, Variant]]:
        """Item by item, each repeat, each variant: a Stop leaves whole rows of the matrix."""
        return [
            (item, repeat, variant)
            for item in self.dataset.items
            for repeat in range(self.repeats)
            for variant in self.variants
        ]


def check_spec(spec: RunSpec) -> None:
    """Refuse what cannot run, in words."""
    if not spec.variants:
        raise ExperimentError("Add at least one variant to run the experiment.")
    if not spec.dataset.items:
        raise ExperimentError("The dataset has no items: add some, or upload a CSV or JSONL file.")
    names = [variant.name for variant in spec.variants]
    duplicate = next((name for name in names if names.count(name) > 1), None)
    if duplicate is not None:
        raise ExperimentError(f"Two variants are named {duplicate!r}; give each its own name.")
    ids = [item.id for item in spec.dataset.items]
    duplicate = next((i for i in ids if ids.count(i) > 1), None) if len(set(ids)) != len(ids) else None
    if duplicate is not None:
        raise ExperimentError(f"Two dataset items have the id {duplicate!r}; each needs its own.")
    if spec.user_model is None and any(item.user is not None for item in spec.dataset.items):
        raise ExperimentError(
            "Some items have a simulated user (a persona and a goal): choose the model that plays the user."
        )
    scorer_names = [scorer.name for scorer in spec.scorers]
    if len(set(scorer_names)) != len(scorer_names):
        raise ExperimentError("Two scorers have the same name; name them apart (name=...).")
    for scorer in spec.scorers:
        if isinstance(scorer, JsonSchema) and scorer.json_schema is None:
            bare = [variant.name for variant in spec.variants if variant.response_schema is None]
            if bare:
                raise ExperimentError(
                    f"The scorer {scorer.name!r} checks each variant's response schema, and "
                    f"{', '.join(repr(name) for name in bare)} asks for none: give the scorer a JSON "
                    "Schema of its own, or each variant a response schema."
                )
