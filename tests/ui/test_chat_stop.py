"""Stop on the Chat page takes effect while nothing streams: a quiet tool, a model slow to answer.

Streamlit raises its stop exception only inside an `st` call of the script thread. These tests ask
for a Stop exactly as the browser's Stop button does (`request_stop` on the run's script requests)
while the agent yields no event, with a tool and a model that would wait minutes otherwise: the
run ends only because the page wakes, notices the Stop, aborts the agent and saves what it has.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.runtime.forward_msg_queue import ForwardMsgQueue
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx
from streamlit.testing.v1 import AppTest

from ui.chat import agent as chat_agent
from yiem.chat import RunAgent
from yiem.scripted_llm import ScriptedLlm
from yiem.store import ConversationStore, create_store_engine
from yiem.tool_registry import ToolRegistry
from yiem.types import (
    AbortSignal,
    AgentTool,
    AssistantMessage,
    AssistantMessageToolCall,
    LlmModel,
    TextContent,
    ToolResultMessage,
)

ROOT = Path(__file__).resolve().parents[2]
MODEL = LlmModel(id="scripted-1", provider="scripted")
# Far longer than the AppTest timeout: a run that ends did so because Stop took effect.
QUIET_FOR = 300.0
RUN_TIMEOUT = 60


class PageWatch:
    """What the page sends to the browser, as it is sent: status labels and Markdown/caption texts."""

    def __init__(self) -> None:
        self._seen: list[str] = []
        self._changed = threading.Condition()

    def record(self, msg: ForwardMsg) -> None:
        delta = msg.delta
        text = delta.add_block.expandable.label or delta.new_element.markdown.body
        if text:
            with self._changed:
                self._seen.append(text)
                self._changed.notify_all()

    def wait_for(self, pattern: str) -> bool:
        """Block until the page has sent a text matching `pattern` (False after QUIET_FOR s)."""
        with self._changed:
            return self._changed.wait_for(
                lambda: any(re.fullmatch(pattern, text) for text in self._seen), timeout=QUIET_FOR
            )


@pytest.fixture
def page_watch() -> Iterator[PageWatch]:
    watch = PageWatch()
    ForwardMsgQueue.on_before_enqueue_msg(watch.record)
    yield watch
    ForwardMsgQueue.on_before_enqueue_msg(None)


class StopButton:
    """Presses Stop for the run that prepares the agent, as the browser's button does."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self._requests: Any = None
        self.pressed = threading.Event()
        prepare = chat_agent.prepare

        def prepare_and_remember_the_run() -> tuple[RunAgent, LlmModel, Any]:
            ctx = get_script_run_ctx()
            assert ctx is not None and ctx.script_requests is not None
            self._requests = ctx.script_requests
            return prepare()

        monkeypatch.setattr(chat_agent, "prepare", prepare_and_remember_the_run)

    def press(self) -> None:
        assert self._requests is not None, "no run has prepared an agent yet"
        self._requests.request_stop()
        self.pressed.set()


def _app(llm: ScriptedLlm, **state: Any) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=RUN_TIMEOUT)
    at.session_state["llm_override"] = (llm, MODEL)
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def _texts(at: AppTest, role: str) -> list[str]:
    return [
        "\n".join(str(block.value) for block in message.markdown)
        for message in at.chat_message
        if message.name == role
    ]


