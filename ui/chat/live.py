"""Drawing a chat run as it happens: the streamed reply, running tools, Stop and faults in words."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from time import monotonic
from typing import Any

import streamlit as st

from ui import avatars, bootstrap, messages
from ui.chat import agent as chat_agent
from ui.chat import budget as chat_budget
from ui.chat import history
from ui.chat import settings as chat_settings
from ui.chat import unsent as chat_unsent
from ui.chat.questions import InlineQuestions, ParkedRun, ParkedRuns, inline_questions, parked_runs
from ui.state import NOTICE
from yiem.amounts import duration, elapsed
from yiem.chat import BackgroundEvents, ChatSession, Quiet, reply_caption
from yiem.events import (
    AgentEndEvent,
    AgentEvent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    TurnStartEvent,
)
from yiem.redaction import redact
from yiem.safe_markdown import safe_markdown
from yiem.store import StoreError
from yiem.types import AssistantMessage, AssistantMessageToolCall, UserMessage

# Longest wait for an event before the page redraws (a clock), which is also when it notices a Stop.
WAKE_SECONDS = 0.25

_log = logging.getLogger(__name__)


class _LiveReply:
    """What is on screen for the reply being streamed."""

    def __init__(self) -> None:
        self.reasoning = ""
        self.reasoning_slot: Any = None
        self.note_slot: Any = None  # below the text: a tool call being prepared, or a long wait
        self.note = ""
        self.waiting = False
        self.ended: AssistantMessage | AssistantMessageToolCall | None = None

    def show(self, text: str) -> None:
        if text:
            self.note_slot.caption(text)
        else:
            self.note_slot.empty()


@dataclass
class _RunningTool:
    """A tool call on screen as a running `st.status`; its label shows how long it has run."""

    status: Any
    name: str
    started: float = field(default_factory=monotonic)
    progress: str = ""

    def redraw(self) -> None:
        running = elapsed(monotonic() - self.started)
        self.status.update(label=f"Running tool `{self.name}`… {running} {self.progress}".rstrip())


def _waiting_text(quiet: Quiet) -> str:
    return "Waiting for the model…" + (f" {elapsed(quiet.seconds)}" if quiet.seconds >= 1 else "")


def _text_deltas(events: Iterator[AgentEvent | Quiet], live: _LiveReply) -> Iterator[str]:
    # Yields the reply's text while drawing reasoning and tool-call progress beside it;
    # stops at the end of this assistant message and leaves the rest of the events to the caller.
    for event in events:
        if isinstance(event, Quiet):
            # Drawing something is also how a Stop pressed meanwhile takes effect (see `run`). A
            # pause under a second redraws the note as it is, so slow tokens do not make it flicker.
            live.waiting = event.seconds >= 1
            live.show(_waiting_text(event) if live.waiting else live.note)
        elif isinstance(event, MessageUpdateEvent):
            if event.kind == "toolcall":
                names = [call.name for call in getattr(event.message, "tool_calls", [])]
                live.note = f"Preparing a tool call… {', '.join(names)}"
                live.waiting = False
                live.show(live.note)
            elif live.waiting:
                live.waiting = False
                live.show(live.note)
            if event.kind == "text":
                yield event.delta
            elif event.kind == "reasoning":
                live.reasoning += event.delta
                with live.reasoning_slot.container(), st.expander("Reasoning", expanded=False):
                    st.markdown(safe_markdown(live.reasoning))
        elif isinstance(event, MessageEndEvent):
            message = event.message
            if isinstance(message, AssistantMessage | AssistantMessageToolCall):
                live.ended = message
            return


def _draw_reply(events: Iterator[AgentEvent | Quiet]) -> None:
    live = _LiveReply()
    live.reasoning_slot = st.empty()  # becomes an expander once reasoning arrives
    text = st.container()
    live.note_slot = st.empty()
    # Drawn as it grows, each time through safe_markdown: no image in a reply loads from the network.
    slot, shown = text.empty(), ""
    for delta in _text_deltas(events, live):
        shown += delta
        slot.markdown(safe_markdown(shown))
    live.note_slot.empty()
    if live.ended is not None:
        history.draw_failure(live.ended)
        st.caption(reply_caption(live.ended))


def _draw_run(events: Iterator[AgentEvent | Quiet], inline: InlineQuestions) -> str | None:
    """Draw the run as it happens; returns the loop's own error (one no reply carries), if any."""
    container: Any = None
    inline.begin()
    notice: str | None = None
    running: dict[str, _RunningTool] = {}
    waiting: Any = st.empty()  # "Waiting for the model…" where the next reply will appear
    for event in events:
        if isinstance(event, Quiet):
            # Each wake-up redraws something, which is also where Streamlit raises a pending Stop.
            for tool in running.values():
                tool.redraw()
            inline.redraw(container)  # a server's question to the person, while its tool waits
            if inline.waiting:
                waiting.caption("Waiting for your answer to the question below…")
            elif not running:
                waiting.caption(_waiting_text(event))
        elif isinstance(event, TurnStartEvent):
            waiting = st.empty()
        elif isinstance(event, MessageStartEvent) and isinstance(
            event.message, AssistantMessage | AssistantMessageToolCall
        ):
            waiting.empty()
            container = st.chat_message("assistant", avatar=avatars.ASSISTANT)
            with container:
                _draw_reply(events)
        elif isinstance(event, ToolExecutionStartEvent):
            with container or st.chat_message("assistant", avatar=avatars.ASSISTANT):
                status = st.status(f"Running tool `{event.tool_call.name}`…", expanded=False)
                # Collapsed: each redraw of the label would collapse it anyway. And not `with status:`:
                # leaving that block marks the status complete while the tool still runs.
                status.caption("Arguments")
                messages.json_block(event.args, into=status)
                running[event.tool_call.id] = _RunningTool(status, event.tool_call.name)
        elif isinstance(event, ToolExecutionUpdateEvent):
            reporting = running.get(event.tool_call.id)
            if reporting is not None:
                progress = "" if event.progress is None else f"{event.progress:g}"
                progress += f" of {event.total:g}" if event.progress is not None and event.total else ""
                reporting.progress = f"{progress} {event.message or ''}".strip()
                reporting.redraw()
        elif isinstance(event, ToolExecutionEndEvent):
            done = running.pop(event.tool_call.id, None)
            status = done.status if done else st.status(f"Tool `{event.tool_call.name}`")
            failed = event.is_error
            # The final state first: leaving `with status:` would otherwise mark a failure complete.
            status.update(
                label=f"Tool `{event.tool_call.name}` {'failed' if failed else 'done'} "
                f"({duration(event.duration_ms)})",
                state="error" if failed else "complete",
                expanded=False,
            )
            with status:
                st.caption("Result")
                messages.draw_tool_result(event.result, copyable=True)
        elif isinstance(event, AgentEndEvent) and event.error_message and event.stop_reason != "aborted":
            # Errors of a reply are drawn with it; this is for the loop's own (e.g. too many turns).
            shown = any(
                isinstance(m, AssistantMessage | AssistantMessageToolCall) and m.error_message
                for m in event.messages
            )
            if not shown:
                notice = event.error_message
    return notice


