"""The usage table's row for one assistant reply."""

from __future__ import annotations

from typing import Any

from yiem.redaction import redact
from yiem.types import AssistantMessage, AssistantMessageToolCall, LlmModel, replace_lone_surrogates

# `usage.source` of the replies a person's model wrote for an MCP server's sampling request; their
# `usage.tool` names the server (schema 18).
SAMPLING_SOURCE = "mcp-sampling"


def usage_row(
    message: AssistantMessage | AssistantMessageToolCall,
    model: LlmModel | None,
    conversation_id: str | None,
    estimated: bool = False,
) -> dict[str, Any]:
    """The usage table's row for one assistant message (`estimated`: its tokens are an estimate)."""
    tokens = message.usage
    cost = message.cost
    if cost is None and model is not None:
        cost = model.cost_of(tokens)
    row: dict[str, Any] = {
        "created_ms": int(message.timestamp.timestamp() * 1000),
        "conversation_id": conversation_id,
        "provider": message.provider or (model.provider if model else ""),
        "api": message.api or (model.api if model else ""),
        "model": message.model or (model.id if model else ""),
        "input_tokens": tokens.input_tokens,
        "output_tokens": tokens.output_tokens,
        "cache_read_tokens": tokens.cache_read_tokens,
        "cache_write_tokens": tokens.cache_write_tokens,
        "reasoning_tokens": tokens.reasoning_tokens,
        "cost_input": cost.input if cost else 0.0,
        "cost_output": cost.output if cost else 0.0,
        "cost_cache_read": cost.cache_read if cost else 0.0,
        "cost_cache_write": cost.cache_write if cost else 0.0,
        "cost_total": cost.total if cost else 0.0,
        "price_known": bool(model.price_known) if model is not None else False,
        "latency_ms": message.duration_ms,
        "ttft_ms": message.ttft_ms,
        "stop_reason": message.stop_reason,
        "error": redact(replace_lone_surrogates(message.error_message))
        if message.error_message
        else message.error_message,
    }
    if estimated:
        # Only when set: callers that insert these rows in bulk beside rows of their own (the
        # experiments' judge rows) then pass the same keys in every row, as executemany needs.
        row["estimated"] = True
    return row
