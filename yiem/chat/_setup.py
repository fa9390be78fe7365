"""A conversation's setup: what it is sent with, kept in the store so reopening it restores it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from yiem.chat._settings import ChatSettings
from yiem.store import Conversation


class ChatSetup(BaseModel):
    """Provider, model, base URL, system prompt, sampling and tools; never an API key."""

    provider: str
    model_id: str
    base_url: str = ""
    system_prompt: str = ""
    temperature: float | None = None
    max_tokens: int | None = None
    tools: list[str] = []
    tool_execution: Literal["parallel", "sequential"] = "parallel"


def setup_of(settings: ChatSettings, enabled_tools: Iterable[str]) -> ChatSetup:
    """The setup these settings and enabled tools make (the typed key is left behind)."""
    return ChatSetup(
        provider=settings.provider,
        model_id=settings.model_id,
        base_url=settings.base_url,
        system_prompt=settings.system_prompt,
        temperature=settings.temperature,
        max_tokens=settings.max_tokens,
        tools=sorted(enabled_tools),
        tool_execution=settings.tool_execution,
    )


def stored_setup(data: dict[str, Any] | None) -> ChatSetup | None:
    """A setup read back from the store; None when there is none or it no longer validates."""
    if data is None:
        return None
    try:
        return ChatSetup.model_validate(data)
    except ValidationError:
        return None


def conversation_setup(
    conversation: Conversation, current: ChatSettings, current_tools: Iterable[str]
) -> ChatSetup:
    """The setup to restore when `conversation` opens.

    One saved before setups were kept has its provider, model and system prompt in their own
    columns; the rest stays as it is now. An imported one without a provider keeps today's model.
    """
    found = stored_setup(conversation.setup)
    if found is not None:
        return found
    keep_model = not conversation.provider or not conversation.model
    return ChatSetup(
        provider=current.provider if keep_model else conversation.provider,
        model_id=current.model_id if keep_model else conversation.model,
        base_url=current.base_url if keep_model or conversation.provider == current.provider else "",
        system_prompt=conversation.system_prompt,
        temperature=current.temperature,
        max_tokens=current.max_tokens,
        tools=sorted(current_tools),
        tool_execution=current.tool_execution,
    )


def apply_setup(settings: ChatSettings, setup: ChatSetup) -> ChatSettings:
    """`settings` with `setup` applied; a key typed this session stays only for the same server."""
    return settings.model_copy(
        update={
            "provider": setup.provider,
            "model_id": setup.model_id,
            "base_url": setup.base_url,
            "api_key": settings.typed_key_for(setup.provider, setup.base_url),
            "system_prompt": setup.system_prompt,
            "temperature": setup.temperature,
            "max_tokens": setup.max_tokens,
            "tool_execution": setup.tool_execution,
        }
    )
