"""`Agent`: an `AgentState` (SP-020) driven by the agent loop, with prompt, abort and listeners."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator

from yiem.errors import YiemError
from yiem.events import (
    AgentEndEvent,
    AgentEvent,
    AgentStartEvent,
    MessageEndEvent,
    MessageStartEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
)
from yiem.llm import LlmClient
from yiem.loop import run_agent_loop
from yiem.types import (
    AbortSignal,
    AgentContext,
    AgentLoopConfig,
    AgentMessage,
    AgentState,
    AgentTool,
    AssistantMessageToolCall,
    ImageContent,
    LlmModel,
    TextContent,
    ToolResultMessage,
    UserMessage,
)

logger = logging.getLogger(__name__)

Listener = Callable[[AgentEvent], None]


class AgentError(YiemError):
    """The agent cannot do what was asked in its current state."""


class AgentBusyError(AgentError):
    """A prompt is already running."""


class Agent:
    """A conversation with one model and its tools; `prompt` yields the loop's events as they happen."""

    def __init__(
        self,
        llm: LlmClient,
        model: LlmModel | None = None,
        *,
        system_prompt: str = "",
        tools: Iterable[AgentTool] = (),
        config: AgentLoopConfig | None = None,
    ) -> None:
        self.llm = llm
        self.config = config or AgentLoopConfig()
        self.state = AgentState(
            system_prompt=system_prompt, model=model, tools={tool.name: tool for tool in tools}
        )
        self._listeners: list[Listener] = []
        self._lock = threading.Lock()
        self._signal: AbortSignal | None = None

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener(event)` for every event; returns a function that unsubscribes it."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def prompt(self, message: str | UserMessage, images: Iterable[ImageContent] = ()) -> Iterator[AgentEvent]:
        """Send a user message (text and images, or a `UserMessage` as it is) and run the loop.

        Iterate the result to drive it, to its end or `close()`.
        """
        user = _user_message(message, images)
        if self.state.model is None:
            raise AgentError("The agent has no model: set `agent.state.model` before prompting")
        with self._lock:
            if self.state.is_running:
                raise AgentBusyError(
                    "The agent is still answering the previous prompt; wait for it or abort it"
                )
            self.state.is_running = True
            self.state.error_message = None
            self._signal = AbortSignal()
        return self._run(user, self.state.model, self._signal)

    def abort(self, reason: str | None = None) -> None:
        """Stop the running prompt (safe from any thread); running tools see their signal."""
        signal = self._signal
        if signal is not None:
            signal.abort(reason)

    def reset(self) -> None:
        """Forget the conversation; tools, model and system prompt stay."""
        if self.state.is_running:
            raise AgentBusyError("Cannot reset while the agent is answering; abort it first")
        self.state.messages = []
        self.state.pending_tool_calls = []
        self.state.error_message = None

    def _run(self, user: UserMessage, model: LlmModel, signal: AbortSignal) -> Iterator[AgentEvent]:
        events: Iterator[AgentEvent] = iter(())
        finished = False
        try:
            context = AgentContext.model_construct(
                system_prompt=self.state.system_prompt,
                messages=[*self.state.messages, user],
                tools=self.state.tools,
            )
            events = run_agent_loop(context, self.llm, model, self.config, signal)
            for event in events:
                finished = isinstance(event, AgentEndEvent)
                yield self._apply(event)
                if isinstance(event, AgentStartEvent):
                    # The prompt is the run's first message, as in pi-mono's agent.
                    yield self._apply(MessageStartEvent(message=user))
                    yield self._apply(MessageEndEvent(message=user))
        finally:
            if not finished:
                # The caller stopped reading: stop the stream and the tools, keep the history valid.
                signal.abort("the prompt's events were no longer read")
                close = getattr(events, "close", None)
                if close is not None:
                    close()
            self._close_open_tool_calls()
            self.state.pending_tool_calls = []
            self.state.is_running = False

    def _apply(self, event: AgentEvent) -> AgentEvent:
        """Update the state from `event`, then tell the listeners."""
        state = self.state
        if isinstance(event, MessageEndEvent):
            state.messages.append(event.message)
        elif isinstance(event, ToolExecutionStartEvent):
            state.pending_tool_calls.append(event.tool_call.id)
        elif isinstance(event, ToolExecutionEndEvent):
            if event.tool_call.id in state.pending_tool_calls:
                state.pending_tool_calls.remove(event.tool_call.id)
        elif isinstance(event, AgentEndEvent):
            state.error_message = event.error_message
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(event)
            except Exception:
                logger.exception("an agent listener failed on %s", event.type)
        return event

    def _close_open_tool_calls(self) -> None:
        """When iteration stopped early, give every tool call without a result an `aborted` one."""
        answered = {m.tool_call_id for m in self.state.messages if isinstance(m, ToolResultMessage)}
        missing: list[AgentMessage] = []
        for message in self.state.messages:
            if isinstance(message, AssistantMessageToolCall):
                for call in message.tool_calls:
                    if call.id not in answered:
                        answered.add(call.id)
                        missing.append(
                            ToolResultMessage(
                                tool_call_id=call.id,
                                tool_name=call.name,
                                content=[TextContent(text="Tool call aborted")],
                                is_error=True,
                            )
                        )
        self.state.messages.extend(missing)


def _user_message(message: str | UserMessage, images: Iterable[ImageContent]) -> UserMessage:
    if isinstance(message, UserMessage):
        extra = list(images)
        # The message itself goes into the history (its timestamp kept); images given beside it join it.
        return message.model_copy(update={"content": [*message.content, *extra]}) if extra else message
    return UserMessage.from_text(message, images)
