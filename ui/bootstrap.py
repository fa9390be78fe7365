"""The Streamlit session's objects: store, model settings, tools and chat, created once per session.

Their session keys and types are in ui.state.
"""

from __future__ import annotations

import contextlib
import os
import weakref
from pathlib import Path

import streamlit as st
from sqlalchemy.engine import Engine

from ui import account
from ui.state import (
    CHAT,
    ENABLED_TOOLS,
    MCP_CLIENTS,
    MCP_ERRORS,
    MCP_QUESTIONS,
    OWNER,
    SESSION_RESOURCES,
    SETTINGS,
    STORE,
    TOOL_REGISTRY,
    clear_session,
)
from yiem.chat import ChatLibrary, ChatSession, stored_setup
from yiem.checks import SavedChecks
from yiem.explorer import GrantVault, ServerQuestions
from yiem.identity import Owner
from yiem.mcp import (
    GrantAuth,
    HttpServerConfig,
    McpClient,
    McpConfigError,
    McpError,
    McpServerConfig,
    connect_server,
    load_mcp_config,
    resolve_server,
)
from yiem.model_setup import ModelSetup, default_settings, register_server_secrets
from yiem.providers import configured_secret
from yiem.redaction import install_log_redaction, redact
from yiem.store import ConversationStore, StoreError, create_store_engine, database_url
from yiem.tool_registry import ToolRegistry


@st.cache_resource(show_spinner=False)
def store_engine(url: str) -> Engine:
    """One engine (and connection pool) per database for every session of this server process."""
    return create_store_engine(url)


def secret(name: str) -> str:
    """A provider key from the environment or `.streamlit/secrets.toml` (never from the database)."""
    return configured_secret(name)


def ensure_session() -> None:
    """Create whatever this session lacks; cheap when everything is there already.

    With sign-in on and nobody signed in, draws the sign-in page and stops (see ui.account)."""
    owner = account.current_owner()
    previous = OWNER.get()
    if previous is not None and previous.id != owner.id:
        # Another person in this browser session (signed out, then in as someone else): nothing of
        # the previous person's (open conversation, settings, typed keys, tools) may stay.
        clear_session()
    OWNER.set(owner)
    if not SETTINGS.present():
        # Before anything is stored, logged or shown: every secret the server holds is masked.
        install_log_redaction()
        register_server_secrets(secret)
    if not STORE.present():
        STORE.set(ConversationStore(store_engine(database_url()), owner.id))
    if not CHAT.present():
        CHAT.set(ChatSession(STORE()))
    if not SETTINGS.present():
        SETTINGS.set(default_settings(secret))
        _start_from_last_setup()
    questions = MCP_QUESTIONS.setdefault(ServerQuestions)
    if not TOOL_REGISTRY.present():
        registry, clients, errors = connect_mcp_servers(questions)
        TOOL_REGISTRY.set(registry)
        MCP_CLIENTS.set(clients)
        MCP_ERRORS.set(errors)
        # When Streamlit drops this session, its MCP servers (child processes, HTTP sessions) end too.
        # The holder is referenced only from session state; clients refer back to the registry, so
        # neither of those could carry the finalizer.
        holder = _SessionResources()
        weakref.finalize(holder, _close_clients, clients)
        SESSION_RESOURCES.set(holder)
    ENABLED_TOOLS.setdefault(set)


def _start_from_last_setup() -> None:
    # A new session starts from the setup last sent with; the store being down only loses that.
    try:
        last = stored_setup(STORE().last_setup())
    except StoreError:
        return
    if last is not None:
        SETTINGS.set(SETTINGS().restored(last))
        ENABLED_TOOLS.set(set(last.tools))


class _SessionResources:
    """Lives exactly as long as one session's state."""


def _close_clients(clients: dict[str, McpClient]) -> None:
    for client in list(clients.values()):
        with contextlib.suppress(Exception):  # a server that is already gone needs no closing
            client.close()


def mcp_config_path() -> Path:
    """`YIEM_MCP_CONFIG`, else `mcp.json` in the working folder."""
    return Path(os.environ.get("YIEM_MCP_CONFIG", "mcp.json"))


def connect_mcp_servers(
    questions: ServerQuestions | None = None,
) -> tuple[ToolRegistry, dict[str, McpClient], dict[str, str]]:
    """Open every server of mcp.json; one that fails is reported by name and the others still work.

    With `questions`, servers may ask the person (elicitation) and use the model (sampling).
    """
    registry = ToolRegistry()
    clients: dict[str, McpClient] = {}
    errors: dict[str, str] = {}
    try:
        config = load_mcp_config(mcp_config_path())
    except McpConfigError as error:
        return registry, clients, {str(mcp_config_path()): redact(str(error))}
    for name, entry in config.servers.items():
        try:
            auth = mcp_auth(name, entry)
            client = (
                connect_server(name, entry, auth=auth, **questions.handlers(name))
                if questions is not None
                else connect_server(name, entry, auth=auth)
            )
        except (McpConfigError, McpError, OSError) as error:
            errors[name] = redact(str(error))
            continue
        try:
            registry.add_mcp_server(name, client)
        except (McpError, ValueError) as error:
            errors[name] = redact(str(error))
            client.close()
            continue
        clients[name] = client
    return registry, clients, errors


def grant_vault() -> GrantVault:
    """This person's sign-ins to OAuth-protected MCP servers (sealed in the store)."""
    return GrantVault(store_engine(database_url()), owner().id)


def library() -> ChatLibrary:
    """This person's saved setups (presets) and prompts, for Chat, Experiments and Compare."""
    return ChatLibrary(store_engine(database_url()), owner().id)


def saved_checks() -> SavedChecks:
    """This person's collections of saved tool calls (and the team's shared ones), for the Tools page."""
    return SavedChecks(store_engine(database_url()), owner().id)


def mcp_auth(name: str, entry: McpServerConfig, *, typed: bool = False) -> GrantAuth | None:
    """The token of this person's sign-in to an HTTP server, if any (`typed`: its URL as typed)."""
    if not isinstance(entry, HttpServerConfig):
        return None
    try:
        resolved = entry if typed else resolve_server(name, entry)
    except McpConfigError:
        return None
    return grant_vault().auth(resolved.url) if isinstance(resolved, HttpServerConfig) else None


def owner() -> Owner:
    """The person using this session (the local user without sign-in)."""
    found = OWNER.get()
    return found if found is not None else account.current_owner()


def may_change_mcp_config() -> bool:
    """Whether this session may write mcp.json, which every later session starts from: an admin
    (without sign-in, the one person of `make run` is)."""
    return owner().is_admin


def settings() -> ModelSetup:
    """This session's model settings."""
    return SETTINGS()
