"""A conversation's setup, kept in the store so reopening it restores it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError

from yiem.model_setup import ModelSetup
from yiem.store import Conversation


def stored_setup(data: dict[str, Any] | None) -> ModelSetup | None:
    """A setup read back from the store; None when there is none or it no longer validates."""
    if data is None:
        return None
    try:
        return ModelSetup.model_validate(data)
    except ValidationError:
        return None


def conversation_setup(
    conversation: Conversation, current: ModelSetup, current_tools: Iterable[str]
) -> ModelSetup:
    """The setup to restore when `conversation` opens.

    One saved before setups were kept has its provider, model and system prompt in their own
    columns; the rest stays as it is now. An imported one without a provider keeps today's model.
    """
    found = stored_setup(conversation.setup)
    if found is not None:
        return found
    keep_model = not conversation.provider or not conversation.model
    return ModelSetup(
        provider=current.provider if keep_model else conversation.provider,
        model_id=current.model_id if keep_model else conversation.model,
        base_url=current.base_url if keep_model or conversation.provider == current.provider else "",
        system_prompt=conversation.system_prompt,
        temperature=current.temperature,
        max_tokens=current.max_tokens,
        tools=sorted(current_tools),
        tool_execution=current.tool_execution,
    )
