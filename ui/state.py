"""Every `st.session_state` key that more than one module shares, each with its type.

A page or drawing part reads and writes these through their `Key`, never through a string, so a
key is spelt once and read as its type, not as `Any`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast, overload

import streamlit as st

if TYPE_CHECKING:
    from yiem.agent import Agent
    from yiem.chat import ChatSession
    from yiem.explorer import ServerQuestions
    from yiem.identity import Owner
    from yiem.llm import LlmClient
    from yiem.mcp import McpClient
    from yiem.model_setup import ModelSetup
    from yiem.store import ConversationStore
    from yiem.tool_registry import ToolRegistry
    from yiem.types import LlmModel, UserMessage

T = TypeVar("T")


@dataclass(frozen=True)
class Key(Generic[T]):
    """One session key and the type of what it holds."""

    name: str

    def __call__(self) -> T:
        """The value; the key must be set (ui.bootstrap.ensure_session sets the session's objects)."""
        return cast(T, st.session_state[self.name])

    @overload
    def get(self) -> T | None: ...
    @overload
    def get(self, default: T) -> T: ...
    def get(self, default: T | None = None) -> T | None:
        return cast("T | None", st.session_state.get(self.name, default))

    def set(self, value: T) -> None:
        st.session_state[self.name] = value

    def pop(self) -> T | None:
        return cast("T | None", st.session_state.pop(self.name, None))

    def setdefault(self, make: Callable[[], T]) -> T:
        if self.name not in st.session_state:
            st.session_state[self.name] = make()
        return self()

    def present(self) -> bool:
        return self.name in st.session_state


# The session's objects, made once by ui.bootstrap.ensure_session.
OWNER: Key[Owner] = Key("owner")
"""Who is signed in, or the local user; every store query is theirs."""
STORE: Key[ConversationStore] = Key("store")
CHAT: Key[ChatSession] = Key("chat")
SETTINGS: Key[ModelSetup] = Key("settings")
"""The model settings the Chat page sends with."""
TOOL_REGISTRY: Key[ToolRegistry] = Key("tool_registry")
MCP_CLIENTS: Key[dict[str, McpClient]] = Key("mcp_clients")
"""Server name -> its client."""
MCP_ERRORS: Key[dict[str, str]] = Key("mcp_errors")
"""Server name -> why it could not start."""
MCP_QUESTIONS: Key[ServerQuestions] = Key("mcp_questions")
"""What servers ask the person, answered on the Tools page."""
ENABLED_TOOLS: Key[set[str]] = Key("enabled_tools")
"""The names of the tools the Chat model may call."""
SESSION_RESOURCES: Key[object] = Key("yiem_session_resources")
"""Lives exactly as long as the session: its finalizer closes the session's MCP clients."""

# The Chat page's run to run hand-overs.
NOTICE: Key[str] = Key("yiem_notice")
"""An error the Chat page draws above its input on the next run."""
UNSENT: Key[str] = Key("yiem_unsent")
"""Text to put back into the chat input on the next run."""
PENDING: Key[UserMessage] = Key("yiem_pending")
"""A resend that Edit or Regenerate queued for the next run (ui.chat.prompt_in takes it)."""
FILLED_PROMPT: Key[str] = Key("yiem_prompt_send")
"""A saved prompt filled in and sent from the library, taken as if it had been typed."""
CLIENT: Key[tuple[Any, LlmClient, LlmModel]] = Key("yiem_client")
"""The connected model client with the settings fingerprint it was made for."""
AGENT: Key[Agent] = Key("agent")
"""The agent of the latest send."""
MODEL_LISTS: Key[dict[Any, tuple[list[str], str | None]]] = Key("yiem_model_lists")
"""Each provider's model list as last fetched, and why it could not be, keyed by where it came from."""
