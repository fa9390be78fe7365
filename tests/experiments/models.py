"""Models of the agent-task tests: a priced scripted model, and the embedded SmolLM2 as a variant."""

from __future__ import annotations

from typing import Any

from yiem import LlmModel
from yiem.experiments import Variant
from yiem.providers.local_llm import LocalLlmServer
from yiem.types import ModelCost

PRICED = LlmModel(id="m", provider="scripted", cost=ModelCost(input=1.0, output=2.0), price_known=True)
REPLY_COST = (100 * 1.0 + 20 * 2.0) / 1_000_000
"""What one `priced_reply` costs at PRICED's prices."""


def priced_reply(text: str) -> dict[str, Any]:
    """A scripted text reply that used 100 input and 20 output tokens."""
    return {"content": [{"type": "text", "text": text}], "usage": {"inputTokens": 100, "outputTokens": 20}}


def smol_variant(
    server: LocalLlmServer, name: str = "smollm2", max_tokens: int = 16, **fields: Any
) -> Variant:
    """The embedded model through its OpenAI-compatible endpoint, greedy, with few tokens."""
    return Variant(
        name=name,
        provider="llamacpp",
        base_url=server.openai_base_url,
        model_id="smollm2",
        max_tokens=max_tokens,
        temperature=0.0,
        **fields,
    )
