"""The one model setup: provider, model, base URL, system prompt, sampling settings and tools."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from yiem.errors import YiemError
from yiem.json_schema import UnusableSchemaError, usable_validator
from yiem.types import AgentLoopConfig

LOCAL = "local"

# A sensible first model per paid provider; any other id can be typed or picked in the settings.
DEFAULT_MODELS = {
    "openai": "gpt-4o-mini",
    "anthropic": "claude-3-5-haiku-latest",
    "openrouter": "openai/gpt-4o-mini",
    "groq": "llama-3.1-8b-instant",
    LOCAL: "smollm2",
}

MAX_TOKENS_LIMIT = 1_000_000
"""The largest reply length any form offers; None (or 0 in a form) leaves it to the provider."""


def calls_tools(provider: str) -> bool:
    """Whether a provider's models are sent the enabled tools.

    Not the embedded SmolLM2: its chat template has no tools, so llama-server either drops them
    without a word or, started with a tool template, fails with HTTP 500 on the toy model's
    malformed calls. Its messages go without tools, and the page says so.
    """
    return provider not in (LOCAL, "")


def takes_images(provider: str, model_id: str) -> bool:
    """Whether this model accepts images in a prompt, as the catalogue says (never the embedded SmolLM2)."""
    from yiem.providers.catalog import get_model

    if provider in (LOCAL, "") or not model_id:
        return False
    return "image" in get_model(provider, model_id).input


def parse_response_schema(text: str) -> dict[str, Any] | None:
    """A response schema as typed in a form (None when empty); `ResponseSchemaError` says what is wrong."""
    if not text.strip():
        return None
    try:
        schema = json.loads(text)
    except json.JSONDecodeError as error:
        raise ResponseSchemaError(f"The schema is not JSON: {error.msg} (line {error.lineno}).") from None
    if not isinstance(schema, dict):
        raise ResponseSchemaError('The schema must be a JSON object, such as {"type": "object"}.')
    try:
        usable_validator(schema)
    except UnusableSchemaError as error:
        raise ResponseSchemaError(f"The response schema cannot be used: {error}") from None
    return schema


def response_schema_note(provider: str) -> str:
    """Why replies of this provider cannot be asked to match a JSON Schema, in words; "" when they can."""
    from yiem.providers.anthropic import AnthropicClient
    from yiem.providers.presets import PRESETS

    preset = PRESETS.get(provider)
    return AnthropicClient.no_response_schema if preset and preset.api == "anthropic-messages" else ""


def asks_base_url(provider: str) -> bool:
    """Whether a form offers a Base URL for this provider: every one but the embedded model, which
    yiem starts itself (a hosted API's own URL is filled in, a server of one's own needs one)."""
    return provider not in (LOCAL, "")


class ModelSettingsError(YiemError):
    """The settings cannot reach a model (no key, no model, local model missing); says what to do."""


class ResponseSchemaError(ModelSettingsError, ValueError):
    """A response schema is not a JSON Schema yiem can check answers with; says what is wrong.

    A ValueError too, so pydantic turns it into a validation error when a setup is read."""


class SamplingModel(BaseModel):
    """Another provider and model (any the chat could use) for MCP servers' sampling requests.

    `api_key` is a key typed in this session for it; the server's key applies by the same rule as
    the chat's: only to the base URL it was configured for."""

    provider: str = LOCAL
    base_url: str = ""
    model_id: str = ""
    api_key: str = Field(default="", repr=False, exclude=True)

    @classmethod
    def of(cls, setup: ModelSetup) -> SamplingModel:
        """The provider, base URL, model and typed key of `setup`."""
        return cls(
            provider=setup.provider, base_url=setup.base_url, model_id=setup.model_id, api_key=setup.api_key
        )


class ModelSetup(BaseModel):
    """What a message is sent with, in Chat, a Compare column or an Experiments variant.

    Stored as JSON (a conversation's setup, a saved preset, a comparison's column, a run's variant)
    without `api_key` and `sampling`: a key is typed for one browser session only, and a key
    configured on the server is never copied in here (`connect` looks it up for its own base URL).
    """

    provider: str = LOCAL
    model_id: str = ""
    base_url: str = ""
    api_key: str = Field(default="", repr=False, exclude=True)
    system_prompt: str = ""
    temperature: float | None = None
    max_tokens: int | None = None
    tools: list[str] = Field(default_factory=list)
    tool_execution: Literal["parallel", "sequential"] = "parallel"
    # Structured output: each answer must be JSON this schema accepts (checked to be a schema here).
    response_schema: dict[str, Any] | None = None
    # What answers MCP servers' sampling requests; None: this setup's own model. Chat's only.
    sampling: SamplingModel | None = Field(default=None, exclude=True)

    @property
    def label(self) -> str:
        """`provider/model`, as a column's heading, a chart's legend and the leaderboard show it."""
        if not self.provider:
            return self.model_id
        return f"{self.provider}/{self.model_id}" if self.model_id else self.provider

    def model_only(self) -> ModelSetup:
        """The same provider, base URL and model, and nothing else: no key, prompt, sampling or tools
        (a new Compare column starts from the chat's model this way)."""
        return ModelSetup(provider=self.provider, base_url=self.base_url, model_id=self.model_id)

    def with_tools(self, tools: Iterable[str]) -> ModelSetup:
        """This setup calling `tools` (sorted, so two equal setups compare equal)."""
        return self.model_copy(update={"tools": sorted(tools)})

    def as_stored(self) -> ModelSetup:
        """This setup as the store keeps it: no typed key, no sampling model."""
        return ModelSetup.model_validate(self.model_dump())

    def typed_key_for(self, provider: str, base_url: str) -> str:
        """The key typed this session, if it was typed for this provider and base URL: a typed key
        is never sent to another server."""
        return self.api_key if (provider, base_url) == (self.provider, self.base_url) else ""

    def restored(self, stored: ModelSetup) -> ModelSetup:
        """`stored` (a reopened conversation's, a preset) in place of this one; the key typed this
        session stays only for the same server, and the sampling model stays as chosen."""
        return stored.model_copy(
            update={
                "api_key": self.typed_key_for(stored.provider, stored.base_url),
                "sampling": self.sampling,
            }
        )

    def for_sampling(self) -> ModelSetup:
        """The setup that reaches the model chosen for MCP servers' sampling requests (`connect` it).

        A key typed for the chat goes along only to the same provider and base URL: like any typed
        key, it is never sent to another server."""
        choice = self.sampling
        if choice is None:
            return self
        return self.model_copy(
            update={
                "provider": choice.provider,
                "base_url": choice.base_url,
                "model_id": choice.model_id,
                "api_key": choice.api_key or self.typed_key_for(choice.provider, choice.base_url),
                "sampling": None,
            }
        )

    def loop_config(self, max_turns: int | None = None) -> AgentLoopConfig:
        """The agent loop's settings for this setup (`max_turns`: the loop's default when None)."""
        limits = {} if max_turns is None else {"max_turns": max_turns}
        return AgentLoopConfig(
            tool_execution=self.tool_execution,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            response_schema=self.response_schema,
            **limits,
        )

    @field_validator("response_schema")
    @classmethod
    def _usable_schema(cls, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        if schema is not None:
            try:
                usable_validator(schema)
            except UnusableSchemaError as error:
                raise ResponseSchemaError(f"the response schema cannot be used: {error}") from None
        return schema


class Preset(BaseModel):
    """A named setup, as Chat saves it and Compare and Experiments start from it; no key."""

    name: str
    setup: ModelSetup
