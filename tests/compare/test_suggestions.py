"""Compare's first run (issue 28): two columns on the person's model, set apart by one setting."""

from __future__ import annotations

from yiem.compare import SUGGESTED_PROMPTS, example_columns
from yiem.compare._suggestions import EXAMPLE_MAX_TOKENS
from yiem.model_setup import ModelSetup


def test_the_second_column_differs_only_in_its_system_prompt() -> None:
    first, second = example_columns(ModelSetup(provider="local", model_id="smollm2"))
    assert first.system_prompt == "" and "pirate" in second.system_prompt
    assert first.model_dump(exclude={"system_prompt"}) == second.model_dump(exclude={"system_prompt"})
    assert first.max_tokens == EXAMPLE_MAX_TOKENS  # short replies: the first comparison ends quickly
    assert len(SUGGESTED_PROMPTS) == 3 and len(set(SUGGESTED_PROMPTS)) == 3


def test_a_longest_reply_already_set_is_kept() -> None:
    first, second = example_columns(ModelSetup(provider="openai", model_id="gpt-4o-mini", max_tokens=500))
    assert (first.max_tokens, second.max_tokens, second.label) == (500, 500, "openai/gpt-4o-mini")
