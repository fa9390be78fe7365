"""Variants: one way of doing the task, a named model setup with its loop limits."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ConfigDict, Field

from yiem.errors import YiemError
from yiem.llm import LlmClient
from yiem.model_setup import ModelSettingsError, ModelSetup, calls_tools, connect, fill_template
from yiem.types import AgentLoopConfig, AgentTool, LlmModel

CUSTOM_PROVIDER = "custom"
"""The provider key (for concurrency and costs) of a variant that carries its own `LlmClient`."""


class VariantError(YiemError):
    """A variant cannot run as configured (no model, a missing tool, a provider that will not connect)."""


class Variant(ModelSetup):
    """A named model setup (provider settings, or any `LlmClient` in Python) whose system prompt is a
    template over the item's vars, with the loop's max turns."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str
    max_turns: int = Field(default=10, ge=1)
    # Python only: a client object (e.g. ScriptedLlm) and its model instead of provider settings.
    llm: LlmClient | None = Field(default=None, exclude=True, repr=False)
    model: LlmModel | None = Field(default=None, exclude=True, repr=False)

    @classmethod
    def named(cls, name: str, setup: ModelSetup) -> Variant:
        """A variant named `name` doing what `setup` (a preset saved in Chat) does."""
        return cls.model_validate({**setup.model_dump(), "name": name, "api_key": setup.api_key})

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
        return super().label

    def render_system_prompt(self, vars: Mapping[str, str]) -> str:
        """The system prompt with `{name}` (or `{{name}}`) replaced by the item's vars; others kept as is."""
        return fill_template(self.system_prompt, vars)

    def loop_config(self, max_turns: int | None = None) -> AgentLoopConfig:
        """The agent loop's settings for this variant (its own max turns unless told otherwise)."""
        return super().loop_config(self.max_turns if max_turns is None else max_turns)

    def connect(self) -> tuple[LlmClient, LlmModel]:
        """The client and model to run; `VariantError` says what to change when that fails."""
        if self.llm is not None:
            return self.llm, self.model or LlmModel(id=self.name, provider=CUSTOM_PROVIDER)
        # Only a key given with the variant is in it: `connect` looks up the server's own key
        # (environment, secrets.toml) and sends it only to the base URL it was configured for.
        try:
            return connect(self)
        except ModelSettingsError as error:
            raise VariantError(f"Variant {self.name!r}: {error}") from error

    def select_tools(self, available: Mapping[str, AgentTool]) -> list[AgentTool]:
        """The tools this variant may call, from `available`; a missing one is an error, not a skip.

        The embedded model is sent none, as in Chat and Compare (`calls_tools`); a client object
        of one's own is sent them all."""
        missing = [name for name in self.tools if name not in available]
        if missing:
            raise VariantError(
                f"Variant {self.name!r} uses tool(s) {', '.join(missing)} that no connected MCP server "
                "offers; connect the server on the Tools page or remove the tool from the variant."
            )
        if self.llm is None and not calls_tools(self.provider):
            return []
        return [available[name] for name in self.tools]

    def settings_dict(self) -> dict[str, Any]:
        """What is stored with a run: everything but client objects and keys."""
        return self.model_dump(mode="json")
