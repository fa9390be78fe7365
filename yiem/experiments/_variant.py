"""Variants: one way of doing the task (model, system prompt, sampling, tools, loop limits)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from yiem.chat import ChatSetup, fill_template
from yiem.errors import YiemError
from yiem.json_schema import UnusableSchemaError, usable_validator
from yiem.llm import LlmClient
from yiem.types import AgentLoopConfig, AgentTool, LlmModel

CUSTOM_PROVIDER = "custom"
"""The provider key (for concurrency and costs) of a variant that carries its own `LlmClient`."""


class VariantError(YiemError):
    """A variant cannot run as configured (no model, a missing tool, a provider that will not connect)."""


class Variant(BaseModel):
    """A name, a model (provider settings, or any `LlmClient` in Python), a system prompt template over
    the item's vars, temperature and max tokens, the tools it may call, max turns and tool mode."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str
    provider: str = ""
    model_id: str = ""
    base_url: str = ""
    system_prompt: str = ""
    temperature: float | None = None
    max_tokens: int | None = None
    tools: list[str] = Field(default_factory=list)
    max_turns: int = Field(default=10, ge=1)
    tool_execution: Literal["parallel", "sequential"] = "parallel"
    # Structured output: the answer must be JSON this schema accepts (checked to be a schema here).
    response_schema: dict[str, Any] | None = None
    # Python only: a client object (e.g. ScriptedLlm) and its model instead of provider settings.
    llm: LlmClient | None = Field(default=None, exclude=True, repr=False)
    model: LlmModel | None = Field(default=None, exclude=True, repr=False)
    # Typed in the page for one session, or passed in Python; never stored or exported.
    api_key: str = Field(default="", exclude=True, repr=False)

    @classmethod
    def from_setup(cls, name: str, setup: ChatSetup) -> Variant:
        """A variant named `name` doing what a Chat setup (a preset) does."""
        return cls(
            name=name,
            provider=setup.provider,
            model_id=setup.model_id,
            base_url=setup.base_url,
            system_prompt=setup.system_prompt,
            temperature=setup.temperature,
            max_tokens=setup.max_tokens,
            tools=list(setup.tools),
            tool_execution=setup.tool_execution,
        )

    @property
    def provider_key(self) -> str:
        """What concurrency is bounded by: the provider's name, or `custom` for a client object."""
        if self.llm is not None:
            return self.model.provider if self.model is not None and self.model.provider else CUSTOM_PROVIDER
        return self.provider or CUSTOM_PROVIDER

    @property
    def label(self) -> str:
        """`provider/model` for tables and charts."""
        if self.llm is not None:
            return self.model.id if self.model is not None else CUSTOM_PROVIDER
        return f"{self.provider}/{self.model_id}" if self.provider else self.model_id

    def render_system_prompt(self, vars: Mapping[str, str]) -> str:
        """The system prompt with `{name}` (or `{{name}}`) replaced by the item's vars; others kept as is."""
        return fill_template(self.system_prompt, vars)

    def loop_config(self) -> AgentLoopConfig:
        """The agent loop's settings for this variant."""
        return AgentLoopConfig(
            tool_execution=self.tool_execution,
            max_turns=self.max_turns,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            response_schema=self.response_schema,
        )

    @field_validator("response_schema")
    @classmethod
    def _valid_schema(cls, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        if schema is not None:
            try:
                usable_validator(schema)
            except UnusableSchemaError as error:
                raise ValueError(f"the response schema cannot be used: {error}") from None
        return schema

    def connect(self) -> tuple[LlmClient, LlmModel]:
        """The client and model to run; `VariantError` says what to change when that fails."""
        if self.llm is not None:
            return self.llm, self.model or LlmModel(id=self.name, provider=CUSTOM_PROVIDER)
        from yiem.chat import ChatSettings, ModelSettingsError, connect

        # Only a key given with the variant goes in the settings: `connect` looks up the server's own
        # key (environment, secrets.toml) and sends it only to the base URL it was configured for.
        settings = ChatSettings(
            provider=self.provider or "local",
            base_url=self.base_url,
            model_id=self.model_id,
            api_key=self.api_key,
        )
        try:
            return connect(settings)
        except ModelSettingsError as error:
            raise VariantError(f"Variant {self.name!r}: {error}") from error

    def select_tools(self, available: Mapping[str, AgentTool]) -> list[AgentTool]:
        """The tools this variant may call, from `available`; a missing one is an error, not a skip."""
        missing = [name for name in self.tools if name not in available]
        if missing:
            raise VariantError(
                f"Variant {self.name!r} uses tool(s) {', '.join(missing)} that no connected MCP server "
                "offers; connect the server on the Tools page or remove the tool from the variant."
            )
        return [available[name] for name in self.tools]

    def settings_dict(self) -> dict[str, Any]:
        """What is stored with a run: everything but client objects and keys."""
        return self.model_dump(mode="json")
