"""Experiments: the same tasks across models, prompts and tools, scored and compared.

`from yiem.experiments import Dataset, Variant, scorers, run_experiment` runs one from a script or a
notebook; the Experiments page calls the same functions.
"""

from yiem.experiments import scorers
from yiem.experiments._access import (
    SHARING_WORDS,
    SHARINGS,
    ChatItemsNeedConfirmationError,
    ExperimentAccessError,
    ExperimentOwnerError,
    Sharing,
)
from yiem.experiments._agreement import (
    HUMAN_SCORER,
    Agreement,
    Disagreement,
    HumanVerdict,
    ScorerFigures,
    disagreements,
    human_verdicts,
    judge_agreement,
    reviewer_agreement,
    scorer_comparison,
    scorer_figures,
    with_human_scores,
)
from yiem.experiments._dataset import Dataset, DatasetError, DatasetItem, conversation_up_to
from yiem.experiments._draft import BackgroundRun, ExperimentDraft
from yiem.experiments._example import EXAMPLE_NAME, NO_JUDGE, TAB_HELP, example_experiment, is_example
from yiem.experiments._item_run import run_item, user_message
from yiem.experiments._junit import experiment_junit_xml
from yiem.experiments._outcome import ItemOutcome, OutcomeKey, Score
from yiem.experiments._replay import (
    OriginalReply,
    ReplyDiff,
    diff_lines,
    original_diffs,
    reply_diffs,
    up_to_here,
)
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
from yiem.experiments._resume import resume_experiment
from yiem.experiments._review_model import Review
from yiem.experiments._reviews import (
    QueueCell,
    ReviewerCannotSeeError,
    ReviewPermissionError,
    ReviewStore,
    blind_names,
    with_corrections,
)
from yiem.experiments._rubric import Judge, parse_verdict
from yiem.experiments._runner import (
    MemoryRecorder,
    Progress,
    RunOptions,
    RunRecorder,
    TaskExecutor,
    ThreadExecutor,
    run_experiment,
    run_spec,
)
from yiem.experiments._simulated_user import (
    GOAL_MET,
    SimulatedUser,
    SimulatedUserError,
    simulated_user,
)
from yiem.experiments._spec import DEFAULT_CONCURRENCY, RAY_ADDRESS_ENV, ExperimentError, RunSpec, check_spec
from yiem.experiments._spec_file import (
    SPEC_FORMAT,
    SpecFile,
    SpecFileError,
    SpecTooNewError,
    load_spec_file,
    parse_spec_file,
    spec_file_json,
    spec_schema,
)
from yiem.experiments._stats import StatisticsError, mcnemar_exact, percentile, wilson_interval
from yiem.experiments._storage import (
    ExperimentNotFoundError,
    ExperimentRecord,
    ExperimentStore,
    RunRecord,
    StoreRecorder,
)
from yiem.experiments._variant import CUSTOM_PROVIDER, Variant, VariantError
from yiem.experiments.scorers import AnyScorer, ScorerError, ScorerSpecError
from yiem.store import ReviewError

__all__ = [
    "CUSTOM_PROVIDER",
    "DEFAULT_CONCURRENCY",
    "EXAMPLE_NAME",
    "GOAL_MET",
    "HUMAN_SCORER",
    "NO_JUDGE",
    "RAY_ADDRESS_ENV",
    "SHARINGS",
    "SHARING_WORDS",
    "SPEC_FORMAT",
    "TAB_HELP",
    "Agreement",
    "AnyScorer",
    "BackgroundRun",
    "ChatItemsNeedConfirmationError",
    "Comparison",
    "Dataset",
    "DatasetError",
    "DatasetItem",
    "Disagreement",
    "ExperimentAccessError",
    "ExperimentDraft",
    "ExperimentError",
    "ExperimentNotFoundError",
    "ExperimentOwnerError",
    "ExperimentRecord",
    "ExperimentResult",
    "ExperimentStore",
    "HumanVerdict",
    "ItemChange",
    "ItemOutcome",
    "Judge",
    "MemoryRecorder",
    "OriginalReply",
    "OutcomeKey",
    "Progress",
    "QueueCell",
    "ReplyDiff",
    "Review",
    "ReviewError",
    "ReviewPermissionError",
    "ReviewStore",
    "ReviewerCannotSeeError",
    "RunCost",
    "RunOptions",
    "RunRecord",
    "RunRecorder",
    "RunSpec",
    "RunStatus",
    "Score",
    "ScorerError",
    "ScorerFigures",
    "ScorerSpecError",
    "Sharing",
    "SimulatedUser",
    "SimulatedUserError",
    "SpecFile",
    "SpecFileError",
    "SpecTooNewError",
    "StatisticsError",
    "StoreRecorder",
    "TaskExecutor",
    "ThreadExecutor",
    "Variant",
    "VariantError",
    "VariantSummary",
    "blind_names",
    "check_spec",
    "compare",
    "conversation_up_to",
    "diff_lines",
    "disagreements",
    "example_experiment",
    "experiment_junit_xml",
    "human_verdicts",
    "is_example",
    "judge_agreement",
    "load_spec_file",
    "mcnemar_exact",
    "mean_score",
    "original_diffs",
    "pareto_front",
    "parse_spec_file",
    "parse_verdict",
    "percentile",
    "reply_diffs",
    "resume_experiment",
    "reviewer_agreement",
    "run_experiment",
    "run_item",
    "run_spec",
    "scorer_comparison",
    "scorer_figures",
    "scorers",
    "simulated_user",
    "spec_file_json",
    "spec_schema",
    "summarize",
    "up_to_here",
    "user_message",
    "wilson_interval",
    "with_corrections",
    "with_human_scores",
]
