"""Resuming a stored run: the store's spec and finished items, handed back to the runner."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Unpack

from yiem.experiments._results import ExperimentResult
from yiem.experiments._runner import RunOptions, run_spec
from yiem.experiments._storage import ExperimentStore
from yiem.experiments._variant import Variant


def resume_experiment(
    store: ExperimentStore, run_id: str, variants: Sequence[Variant] = (), **options: Unpack[RunOptions]
) -> ExperimentResult:
    """Run what a stored run has left (after a Stop or a restart); finished items are not run again.

    `variants` replace stored ones by name (a client object or a key is never stored); `options`:
    see `RunOptions`. Only someone who may edit the run's experiment resumes it (`set_status` refuses
    the others before anything runs); what the resume stores is theirs, as any run's is its runner's.
    """
    spec = store.load_spec(run_id, variants)
    store.set_status(run_id, "running")
    return run_spec(spec, store.recorder(run_id), **options)
