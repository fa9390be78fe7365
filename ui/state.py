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
    import threading
    from datetime import datetime

    import pandas as pd

    from yiem.agent import Agent
    from yiem.chat import ChatSession, Document, SavedPrompt
    from yiem.checks import CheckRun
    from yiem.compare import Comparison
    from yiem.experiments import BackgroundRun, ExperimentDraft
    from yiem.explorer import CallRecord, ServerEvents, ServerQuestions, ToolCallRun
    from yiem.identity import Owner
    from yiem.llm import LlmClient
    from yiem.mcp import McpClient, McpResourceTemplate, McpServerConfig, McpTool, ResourceContents
    from yiem.model_setup import ModelSetup
    from yiem.store import ConversationStore
    from yiem.tool_registry import ToolRegistry
    from yiem.types import AnyAssistantMessage, LlmModel, UserMessage

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

    def clear(self) -> None:
        """Forget the value (a callback's one step)."""
        st.session_state.pop(self.name, None)

    @overload
    def pop(self) -> T | None: ...
    @overload
    def pop(self, default: T) -> T: ...
    def pop(self, default: T | None = None) -> T | None:
        return cast("T | None", st.session_state.pop(self.name, default))

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
MADE_EXPERIMENT: Key[tuple[str, int, str, str]] = Key("yiem_made_experiment")
"""(conversation id, reply index, experiment id, its name) of the last "Experiment from here"."""
MODEL_LISTS: Key[dict[Any, tuple[list[str], str | None]]] = Key("yiem_model_lists")
"""Each provider's model list as last fetched, and why it could not be, keyed by where it came from."""


def widget(name: str) -> Key[Any]:
    """A form widget's value, by the key its form made (ui.model_form, ui.tool_form)."""
    return Key(name)


def init_widget(name: str, value: Any) -> str:
    """The widget key `name`, holding `value` unless its widget holds one already (a form's start)."""
    if name not in st.session_state:
        st.session_state[name] = value
    return name


def forget(starting: str, keep: tuple[str, ...] = ()) -> None:
    """Drop every key that starts with `starting` (but those in `keep`): their widgets start afresh."""
    for name in [name for name in st.session_state if isinstance(name, str) and name.startswith(starting)]:
        if name not in keep:
            del st.session_state[name]


def clear_session() -> None:
    """Forget everything this session holds (a sign-out)."""
    for name in list(st.session_state.keys()):
        del st.session_state[name]


# Chat.
LLM_OVERRIDE: Key[tuple[LlmClient, LlmModel]] = Key("llm_override")
"""Tests put `(LlmClient, LlmModel)` here to chat with a scripted model instead of the settings'."""
TITLE_OVERRIDE: Key[LlmClient] = Key("llm_title_override")
"""Tests put an `LlmClient` here to title conversations with; with `LLM_OVERRIDE` alone there are none."""
TITLE_THREAD: Key[threading.Thread | None] = Key("yiem_title_thread")  # writing the open conversation's title
CATALOG_MODEL: Key[tuple[Any, LlmModel]] = Key("yiem_model")  # (settings fingerprint, their LlmModel)
BUDGET_WARNING: Key[str] = Key("yiem_budget_warning")
CONTEXT_REFUSED: Key[tuple[str | None, str]] = Key("yiem_refused")  # (conversation id, text) refused
CONTEXT_COUNT: Key[tuple[Any, int]] = Key("yiem_context_count")  # (what was counted, its tokens)
ATTACH_ROUND: Key[int] = Key("yiem_attach_round")  # bumped once a message took the documents
ATTACH_READ: Key[dict[str, Document | str]] = Key("yiem_attach_read")  # file id -> read, or why not
ATTACH_READY: Key[list[Document]] = Key("yiem_attach_ready")  # this run's documents that can be sent
ATTACH_TAKEN: Key[bool] = Key("yiem_attach_taken")  # this run's message took them
HISTORY_SHOWN: Key[tuple[str | None, int]] = Key("yiem_history_shown")  # (conversation, messages drawn)
EDITING: Key[str] = Key("yiem_editing")  # "<conversation id>-<index>" of the prompt being edited
REGEN_MODEL: Key[str] = Key("regen-model")  # the model Regenerate answers with
PROMPT_FORM: Key[SavedPrompt] = Key("yiem_prompt_form")  # the saved prompt whose form is open
LIBRARY_PROBLEM: Key[str] = Key("yiem_library_problem")  # why the last save or delete failed
PRESET_NAME: Key[str] = Key("preset-name")
PROMPT_NAME: Key[str] = Key("prompt-name")
PROMPT_TEXT: Key[str] = Key("prompt-text")
PARKED_RUNS: Key[Any] = Key("chat-parked-runs")  # ui.chat.questions.ParkedRuns (a layer above)
DELETING: Key[str] = Key("yiem_delete")  # the conversation whose delete waits for a yes
TEMPORARY_CHAT: Key[bool] = Key("temporary-chat")
KEPT_VIEWS: Key[set[tuple[str, str, datetime]]] = Key("chat-kept-views")  # (server, URI, read at) stored