@st.fragment(run_every=1)
def _redraw_when_interrupted(outcome: dict[str, bool], run: ParkedRun) -> None:
    # After a Stop the script cannot draw what the stopped run saved (the aborted tool results, the
    # "Stopped" note), so the page would keep showing a running tool. This fragment, drawn during
    # the run, ticks on after it; the tick after a Stop redraws the page from the store. A run that
    # ends normally, or with a fault while drawing, reruns the page without it, which ends its ticking.
    if outcome["interrupted"]:
        outcome["interrupted"] = False
        st.rerun(scope="app")
    if parked_runs().take(run) is not None:
        # Parked while a server asked, and no page run took it up: that was a Stop, not a click
        # (Streamlit stops the script alike for both), so the run ends as a Stop ends it.
        _end(run, "Stopped by the user")
        st.rerun(scope="app")


def _end(run: ParkedRun, reason: str) -> None:
    """Abort the run and wait until it has saved what it has (its open questions are cancelled)."""
    run.inline.questions.withdraw("The chat's run was stopped.")
    run.agent.abort(reason)
    for _event in run.events:
        pass


def run(chat: ChatSession, prompt: UserMessage, show_in_url: Callable[[], None]) -> None:
    """Run the agent on `prompt` in this conversation, drawing it as it goes; reruns the page after."""
    if not chat.is_resend(prompt):  # a regenerated prompt is drawn in the history already
        with st.chat_message("user", avatar=avatars.USER):
            messages.draw_blocks(prompt.content)
    settings = bootstrap.settings()
    # Saved before anything can fail, and named in the URL, so the prompt survives a Stop or a crash.
    try:
        chat.keep_prompt(
            prompt,
            settings.provider,
            settings.model_id,
            settings.system_prompt,
            setup=chat_settings.current_setup(),
        )
    except StoreError as error:
        chat_unsent.keep_unsent(chat, prompt, error)
        st.rerun()
    show_in_url()
    try:
        run_agent, model, agent = chat_agent.prepare()
    except chat_agent.ChatSetupError as error:
        chat.reload()  # a regenerated prompt's earlier replies come back into view: nothing was added
        NOTICE.set(
            f"{error} Your message is {'kept here' if chat.temporary else 'saved'}; press Regenerate "
            "after changing the settings."
        )
        st.rerun()
    if chat_budget.refused(chat, model, settings.max_tokens):  # before any request: the prompt goes back
        st.rerun()
    parked = parked_runs()  # before the run starts: while Streamlit interrupts, session state is out of reach
    # The loop runs (and saves each message as it ends) in a worker thread. Streamlit raises a Stop
    # only inside an `st` call of this thread, so this thread must wake while a tool runs quietly.
    events = BackgroundEvents(chat.answer(run_agent, model), interval=WAKE_SECONDS)
    conversation_id = chat.conversation_id or ""
    _follow(chat, ParkedRun(conversation_id, prompt, events, agent, model, inline_questions()), parked)


