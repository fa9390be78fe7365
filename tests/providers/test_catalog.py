"""The model catalogue (SP-007, SP-008): genai-prices prices, local and unknown models, models file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from genai_prices import Usage, calc_price

from yiem.providers.catalog import (
    GENAI_PRICES_VERSION,
    ModelsFileError,
    conversation_cost,
    get_model,
    known_model_ids,
)
from yiem.types import AssistantMessage, LlmUsage, ModelCost, UsageCost, UserMessage


@pytest.fixture(autouse=True)
def _no_models_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # A models.toml in the developer's working directory must not change these results.
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("YIEM_MODELS_FILE", raising=False)


def test_sp007_known_model_has_genai_prices_prices() -> None:
    model = get_model("openai", "gpt-4o-mini")
    assert model.price_known is True
    assert model.provider == "openai" and model.base_url == "https://api.openai.com/v1"
    assert model.api == "openai-completions"
    assert model.price_source.startswith(f"genai-prices {GENAI_PRICES_VERSION}")
    assert model.context_window == 128_000
    assert "image" in model.input
    # The same numbers genai-prices computes itself for one million tokens of each kind.
    reference = calc_price(
        Usage(input_tokens=1_000_000, output_tokens=1_000_000), "gpt-4o-mini", provider_id="openai"
    )
    assert model.cost.input + model.cost.output == pytest.approx(float(reference.total_price))
    assert model.cost.cache_read < model.cost.input


def test_sp008_anthropic_cache_prices_and_api() -> None:
    model = get_model("anthropic", "claude-3-5-haiku-latest")
    assert model.api == "anthropic-messages" and model.price_known
    assert model.cost == ModelCost(input=0.8, output=4.0, cache_read=0.08, cache_write=1.0)


def test_tiered_prices_say_so() -> None:
    model = get_model("anthropic", "claude-sonnet-4-5")
    assert model.price_known and model.cost.input == 3.0
    assert "long prompts cost more" in model.price_source


def test_cache_reads_without_their_own_price_cost_plain_input() -> None:
    model = get_model("groq", "llama-3.1-8b-instant")
    assert model.price_known
    assert model.cost.cache_read == model.cost.input and model.cost.cache_write == model.cost.input


@pytest.mark.parametrize(
    ("provider", "model_id"),
    [("local", "smollm2"), ("ollama", "llama3.2"), ("lmstudio", "qwen2.5-7b"), ("vllm", "gpt-4o-mini")],
)
def test_local_models_are_never_priced(provider: str, model_id: str) -> None:
    model = get_model(provider, model_id)
    assert model.price_known is False and model.cost == ModelCost()
    assert "local" in model.price_source


def test_unknown_provider_and_unknown_model_are_not_guessed() -> None:
    for model in (get_model("my-proxy", "gpt-4o-mini"), get_model("openai", "no-such-model-xyz")):
        assert model.price_known is False and model.cost == ModelCost()
        assert model.price_source == "price unknown"


def test_custom_base_url_of_a_known_provider_is_priced() -> None:
    model = get_model("my-openai", "gpt-4o-mini", base_url="https://api.openai.com/v1")
    assert model.price_known and model.cost.input > 0


def test_models_file_toml_overrides_and_adds(tmp_path: Path) -> None:
    (tmp_path / "models.toml").write_text(
        """
[[models]]
provider = "openai"
id = "gpt-4o-mini"
cost = { input = 1.0, output = 2.0, cache_read = 0.5 }
context_window = 64000

[[models]]
provider = "local"
id = "smollm2"
name = "My toy"
input = ["text"]
""",
        encoding="utf-8",
    )
    overridden = get_model("openai", "gpt-4o-mini")
    assert overridden.cost == ModelCost(input=1.0, output=2.0, cache_read=0.5, cache_write=0.0)
    assert overridden.price_known and overridden.price_source.startswith("models file")
    assert overridden.context_window == 64_000
    named = get_model("local", "smollm2")
    assert named.name == "My toy" and named.price_known is False  # no cost given: still unknown
    assert "smollm2" in known_model_ids("local")


def test_models_file_json_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "elsewhere.json"
    path.write_text(
        json.dumps({"models": [{"provider": "ollama", "id": "llama3.2", "cost": {"input": 0.1}}]})
    )
    monkeypatch.setenv("YIEM_MODELS_FILE", str(path))
    model = get_model("ollama", "llama3.2")
    assert model.price_known and model.cost.input == 0.1 and model.cost.output == 0.0


def test_models_file_changes_are_picked_up(tmp_path: Path) -> None:
    path = tmp_path / "models.json"
    path.write_text(json.dumps([{"provider": "x", "id": "m", "cost": {"input": 1}}]))
    assert get_model("x", "m").cost.input == 1
    path.write_text(
        json.dumps([{"provider": "x", "id": "m", "cost": {"input": 2}}, {"provider": "x", "id": "n"}])
    )
    assert get_model("x", "m").cost.input == 2


@pytest.mark.parametrize(
    ("text", "suffix", "message"),
    [
        ("[[models]\nprovider=", ".toml", "is not valid TOML"),
        ('{"models": 3}', ".json", 'needs a "models" list'),
        ('{"models": [{"provider": "a"}]}', ".json", "model #1: id: Field required"),
        ('{"models": [{"provider": "a", "id": "b", "price": 1}]}', ".json", "model #1: price: Extra inputs"),
        ('{"models": [{"provider": "a", "id": "b", "cost": {"input": "cheap"}}]}', ".json", "cost.input"),
    ],
)
def test_bad_models_file_names_the_file_and_the_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, suffix: str, message: str
) -> None:
    path = tmp_path / f"bad{suffix}"
    path.write_text(text)
    monkeypatch.setenv("YIEM_MODELS_FILE", str(path))
    with pytest.raises(ModelsFileError, match="bad") as error:
        get_model("a", "b")
    assert message in str(error.value)


def test_missing_models_file_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("YIEM_MODELS_FILE", str(tmp_path / "nope.toml"))
    with pytest.raises(ModelsFileError, match="Cannot read models file"):
        get_model("a", "b")


def test_sp008_message_and_conversation_cost_sum() -> None:
    model = get_model("openai", "gpt-4o-mini")
    usage = LlmUsage(input_tokens=1_000_000, output_tokens=500_000, cache_read_tokens=200_000)
    first = AssistantMessage(usage=usage)
    first.cost = model.cost_of(usage)
    assert first.cost is not None
    assert first.cost.input == pytest.approx(model.cost.input)
    assert first.cost.output == pytest.approx(model.cost.output / 2)
    assert first.cost.cache_read == pytest.approx(model.cost.cache_read / 5)
    second = AssistantMessage(usage=usage, cost=first.cost)
    total = conversation_cost([UserMessage(), first, second, AssistantMessage()])
    assert total.total == pytest.approx(2 * first.cost.total)
    assert conversation_cost([]) == UsageCost()


def test_known_model_ids_for_pickers() -> None:
    ids = known_model_ids("openai")
    assert "gpt-4o-mini" in ids and len(ids) > 10
    assert known_model_ids("ollama") == []


def test_openrouter_ids_with_a_vendor_prefix_are_priced() -> None:
    model = get_model("openrouter", "openai/gpt-4o")
    assert model.price_known and model.base_url == "https://openrouter.ai/api/v1"
    assert model.cost.input > 0 and model.cost.output > model.cost.input
