"""The example experiment (issue 28): its shape, a real run of it on the embedded model (SmolLM2 on
llama-server), and a run's cost line figures (`ExperimentResult.cost`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from yiem import LlmModel, ModelCost, ScriptedLlm
from yiem.experiments import (
    EXAMPLE_NAME,
    NO_JUDGE,
    ExperimentDraft,
    Variant,
    example_experiment,
    is_example,
    run_experiment,
    run_spec,
    scorers,
)
from yiem.experiments._example import example_dataset
from yiem.providers.local_llm import SMOLLM2_VERSION, LocalLlmServer, llama_dir


def test_the_example_is_ready_to_run_and_its_variants_differ_only_in_the_system_prompt() -> None:
    draft = example_experiment(judge_available=True)
    assert draft.name == EXAMPLE_NAME and is_example(draft)
    items = draft.dataset.items
    assert 8 <= len(items) <= 12 and all(item.expected for item in items)
    assert all(set(item.vars) == {"kind"} for item in items)  # the one template var
    short, plain = draft.variants
    assert "{kind}" in short.system_prompt and short.system_prompt != plain.system_prompt
    same = {"system_prompt", "name"}
    assert short.model_dump(exclude=same) == plain.model_dump(exclude=same)
    assert (short.provider, short.model_id) == ("local", "smollm2")
    assert [scorer.kind for scorer in draft.scorers] == ["contains", "rubric"]
    # Stored as the page stores it, and read back whole (the rubric's judge too).
    data = draft.model_dump(mode="json", exclude={"name"})
    again = ExperimentDraft.model_validate({"name": draft.name, **data})
    assert again.model_dump() == draft.model_dump()
    # The rendered prompt names each item's kind.
    assert short.render_system_prompt(items[0].vars) == "Reply with only the city: one word, no sentence."


def test_without_a_model_to_judge_the_rubric_is_left_out() -> None:
    draft = example_experiment(judge_available=False)
    assert [scorer.kind for scorer in draft.scorers] == ["contains"]
    renamed = draft.model_copy(update={"name": "My own"})
    assert not is_example(renamed)


def test_the_judge_is_left_out_exactly_when_the_embedded_model_is_not_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What NO_JUDGE says is what is checked: the embedded model's install, whatever keys are configured.
    assert "embedded model" in NO_JUDGE and "not installed" in NO_JUDGE
    monkeypatch.setenv("YIEM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-a-configured-key")  # a key judges nothing in the example
    assert [scorer.kind for scorer in example_experiment().scorers] == ["contains"]
    binary = llama_dir() / "bin" / "llama-server"
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    (tmp_path / f"smollm2-{SMOLLM2_VERSION}").mkdir()
    (tmp_path / f"smollm2-{SMOLLM2_VERSION}" / "model.gguf").write_bytes(b"")
    monkeypatch.delenv("OPENAI_API_KEY")
    assert [scorer.kind for scorer in example_experiment().scorers] == ["contains", "rubric"]


@pytest.mark.llama
@pytest.mark.timeout(1200)  # twenty replies and twenty verdicts: minutes on a machine at load 30
def test_the_example_runs_on_smollm2_to_a_finished_matrix(llama_server_parallel: LocalLlmServer) -> None:
    draft = example_experiment(judge_available=True)
    server = {"provider": "llamacpp", "base_url": llama_server_parallel.openai_base_url}
    draft.variants = [variant.model_copy(update=server) for variant in draft.variants]
    rubric = draft.scorers[1]
    assert isinstance(rubric, scorers.Rubric)
    rubric.judge.variant = rubric.judge.variant.model_copy(update=server)
    result = run_spec(draft.spec())
    assert result.status == "finished"
    assert len(result.outcomes) == 2 * len(draft.dataset.items)
    assert all(outcome.error is None and outcome.output for outcome in result.outcomes)
    assert all([s.scorer for s in o.scores] == ["has the answer", "judged correct"] for o in result.outcomes)
    assert all(o.score_of("judged correct").judge_model for o in result.outcomes)  # type: ignore[union-attr]
    comparison = result.compare("Plain", baseline="Short answer")
    assert comparison.improved + comparison.regressed + comparison.unchanged == len(draft.dataset.items)
    cost = result.cost()
    # A local model has no price: every outcome is unpriced, none counted as $0 spent.
    assert (cost.unpriced, cost.outcomes, cost.known_usd) == (20, 20, 0.0)
    assert cost.input_tokens > 0 and cost.output_tokens > 0
    assert cost.input_tokens > sum(o.usage.input_tokens for o in result.outcomes)  # the judges' too


def test_a_priced_run_costs_its_replies_and_its_judges() -> None:
    priced = LlmModel(id="m", provider="scripted", cost=ModelCost(input=1.0, output=2.0), price_known=True)

    def reply(_context: Any) -> Any:
        return {"content": "Paris", "usage": {"inputTokens": 1_000_000, "outputTokens": 0}}

    def verdict(_context: Any) -> Any:
        usage = {"inputTokens": 0, "outputTokens": 500_000}
        return {"content": '{"score": 1, "reason": "right"}', "usage": usage}

    judge = Variant(name="judge", llm=ScriptedLlm([verdict] * 3), model=priced)
    variant = Variant(name="v", llm=ScriptedLlm([reply] * 3), model=priced)
    dataset = example_dataset().model_copy(update={"items": example_dataset().items[:3]})
    result = run_experiment(dataset, [variant], [scorers.rubric("right?", judge)])
    cost = result.cost()
    assert (cost.outcomes, cost.unpriced) == (3, 0)
    assert cost.known_usd == pytest.approx(3 * 1.0 + 3 * 1.0)  # $1 each reply, $1 each verdict
    assert (cost.input_tokens, cost.output_tokens) == (3_000_000, 1_500_000)
