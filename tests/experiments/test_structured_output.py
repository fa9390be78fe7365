"""Structured output: a variant asks for JSON matching a schema; the embedded model (OpenAI-compatible
`response_format`) answers in it and the JSON Schema scorer passes; a JSON Schema scorer with no schema
of its own checks each variant's; Anthropic's API says plainly it cannot; a schema that is not one is
refused in words."""

from __future__ import annotations

import json

import pytest

from tests.experiments.models import smol_variant
from yiem import ScriptedLlm
from yiem.experiments import Dataset, ExperimentError, Variant, run_experiment, scorers
from yiem.providers.anthropic import AnthropicClient
from yiem.providers.local_llm import LocalLlmServer

CITY = {
    "type": "object",
    "properties": {"city": {"type": "string", "maxLength": 12}},
    "required": ["city"],
    "additionalProperties": False,
}
DATA = Dataset.from_records([{"id": "q", "input": "Which city is the capital of France? Answer in JSON."}])
COUNTRY = {"type": "object", "properties": {"country": {"type": "string"}}, "required": ["country"]}


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


def test_a_json_schema_scorer_without_its_own_schema_checks_each_variants() -> None:
    # Both answer {"city": ...}: right for the variant that asked for CITY, wrong for the one that
    # asked for COUNTRY. Typed once, on the variant, not again on the scorer.
    answer = '{"city": "Paris"}'
    city = Variant(name="city", llm=ScriptedLlm([answer, answer]), response_schema=CITY)
    country = Variant(name="country", llm=ScriptedLlm([answer, answer]), response_schema=COUNTRY)
    result = run_experiment(DATA, [city, country], [scorers.json_schema()])
    by_variant = {o.variant: o.scores[0] for o in result.outcomes}
    assert by_variant["city"].passed and by_variant["city"].reason == "matches the schema"
    assert not by_variant["country"].passed
    assert "'country' is a required property" in by_variant["country"].reason
    # A schema of the scorer's own is used for every variant instead.
    again = [
        Variant(name=v.name, llm=ScriptedLlm([answer]), response_schema=v.response_schema)
        for v in (city, country)
    ]
    own = run_experiment(DATA, again, [scorers.json_schema(COUNTRY)])
    assert [o.scores[0].passed for o in own.outcomes] == [False, False]


def test_a_json_schema_scorer_with_no_schema_anywhere_is_refused_in_words() -> None:
    plain = Variant(name="plain", llm=ScriptedLlm(["{}"]))
    with pytest.raises(ExperimentError, match="'plain' asks for none: give the scorer a JSON Schema"):
        run_experiment(DATA, [plain], [scorers.json_schema()])