def resume(chat: ChatSession) -> None:
    """Go on drawing a run parked across a rerun (see ui.chat.questions); one of another
    conversation (the person opened it meanwhile) is stopped, keeping what it saved."""
    parked = parked_runs()
    run = parked.take()
    if run is None:
        return
    if run.conversation_id != chat.conversation_id:
        _end(run, "Stopped: another conversation was opened")
        return
    _follow(chat, run, parked)


def _follow(chat: ChatSession, run: ParkedRun, parked: ParkedRuns) -> None:
    """Draw `run` to its end, then rerun the page; a Stop or a fault ends it, keeping what it saved."""
    with parked.drawing(run):
        notice = _draw_and_catch(chat, run, parked)
    if notice:
        NOTICE.set(notice)
    chat_agent.start_title(run.agent, run.model)  # in the background: the sidebar shows it on a later rerun
    # Draw the page again from the store: the sidebar, the history and its buttons now include this run.
    st.rerun()


def _draw_and_catch(chat: ChatSession, run: ParkedRun, parked: ParkedRuns) -> str | None:
    events, agent, prompt, outcome = run.events, run.agent, run.prompt, run.outcome
    try:
        # In here, not before: a page run that took a parked run can be stopped at this first `st`
        # call (another click came while it waited for the hand-over); the run must park again.
        _redraw_when_interrupted(outcome, run)
        return _draw_run(events, run.inline)
    except StoreError as error:
        # A reply could not be saved (database locked, deleted conversation, damaged file): the run
        # ends, and the page says so instead of crashing.
        agent.abort("The reply could not be saved")
        for _event in events:
            pass
        chat_unsent.reply_not_saved(chat, prompt, error)
        st.rerun()
    except Exception as error:
        # A fault while drawing (not a Stop): end the run as a Stop would, so what it saved stays,
        # and draw the page again from the store with the fault in words. That full rerun does not
        # draw the redraw fragment, so its ticking ends now rather than at the next message.
        _log.exception("The Chat page failed while drawing a run")
        agent.abort("The page failed while showing the reply")
        for _event in events:
            pass
        NOTICE.set(
            f"Something went wrong while showing the reply ({redact(str(error)) or type(error).__name__}). "
            "What was saved is shown above; you can send again or press Regenerate."
        )
        st.rerun()
    except BaseException as interruption:
        if run.inline.keeps_running(interruption):
            parked.park(run)  # a server waits for the person's answer: the next run goes on drawing
            raise
        # Streamlit's Stop or a rerun (BaseExceptions): abort the model and drain the loop so the
        # partial reply and every tool result are saved, then let Streamlit carry on stopping.
        # Nothing here may touch `st` (not even session state): while stopping, every call raises again.
        _end(run, "Stopped by the user")
        outcome["interrupted"] = True
        raise
