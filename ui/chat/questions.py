"""A server's questions inline in Chat, while a "Use in chat" tool waits for the person's answer.

Every click reruns a Streamlit page, which would end the run whose tool waits. So once a server
has asked something during a run, a rerun parks the run (its events keep arriving in their worker
thread) and the page's next run picks it up again where it was (`ui.chat.live.resume`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner_utils.exceptions import RerunException, StopException

from ui.server_questions import draw_agreed_links, draw_question, server_questions
from ui.state import PARKED_RUNS
from yiem.agent import Agent
from yiem.chat import BackgroundEvents
from yiem.explorer import ServerQuestions
from yiem.types import LlmModel, UserMessage

HAND_OVER_S = 10.0  # longest wait for an interrupted run to park (it notices within a redraw)


class InlineQuestions:
    """The open questions of this session's servers, drawn where the run is on the page."""

    def __init__(self, questions: ServerQuestions) -> None:
        self.questions = questions
        self.asked = False  # a server asked during this run: from now on a rerun parks it
        self._slots: dict[str, Any] = {}

    def begin(self) -> None:
        """A new script run draws every open question again (the same keys keep what was typed)."""
        self._slots = {}
        if self.asked:
            draw_agreed_links()

    def redraw(self, container: Any) -> None:
        """Draw new questions into `container` (the reply's, when there is one); clear answered ones."""
        pending = self.questions.pending()
        open_ids = {question.id for question in pending}
        for question_id in [known for known in self._slots if known not in open_ids]:
            self._slots.pop(question_id).empty()
        for question in pending:
            if question.id in self._slots:
                continue
            self.asked = True
            with container if container is not None else st.container():
                slot = self._slots[question.id] = st.empty()
            with slot.container(border=True):
                draw_question(question)

    @property
    def waiting(self) -> bool:
        """Whether a question is on the page now, waiting for the person."""
        return bool(self._slots)

    def keeps_running(self, interruption: BaseException) -> bool:
        """Whether the run goes on across this interruption (Streamlit's stop or rerun) once a server
        asked; a Stop is told from a click only afterwards, when no page run takes the run up."""
        return isinstance(interruption, StopException | RerunException) and (
            self.asked or bool(self.questions.pending())
        )


@dataclass
class ParkedRun:
    """A chat run waiting across a rerun: what the page needs to go on drawing it."""

    conversation_id: str
    prompt: UserMessage
    events: BackgroundEvents[Any]
    agent: Agent
    model: LlmModel
    inline: InlineQuestions
    outcome: dict[str, bool] = field(default_factory=lambda: {"interrupted": False})


class ParkedRuns:
    """The run this session is drawing, and the one parked across a rerun (at most one each).

    Streamlit starts the next page run at once while the interrupted one is still being stopped
    (fast reruns), so taking a parked run waits briefly for a run that is about to park.
    """

    def __init__(self) -> None:
        self._drawing: ParkedRun | None = None
        self._parked: ParkedRun | None = None
        self._lock = threading.Lock()
        self._handed_over = threading.Condition(self._lock)

    @contextmanager
    def drawing(self, run: ParkedRun) -> Iterator[None]:
        """While the page draws `run`."""
        with self._lock:
            self._drawing = run
        try:
            yield
        finally:
            with self._lock:
                if self._drawing is run:
                    self._drawing = None
                self._handed_over.notify_all()

    def park(self, run: ParkedRun) -> None:
        with self._lock:
            self._parked = run
            self._handed_over.notify_all()

    def take(self, run: ParkedRun | None = None) -> ParkedRun | None:
        """The parked run (only if it is `run`, when given), no longer parked."""
        with self._lock:
            drawing = self._drawing
            if run is None and drawing is not None and drawing.inline.asked:
                self._handed_over.wait_for(lambda: self._drawing is not drawing, HAND_OVER_S)
            found = self._parked
            if found is None or (run is not None and found is not run):
                return None
            self._parked = None
            return found


def parked_runs() -> ParkedRuns:
    """This session's drawn and parked runs (one object: used while Streamlit is interrupting)."""
    found: ParkedRuns = PARKED_RUNS.setdefault(lambda: ParkedRuns())
    return found


def inline_questions() -> InlineQuestions:
    """Questions for a new run, from this session's servers."""
    return InlineQuestions(server_questions())
