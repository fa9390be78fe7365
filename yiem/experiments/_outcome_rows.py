"""The rows one stored outcome makes: its hidden conversation, messages, usage rows (the judges'
too) and outcome row, gathered per table so outcomes that finished together are one insert each."""

from __future__ import annotations

import uuid
from typing import Any

from yiem.experiments._outcome import ItemOutcome
from yiem.store import usage_row
from yiem.types import AssistantMessage, AssistantMessageToolCall, model_json

SIMULATED_USER = "simulated user"
"""The stop reason of a simulated user's usage rows: how the Costs page tells them from the variant's."""


def _judge_row(score: Any, now: int, tags: dict[str, str]) -> dict[str, Any]:
    tokens = score.judge_usage
    provider, _, model = (score.judge_model or "").partition("/")
    return {
        "created_ms": score.judge_ms or now,
        "conversation_id": None,
        "provider": provider,
        "api": "",
        "model": model or provider,
        "input_tokens": tokens.input_tokens,
        "output_tokens": tokens.output_tokens,
        "cache_read_tokens": tokens.cache_read_tokens,
        "cache_write_tokens": tokens.cache_write_tokens,
        "reasoning_tokens": tokens.reasoning_tokens,
        # The judge's dollars are known only in total; the split stays 0 rather than guessed.
        "cost_input": 0.0,
        "cost_output": 0.0,
        "cost_cache_read": 0.0,
        "cost_cache_write": 0.0,
        "cost_total": score.judge_cost or 0.0,
        "price_known": score.judge_cost is not None,
        "latency_ms": None,
        "ttft_ms": None,
        "error": None,
        "stop_reason": "judge",
        **tags,
    }


class OutcomeRows:
    """The rows of outcomes that are stored together, table by table."""

    def __init__(self, run_id: str, tags: dict[str, str]) -> None:
        self.run_id = run_id
        self.tags = tags
        self.conversations: list[dict[str, Any]] = []
        self.messages: list[dict[str, Any]] = []
        self.usage: list[dict[str, Any]] = []
        self.outcomes: list[dict[str, Any]] = []

    def add(self, outcome: ItemOutcome, now: int) -> ItemOutcome:
        """Add one outcome's rows; returns it with its conversation's id."""
        conversation_id = str(uuid.uuid4())
        # A conversation item's earlier replies were paid for in Chat: only this run's own count.
        ran = outcome.messages[outcome.given_messages :]
        replies = [m for m in ran if isinstance(m, AssistantMessage | AssistantMessageToolCall)]
        self.conversations.append(
            {
                "id": conversation_id,
                "title": f"{outcome.variant} · {outcome.item_id}",
                "provider": replies[0].provider if replies else "",
                "model": replies[0].model if replies else "",
                "system_prompt": "",
                "created_ms": now,
                "updated_ms": now,
                "hidden": True,
                "owner": self.tags["owner"],
            }
        )
        self.messages += [
            {
                "conversation_id": conversation_id,
                "position": position,
                "role": message.role,
                "data": message.to_json(),
                "created_ms": now,
            }
            for position, message in enumerate(outcome.messages)
        ]
        self.usage += [
            {**usage_row(reply, None, conversation_id), **self.tags, "price_known": reply.cost is not None}
            for reply in replies
        ]
        self.usage += [
            _judge_row(score, now, self.tags) for score in outcome.scores if score.judge_usage is not None
        ]
        # The simulated user's replies: its own rows, named so on the Costs page (By stop reason).
        self.usage += [
            {
                **usage_row(reply, None, conversation_id),
                **self.tags,
                "price_known": reply.cost is not None,
                "stop_reason": SIMULATED_USER,
            }
            for reply in outcome.user_replies
        ]
        stored = outcome.model_copy(
            update={"messages": [], "user_replies": [], "conversation_id": conversation_id}
        )
        self.outcomes.append(
            {
                "run_id": self.run_id,
                "item_id": outcome.item_id,
                "variant": outcome.variant,
                "repeat": outcome.repeat,
                "conversation_id": conversation_id,
                "passed": outcome.passed,
                "cost": outcome.cost,
                "latency_ms": outcome.latency_ms,
                "data": model_json(stored, by_alias=True),
                "created_ms": now,
            }
        )
        return outcome.model_copy(update={"conversation_id": conversation_id})
