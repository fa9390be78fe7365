"""Experiments: the same tasks across models, prompts and tools, scored and compared.

`from yiem.experiments import Dataset, Variant, scorers, run_experiment` runs one from a script or a
notebook; the Experiments page calls the same functions.
"""

from yiem.experiments import scorers
from yiem.experiments._dataset import Dataset, DatasetError, DatasetItem
from yiem.experiments._draft import BackgroundRun, ExperimentDraft
from yiem.experiments._example import EXAMPLE_NAME, NO_JUDGE, TAB_HELP, example_experiment, is_example
from yiem.experiments._item_run import run_item, user_message
from yiem.experiments._outcome import ItemOutcome, OutcomeKey, Score
from yiem.experiments._results import (
    Comparison,
    ExperimentResult,
    ItemChange,
    RunCost,
    RunStatus,
    VariantSummary,
    compare,
    mean_score,
    pareto_front,
    summarize,
)
from yiem.experiments._rubric import Judge, parse_verdict
from yiem.experiments._runner import (
    MemoryRecorder,
    Progress,
    RunRecorder,
    TaskExecutor,
    ThreadExecutor,
    run_experiment,
)
from yiem.experiments._spec import DEFAULT_CONCURRENCY, RAY_ADDRESS_ENV, ExperimentError, RunSpec, check_spec
from yiem.experiments._stats import StatisticsError, mcnemar_exact, percentile, wilson_interval
from yiem.experiments._storage import (
    ExperimentNotFoundError,
    ExperimentRecord,
    ExperimentStore,
    RunRecord,
    StoreRecorder,
    resume_experiment,
)
from yiem.experiments._variant import CUSTOM_PROVIDER, Variant, VariantError
from yiem.experiments.scorers import AnyScorer, ScorerError, ScorerSpecError

__all__ = [
    "CUSTOM_PROVIDER",
    "DEFAULT_CONCURRENCY",
    "EXAMPLE_NAME",
    "NO_JUDGE",
    "RAY_ADDRESS_ENV",
    "TAB_HELP",
    "AnyScorer",
    "BackgroundRun",
    "Comparison",
    "Dataset",
    "DatasetError",
    "DatasetItem",
    "ExperimentDraft",
    "ExperimentError",
    "ExperimentNotFoundError",
    "ExperimentRecord",
    "ExperimentResult",
    "ExperimentStore",
    "ItemChange",
    "ItemOutcome",
    "Judge",
    "MemoryRecorder",
    "OutcomeKey",
    "Progress",
    "RunCost",
    "RunRecord",
    "RunRecorder",
    "RunSpec",
    "RunStatus",
    "Score",
    "ScorerError",
    "ScorerSpecError",
    "StatisticsError",
    "StoreRecorder",
    "TaskExecutor",
    "ThreadExecutor",
    "Variant",
    "VariantError",
    "VariantSummary",
    "check_spec",
    "compare",
    "example_experiment",
    "is_example",
    "mcnemar_exact",
    "mean_score",
    "pareto_front",
    "parse_verdict",
    "percentile",
    "resume_experiment",
    "run_experiment",
    "run_item",
    "scorers",
    "summarize",
    "user_message",
    "wilson_interval",
]