def attach_box(round_: int) -> Key[list[Any]]:
    """The documents box of one round (a new round draws an empty box)."""
    return Key(f"attach-{round_}")


def prompt_var(name: str) -> Key[str]:
    return Key(f"prompt-var-{name}")


def chat_setting(field: str) -> Key[Any]:
    """A Settings panel widget: `field` as ui.model_form names it (`url_openai` -> `set-url-openai`)."""
    return Key("set-" + field.replace("_", "-"))


def view_key(call_key: str) -> str:
    """The widget key of one tool call's view; its notice and answers are keyed from it."""
    return f"{call_key}:view"


def view_state(key: str) -> Key[dict[str, Any]]:
    return Key(key)


def view_answers(key: str) -> Key[dict[str, dict[str, Any]]]:
    return Key(f"{key}:answers")


def view_notice(key: str) -> Key[str]:
    """What the view's last message did, said above it on the next run."""
    return Key(f"{key}:notice")


# Compare.
COMPARE_RUN: Key[Comparison] = Key("compare_run")
COMPARE_BLIND: Key[bool] = Key("compare_blind")
COMPARE_VOTED: Key[str] = Key("compare_voted")
COMPARE_SPECS: Key[list[ModelSetup]] = Key("compare_specs")
"""The columns a test (or a saved comparison) starts the page with."""
COMPARE_PICKED: Key[str] = Key("cmp_suggested_prompt")  # the suggestion clicked, sent on the next run
COMPARE_COUNT: Key[int] = Key("cmp_count")
BLIND_TOGGLE: Key[bool] = Key("cmp_blind")  # the "Blind vote" toggle (COMPARE_BLIND: the run's)
COMPARE_LAST_PROMPT: Key[str] = Key("compare_last_prompt")
COMPARE_WIDGET_PREFIX = "cmp_"


def compare_widget(name: str, index: int) -> Key[Any]:
    """Column `index`'s widget `name` (a ui.model_form field, `variant` or `preset`)."""
    return Key(f"{COMPARE_WIDGET_PREFIX}{name}_{index}")


# Costs.
def costs_pick(param: str, current: str | None) -> Key[str | None]:
    """A Costs filter kept in the URL by hand (`experiment`, `source`, `conversation`) while the URL
    holds `current`: drawn anew when the URL changes, so it starts on what the URL says."""
    return Key(f"costs_pick:{param}:{current or ''}")


# A tab set keeps its open tab only when keyed (with on_change="rerun"): unkeyed, it is drawn anew on its
# first tab when an element above it comes or goes (ci39: a reviewer sent back from "Review this run").
def costs_tab(team: bool) -> Key[str]:
    """The Costs page's open tab; the team's view has one more tab ("By person") than one's own."""
    return Key(f"costs_tab:{'team' if team else 'own'}")


# Experiments.
EXPERIMENT_DRAFT: Key[ExperimentDraft] = Key("exp_draft")
EXPERIMENT_ID: Key[str | None] = Key("exp_id")
EXPERIMENT_RUN: Key[BackgroundRun] = Key("exp_live_run")
EDITOR_VERSION: Key[int] = Key("exp_editor_version")  # bumped when the dataset is replaced
# The open tab of each of the page's tab sets (see costs_tab).
EXPERIMENT_TAB: Key[str] = Key("exp_tab")
RESULTS_TAB: Key[str] = Key("exp_results_tab")


def experiment_picker(experiment_id: str | None) -> Key[str]:
    """The Experiments picker's key while `experiment_id` is open (its value: an id, "" for new)."""
    return Key(f"exp_pick:{experiment_id or ''}")


RUN_ERROR: Key[str] = Key("exp_run_error")
EXAMPLE_ERROR: Key[str] = Key("exp_example_error")
SHARE_MESSAGE: Key[str] = Key("exp_share_message")  # what the last share, copy or delete did
REVIEW_ERRORS: Key[dict[str, str]] = Key("yiem_review_errors")
"""Why a review was not kept, by its form's `where` (ui.review_form), drawn under that form next run."""
REVIEWING: Key[str] = Key("yiem_reviewing")
"""The Chat or Compare reply whose review form is open (one at a time): "<kind>_<conversation>_<reply>"."""
EXPERIMENT_WIDGET_PREFIX = "exp_w_"
"""Every editing widget's key starts with it, so opening another experiment clears them."""


def experiment_widget(name: str) -> Key[Any]:
    return Key(EXPERIMENT_WIDGET_PREFIX + name)


def dataset_base(version: int) -> Key[pd.DataFrame]:
    """The table the dataset editor of `version` edits."""
    return experiment_widget(f"dataset_base_{version}")


def review_field(field: str, where: str) -> Key[Any]:
    """One review form's widget (`rating`, `comment`, `expected`, `keep`) for the outcome at `where`."""
    return Key(f"review_{field}_{where}")


