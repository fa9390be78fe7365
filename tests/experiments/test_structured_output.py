"""Structured output: a variant asks for JSON matching a schema; the embedded model (OpenAI-compatible
`response_format`) answers in it and the JSON Schema scorer passes; Anthropic's API says plainly it
cannot; a schema that is not one is refused in words."""

from __future__ import annotations

import json

import pytest

from tests.experiments.models import smol_variant
from yiem.experiments import Dataset, Variant, run_experiment, scorers
from yiem.providers.anthropic import AnthropicClient
from yiem.providers.local_llm import LocalLlmServer

CITY = {
    "type": "object",
    "properties": {"city": {"type": "string", "maxLength": 12}},
    "required": ["city"],
    "additionalProperties": False,
}
DATA = Dataset.from_records([{"id": "q", "input": "Which city is the capital of France? Answer in JSON."}])


@pytest.mark.llama
def test_the_embedded_model_answers_in_the_schema(llama_server: LocalLlmServer) -> None:
    variant = smol_variant(llama_server, "json", max_tokens=40, response_schema=CITY)
    result = run_experiment(DATA, [variant], [scorers.json_schema(CITY)])
    outcome = result.outcomes[0]
    assert outcome.error is None, outcome.error
    assert outcome.passed, outcome.scores
    assert set(json.loads(outcome.output)) == {"city"}


@pytest.mark.llama
def test_anthropics_api_says_plainly_it_cannot(llama_server: LocalLlmServer) -> None:
    client = AnthropicClient(llama_server.base_url, api_key="unused")
    variant = Variant(name="a", llm=client, model=llama_server.llm_model(), response_schema=CITY)
    outcome = run_experiment(DATA, [variant], []).outcomes[0]
    assert outcome.error is not None
    assert "cannot yet ask for JSON matching a schema" in outcome.error
    assert "remove the response schema (a variant's, or the one in Chat's settings)" in outcome.error


def test_a_response_schema_that_is_not_one_is_refused_in_words() -> None:
    with pytest.raises(ValueError, match="the response schema cannot be used: it is not valid JSON Schema"):
        Variant(name="bad", response_schema={"type": "nope"})