def test_stop_while_a_quiet_tool_runs_aborts_it_and_keeps_the_chat(
    db_url: str, monkeypatch: pytest.MonkeyPatch, page_watch: PageWatch
) -> None:
    stop = StopButton(monkeypatch)
    finished_on_its_own = threading.Event()

    def wait_quietly(tool_call_id: str, args: dict[str, Any], signal: AbortSignal | None = None) -> str:
        # Reports no progress at all, so the loop yields nothing until this returns. The user
        # presses Stop once the page has shown, while waiting, how long the tool has been running.
        assert signal is not None
        if page_watch.wait_for(r"Running tool `wait_quietly`… \d+ s"):
            stop.press()
        if not signal.wait(QUIET_FOR):
            finished_on_its_own.set()
        return "finished"

    registry = ToolRegistry()
    registry.add_tool(AgentTool(name="wait_quietly", description="Waits.", execute=wait_quietly))
    llm = ScriptedLlm(
        [
            {"toolCalls": [{"id": "call_1", "name": "wait_quietly", "arguments": {}}]},
            "Still here, and the tool was stopped.",
        ]
    )
    at = _app(llm, tool_registry=registry, mcp_clients={}, mcp_errors={}, enabled_tools={"wait_quietly"})
    at.chat_input[0].set_value("Run the slow tool").run()
    assert stop.pressed.is_set() and not finished_on_its_own.is_set()
    assert not at.exception, at.exception
    # While it ran, the page woke up and showed for how long (the run was stopped in that state).
    running = [s.label for s in at.status if "wait_quietly" in s.label]
    assert len(running) == 1 and re.fullmatch(r"Running tool `wait_quietly`… \d+ s", running[0]), running

    store = ConversationStore(create_store_engine(db_url))
    conversation_id = at.query_params["c"]
    saved = store.load_messages(conversation_id)
    assert [m.role for m in saved] == ["user", "assistant", "toolResult"]
    assert isinstance(saved[1], AssistantMessageToolCall)
    result = saved[2]
    assert isinstance(result, ToolResultMessage) and result.is_error
    assert result.tool_call_id == "call_1"
    assert [block.text for block in result.content if isinstance(block, TextContent)] == [
        "Tool call aborted: Stopped by the user"
    ]

    # The next run draws the stopped call from the store, marked failed with its aborted result.
    at.run()
    assert not at.exception, at.exception
    drawn = [e for e in at.expander if "wait_quietly" in e.label]
    assert [e.label for e in drawn] == ["Tool `wait_quietly` failed"] and drawn[0].icon == ":material/error:"
    assert "Tool call aborted: Stopped by the user" in json.dumps([c.value for c in drawn[0].code])

    # And the conversation goes on, with the aborted call and its result in the model's history.
    at.chat_input[0].set_value("Are you still there?").run()
    assert not at.exception, at.exception
    assert "Still here, and the tool was stopped." in _texts(at, "assistant")
    history = llm.requests[1].messages
    assert [m.role for m in history] == ["user", "assistant", "toolResult", "user"]
    assert [m.role for m in store.load_messages(conversation_id)] == [
        "user",
        "assistant",
        "toolResult",
        "user",
        "assistant",
    ]


def test_stop_while_the_model_is_silent_keeps_an_aborted_reply(
    db_url: str, monkeypatch: pytest.MonkeyPatch, page_watch: PageWatch
) -> None:
    stop = StopButton(monkeypatch)
    # The reply starts, then its first words take QUIET_FOR seconds (cut short by an abort).
    llm = ScriptedLlm(["A reply that comes far too slowly."], delay=QUIET_FOR)
    at = _app(llm)

    def press_once_the_page_says_it_waits() -> None:
        if page_watch.wait_for(r"Waiting for the model….*"):
            stop.press()

    presser = threading.Thread(target=press_once_the_page_says_it_waits, daemon=True)
    presser.start()
    at.chat_input[0].set_value("Tell me something").run()
    presser.join(timeout=RUN_TIMEOUT)
    assert stop.pressed.is_set()
    assert not at.exception, at.exception
    assert any(caption.value.startswith("Waiting for the model…") for caption in at.caption)

    saved = ConversationStore(create_store_engine(db_url)).load_messages(at.query_params["c"])
    assert [m.role for m in saved] == ["user", "assistant"]
    assert isinstance(saved[1], AssistantMessage) and saved[1].stop_reason == "aborted"
    assert saved[1].error_message == "Aborted: Stopped by the user"

    at.run()
    assert any("Stopped" in warning.value for warning in at.warning)


def test_a_crash_while_drawing_a_run_ends_it_in_words_and_stops_the_redraw_ticks(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ui.chat import live

    sent: list[str] = []

    def record(msg: ForwardMsg) -> None:
        if msg.HasField("auto_rerun"):
            sent.append("tick registered")
        elif msg.delta.new_element.alert.body:
            sent.append(msg.delta.new_element.alert.body)

    # The drawing fails once, in the middle of the run (after the reply streamed), as a bug would.
    caption = live.reply_caption
    failures = iter([RuntimeError("drawing failed on purpose")])

    def caption_failing_once(message: Any) -> str:
        for failure in failures:
            raise failure
        return caption(message)

    monkeypatch.setattr(live, "reply_caption", caption_failing_once)
    ForwardMsgQueue.on_before_enqueue_msg(record)
    try:
        at = _app(ScriptedLlm(["A reply that is saved."]))
        at.chat_input[0].set_value("hello").run()
    finally:
        ForwardMsgQueue.on_before_enqueue_msg(None)
    assert not at.exception, at.exception  # no crash page: words instead
    notice = [e.value for e in at.error if "drawing failed on purpose" in e.value]
    assert notice and notice[0].startswith("Something went wrong while showing the reply"), notice
    # The page was drawn again from the store after the fault, without the redraw fragment: the
    # browser's ticking ends with that run instead of going on until the next message.
    assert "tick registered" in sent
    assert sent.index(notice[0]) > len(sent) - 1 - sent[::-1].index("tick registered")
    assert _texts(at, "assistant") == ["A reply that is saved."]
    saved = ConversationStore(create_store_engine(db_url)).load_messages(at.query_params["c"])
    assert [m.role for m in saved] == ["user", "assistant"]
