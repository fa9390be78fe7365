"""The chat's Agent for this session: built from the settings and the enabled tools."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import streamlit as st

from ui import bootstrap
from ui.model_form import NO_TOOLS_SENT
from ui.state import (
    AGENT,
    CATALOG_MODEL,
    CHAT,
    CLIENT,
    ENABLED_TOOLS,
    LLM_OVERRIDE,
    TITLE_OVERRIDE,
    TITLE_THREAD,
    TOOL_REGISTRY,
)
from yiem.agent import Agent
from yiem.chat import RunAgent
from yiem.events import AgentEvent
from yiem.llm import LlmClient
from yiem.model_setup import (
    LOCAL,
    ModelSettingsError,
    calls_tools,
    connect,
    running_local_model,
    takes_images,
)
from yiem.providers.catalog import get_model
from yiem.types import AgentMessage, LlmModel, UserMessage


class ChatSetupError(Exception):
    """The chat cannot reach a model with the current settings; the message says what to change."""


def _client() -> tuple[LlmClient, LlmModel]:
    override = LLM_OVERRIDE.get()
    if override is not None:
        client, model = override
        return client, model
    settings = bootstrap.settings()
    fingerprint = (settings.provider, settings.base_url, settings.model_id, settings.api_key)
    cached = CLIENT.get()
    if cached is not None and cached[0] == fingerprint:
        return cached[1], cached[2]
    waiting = "Starting the local model…" if settings.provider == LOCAL else "Connecting…"
    try:
        with st.spinner(waiting):
            client, model = connect(settings, bootstrap.secret)
    except ModelSettingsError as error:
        raise ChatSetupError(str(error)) from error
    if cached is not None:
        close = getattr(cached[1], "close", None)  # the settings changed: free the old connections
        if close is not None:
            close()
    CLIENT.set((fingerprint, client, model))
    return client, model


def current_model() -> LlmModel | None:
    """The model the next message goes to, found without connecting; None while it is not known yet."""
    override = LLM_OVERRIDE.get()
    if override is not None:
        return override[1]  # type: ignore[no-any-return]
    settings = bootstrap.settings()
    fingerprint = (settings.provider, settings.base_url, settings.model_id, settings.api_key)
    cached = CLIENT.get()
    if cached is not None and cached[0] == fingerprint:
        return cached[2]  # type: ignore[no-any-return]
    if settings.provider == LOCAL:
        return running_local_model()  # its window is the server's n_ctx, known once it runs
    if not settings.model_id:
        return None
    # The catalogue is read once per choice of model, not on every rerun.
    known = CATALOG_MODEL.get()
    if known is None or known[0] != fingerprint:
        known = (
            fingerprint,
            get_model(settings.provider, settings.model_id, base_url=settings.base_url or None),
        )
        CATALOG_MODEL.set(known)
    return known[1]  # type: ignore[no-any-return]


def provider() -> str:
    """The provider the next message goes to (the tests' scripted model's, when one is set)."""
    override = LLM_OVERRIDE.get()
    return str(override[1].provider) if override is not None else bootstrap.settings().provider


def tools_note() -> str | None:
    """Why enabled tools will not be sent to the chosen model, if they will not."""
    enabled: set[str] = ENABLED_TOOLS.get(set())
    if not enabled or calls_tools(provider()):
        return None
    return NO_TOOLS_SENT


def accepts_images() -> bool:
    """Whether the chosen model takes images (so the chat input offers to attach them)."""
    override = LLM_OVERRIDE.get()
    if override is not None:
        return "image" in override[1].input
    settings = bootstrap.settings()
    return takes_images(settings.provider, settings.model_id)


def prepare() -> tuple[RunAgent, LlmModel, Agent]:
    """An Agent for the next message, a function that runs it on a history and a prompt, and its model.

    Keep the returned agent to abort it: once Streamlit is stopping, even reading session state
    raises its stop exception again.
    """
    client, model = _client()
    settings = bootstrap.settings()
    registry: Any = TOOL_REGISTRY()
    enabled: set[str] = ENABLED_TOOLS()
    tools = [tool for name, tool in registry.tools.items() if name in enabled and calls_tools(model.provider)]
    config = settings.loop_config()  # sampling, tool calls' order and the response schema
    # Every request of the run (each turn) is checked against the spending limits before it is sent.
    budgeted = CHAT().budget.wrap(client)
    agent = Agent(budgeted, model, system_prompt=settings.system_prompt, tools=tools, config=config)
    AGENT.set(agent)

    def run_agent(history: list[AgentMessage], prompt: UserMessage) -> Iterator[AgentEvent]:
        agent.state.messages = list(history)
        return agent.prompt(prompt)

    return run_agent, model, agent


def start_title(agent: Agent, model: LlmModel) -> None:
    """After a first reply, let the chat's model title the conversation in the background."""
    chat = CHAT()
    client: LlmClient | None = agent.llm
    if LLM_OVERRIDE.get() is not None:
        # A test's scripted model answers only what its test scripted: titles need their own.
        title_client = TITLE_OVERRIDE.get()
        client = None if title_client is None else chat.budget.wrap(title_client)
    if client is not None:
        TITLE_THREAD.set(chat.title_after_first_reply(client, model))
