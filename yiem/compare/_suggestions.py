"""What Compare offers before anything is sent: three prompts to try, and a second column set apart."""

from __future__ import annotations

from yiem.model_setup import ModelSetup

SUGGESTED_PROMPTS = (
    "Describe the sea in one sentence.",
    "Write a two-line poem about coffee.",
    "Give three names for a pet turtle.",
)
EXAMPLE_SYSTEM_PROMPT = "You are a pirate: answer in one short sentence, the way a pirate talks."
EXAMPLE_MAX_TOKENS = 64  # two replies of a sentence or two: the first comparison ends quickly
FIRST_RUN = (
    "Compare sends one prompt to several models or settings at once and shows their answers side by "
    "side, with what each cost and how fast it came. Send a prompt, or try one of the suggestions: "
    "the second column is set to answer like a pirate, so the first run shows a difference."
)


def example_columns(first: ModelSetup) -> list[ModelSetup]:
    """Two columns on `first`'s model: as it is, and with a system prompt of its own (and short replies)."""
    short = first.model_copy(update={"max_tokens": first.max_tokens or EXAMPLE_MAX_TOKENS})
    return [short, short.model_copy(update={"system_prompt": EXAMPLE_SYSTEM_PROMPT})]