# Tools (the MCP explorer).
TOOLS_LISTINGS: Key[dict[tuple[str, str], list[Any]]] = Key("tools-listings")  # (server, kind) -> items
RESOURCE_CONTENTS: Key[tuple[str, str, Any]] = Key(
    "tools-resource-contents"
)  # (server, uri, read or why not)
PROMPT_RESULT: Key[tuple[str, str, Any]] = Key("tools-prompt-result")  # (server, prompt, result or why not)
TOOL_RUN: Key[ToolCallRun] = Key("tools-run")
TOOL_HISTORY: Key[list[CallRecord]] = Key("tools-history")
LAST_CALLS: Key[dict[tuple[str, str], CallRecord]] = Key("tools-last")  # (server, tool) -> last finished
# The key of the view loaded ahead of each tool's next call, and the key of each call's view.
AHEAD_VIEWS: Key[dict[tuple[str, str], str]] = Key("tools-ahead-views")  # (server, tool) -> key
CALL_VIEWS: Key[dict[str, str]] = Key("tools-call-views")  # call record id -> key
CALL_TIMEOUT: Key[float] = Key("tools-timeout")
CALL_TIMEOUT_KEPT: Key[float] = Key("tools-timeout:kept")  # while the field is not drawn
HISTORY_ERROR: Key[str] = Key("tools-history-error")
TOOLS_TAB: Key[str] = Key("tools-tab")
CHECKS_LAST_RUN: Key[tuple[str, CheckRun]] = Key("checks-last-run")  # (collection id, its last run)
CHECKS_ACCEPTED: Key[str] = Key("checks-accepted")
CHECKS_IMPORTED: Key[str] = Key("checks-imported")  # the file id of the upload last imported
SERVER_CHOICE: Key[str] = Key("tools-server")
CHOOSE_NEXT: Key[str] = Key("tools-server-next")  # chosen on the next run: the box may be drawn already
ADDED_SERVERS: Key[dict[str, McpServerConfig]] = Key("tools-added-servers")  # typed in this session
CONNECT_ERRORS: Key[dict[str, str]] = Key("tools-connect-errors")
PINGS: Key[dict[str, str]] = Key("tools-pings")
TOOL_LISTS: Key[dict[str, list[McpTool]]] = Key("tools-lists")
SAVE_PROBLEM: Key[str | None] = Key("tools-save-problem")
SERVER_EVENTS: Key[dict[str, ServerEvents]] = Key("tools-events")
SAMPLING_REPLIES: Key[dict[str, tuple[AnyAssistantMessage, LlmModel]]] = Key("tools-sampling-replies")
AGREED_URLS: Key[list[str]] = Key("tools-agreed-urls")
QUESTIONS_DRAWN: Key[set[str]] = Key("tools-questions-drawn")
SAMPLING_CONVERSATIONS: Key[dict[str, str]] = Key("tools-sampling-conversations")
OPENED_LINKS: Key[dict[str, list[ResourceContents] | str]] = Key("tools-opened-links")
SIGN_IN_NEEDED: Key[dict[str, tuple[str, Any]]] = Key("tools-sign-in-needed")  # server -> (URL, challenge)
SIGN_IN_STARTED: Key[dict[str, str]] = Key("tools-sign-in-started")  # server -> the sign-in page
SIGNED_IN: Key[tuple[str, McpServerConfig]] = Key("tools-signed-in")  # connect it on this run
TASK_RESULT: Key[dict[str, tuple[str, Any, str | None]]] = Key("tools-task-result")
TASK_NOTE: Key[dict[str, str]] = Key("tools-task-note")  # server -> what the last Cancel did
SUBSCRIBED: Key[dict[str, set[str]]] = Key("tools-subscribed")  # server -> URIs
TEMPLATES: Key[dict[str, list[McpResourceTemplate]]] = Key("tools-templates")
TEMPLATE_CONTENTS: Key[tuple[str, str, Any]] = Key("tools-template-contents")


def chosen_resource(server: str) -> Key[str]:
    return Key(f"tools-resource:{server}")


def chosen_prompt(server: str) -> Key[str]:
    return Key(f"tools-prompt:{server}")


def chosen_tool(server: str) -> Key[str]:
    return Key(f"tools-tool:{server}")


def tool_in_chat(name: str) -> Key[bool]:
    return Key(f"tools-use:{name}")


def add_server_field(name: str) -> Key[str]:
    """The add-a-server form's `command`, `args`, `env`, `cwd`, `url` or `headers`."""
    return Key(f"tools-add-{name}")


def sign_in_scope(server: str) -> Key[str]:
    return Key(f"tools-sign-in-scope-{server}")


class FormKeys:
    """The widget keys of one tool-argument form (ui.tool_form): each value's, and its raw-JSON mode's."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.raw_mode = f"{prefix}:@rawmode"
        self.raw_text = f"{prefix}:@raw"
        self.extra = f"{prefix}:@extra"
        self.errors = f"{prefix}:@errors"

    def value(self, name: str) -> str:
        return f"{self.prefix}:{name}"

    def null(self, name: str) -> str:
        return f"{self.prefix}:{name}:null"
