"""Experiments: the same tasks across models, prompts and tools, scored and compared.

`from yiem.experiments import Dataset, Variant, scorers, run_experiment` runs one from a script or a
notebook; the Experiments page calls the same functions.
"""

from yiem.experiments import scorers
from yiem.experiments._dataset import Dataset, DatasetError, DatasetItem, conversation_up_to
from yiem.experiments._draft import BackgroundRun, ExperimentDraft
from yiem.experiments._item_run import run_item, user_message
from yiem.experiments._outcome import ItemOutcome, OutcomeKey, Score
from yiem.experiments._replay import ReplyDiff, reply_diffs
from yiem.experiments._results import (
    Comparison,
    ExperimentResult,
    ItemChange,
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
    "RAY_ADDRESS_ENV",
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
    "ReplyDiff",
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
    "conversation_up_to",
    "mcnemar_exact",
    "mean_score",
    "pareto_front",
    "parse_verdict",
    "percentile",
    "reply_diffs",
    "resume_experiment",
    "run_experiment",
    "run_item",
    "scorers",
    "summarize",
    "user_message",
    "wilson_interval",
]
