"""The example experiment a new person starts from: short questions, two system prompts, two scorers.

It runs offline on the embedded model (SmolLM2): ten items of a few words each, replies cut at a few
dozen tokens, and the rubric judged by the same model. On a quiet 2-core machine a Run takes about
9 s, on a busy one minutes (bench/example_experiment.py, docs/benchmarks.md).
"""

from __future__ import annotations

from yiem.experiments._dataset import Dataset, DatasetItem
from yiem.experiments._draft import ExperimentDraft
from yiem.experiments._variant import Variant
from yiem.experiments.scorers import AnyScorer, contains, rubric
from yiem.model_setup import LOCAL
from yiem.providers.local_llm import is_installed

EXAMPLE_NAME = "Example: short answers"
EXAMPLE_MAX_TOKENS = 24  # a word or a sentence: keeps the twenty replies and verdicts quick
SHORT_ANSWER = "Short answer"
PLAIN = "Plain"

# (input, expected, the kind of answer: the template var the first variant's system prompt names)
_ITEMS = [
    ("What is the capital of France?", "Paris", "city"),
    ("What is the capital of Japan?", "Tokyo", "city"),
    ("What colour is the sky on a clear day?", "blue", "colour"),
    ("What colour is fresh grass?", "green", "colour"),
    ("Which animal says moo?", "cow", "animal"),
    ("Which animal barks?", "dog", "animal"),
    ("What is the opposite of hot?", "cold", "word"),
    ("What is frozen water called?", "ice", "word"),
    ("Which planet do we live on?", "Earth", "planet"),
    ("What day comes after Monday?", "Tuesday", "day"),
]

TAB_HELP = {
    "dataset": (
        "The dataset is the list of tasks: each item's input is sent as the user's message, and its "
        "expected answer is what the scorers check against. The column `kind` is a template var: a "
        "variant's system prompt can name it as {kind}."
    ),
    "variants": (
        "A variant is one way of doing the tasks: a model and its settings. These two differ only in "
        "their system prompt, so the results show what the prompt changes."
    ),
    "scorers": (
        "A scorer grades every reply from 0 to 1: one checks by a rule (the expected word is in the "
        "reply), the other asks a model to judge it against a rubric."
    ),
    "run": (
        "Run sends every item to every variant and scores the replies; the matrix, the comparison "
        "of the two variants and the cost appear below when it ends."
    ),
}
"""One sentence per tab, saying what it is for (the page shows them above each tab of the example)."""

RUBRIC = "Score 1 if the answer is correct and short, 0 if it is wrong."
# Says only what `example_experiment` checks: whether the embedded model is installed. A configured
# provider key does not make a judge (the example names no provider's model), but it is why the
# model may be missing: `make run` builds it only when no key is configured.
NO_JUDGE = (
    "The model-graded scorer was left out: its judge is the embedded model, which is not installed on "
    "this machine (`make run` builds it only for a machine without a provider key). To judge with another "
    "model, set the variants to a model you have set up, then add a rubric scorer on the Scorers tab."
)


def is_example(draft: ExperimentDraft) -> bool:
    """The open experiment is still the example as created (its name kept): the page explains its tabs."""
    return draft.name == EXAMPLE_NAME


def example_dataset() -> Dataset:
    """Ten short questions, each with its expected answer and the `kind` of answer as a var."""
    items = [
        DatasetItem(id=f"example-{number}", input=text, expected=expected, vars={"kind": kind})
        for number, (text, expected, kind) in enumerate(_ITEMS, start=1)
    ]
    return Dataset(name="short questions", items=items)


def example_variants() -> list[Variant]:
    """Two variants on the embedded model that differ only in the system prompt."""
    prompts = {
        SHORT_ANSWER: "Reply with only the {kind}: one word, no sentence.",
        PLAIN: "You are a helpful assistant.",
    }
    return [
        Variant(
            name=name,
            provider=LOCAL,
            model_id="smollm2",
            system_prompt=prompt,
            temperature=0.0,
            max_tokens=EXAMPLE_MAX_TOKENS,
        )
        for name, prompt in prompts.items()
    ]


def example_experiment(judge_available: bool | None = None) -> ExperimentDraft:
    """The ready example: dataset, two variants, a rule scorer and (when a model can judge) a rubric.

    `judge_available` None: the embedded model is installed. The judge is the first variant's model
    without its system prompt, named as the Scorers tab names a judge taken from a variant."""
    if judge_available is None:
        judge_available = is_installed()
    variants = example_variants()
    chosen: list[AnyScorer] = [contains(name="has the answer")]
    if judge_available:
        judge = variants[0].model_copy(update={"system_prompt": "", "name": f"judge ({SHORT_ANSWER})"})
        chosen.append(rubric(RUBRIC, judge, threshold=0.5, name="judged correct"))
    return ExperimentDraft(
        name=EXAMPLE_NAME, dataset=example_dataset(), variants=variants, scorers=chosen, concurrency=2
    )
