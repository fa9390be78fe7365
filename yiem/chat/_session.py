"""One user's chat: the open conversation, its messages, and runs of the agent saved as they go."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

from yiem.amounts import reply_words
from yiem.budgets import BudgetCheck, BudgetGuard
from yiem.chat._stopped_usage import estimate_stopped_usage
from yiem.chat._titles import first_exchange, title_in_background, writes_titles
from yiem.chat._transcript import Transcript
from yiem.errors import YiemError
from yiem.events import AgentEvent, MessageEndEvent
from yiem.llm import LlmClient
from yiem.model_setup import ModelSetup
from yiem.redaction import redact
from yiem.store import Conversation, ConversationStore
from yiem.types import (
    AgentMessage,
    AssistantMessage,
    AssistantMessageToolCall,
    ImageContent,
    LlmModel,
    ToolResultMessage,
    UserMessage,
)

TITLE_LENGTH = 60

RunAgent = Callable[[list[AgentMessage], UserMessage], Iterator[AgentEvent]]
"""Runs the agent on a history and a new prompt; yields the loop's events (see `ChatSession.run`)."""


class ChatSessionError(YiemError):
    """A chat action cannot be done in the current state; the message says why."""


def title_from(text: str) -> str:
    """A conversation title from its first prompt: the first line, shortened."""
    line = text.strip().splitlines()[0] if text.strip() else "New chat"
    return line if len(line) <= TITLE_LENGTH else line[: TITLE_LENGTH - 1].rstrip() + "…"


def user_message(text: str, images: Sequence[ImageContent] = ()) -> UserMessage:
    """The user's prompt as a message: its text (any secret the server knows masked: it is shown, stored
    and sent to the model) and any attached images."""
    return UserMessage.from_text(redact(text), images)


class _Path(NamedTuple):
    """A conversation's chosen path as one run appends to it: messages, stored ids, alternatives."""

    messages: list[AgentMessage]
    ids: list[int]
    siblings: list[tuple[int, ...]]


class ChatSession:
    """The conversation one browser session has open; nothing here is shared between sessions.

    Messages are saved one at a time as each ends, so what is on screen and in the store agree
    up to the message in flight.
    """

    def __init__(self, store: ConversationStore) -> None:
        self.store = store
        self.conversation: Conversation | None = None
        self.messages: list[AgentMessage] = []
        # The spending limits as they apply to this person; `budget.wrap` checks every request of a run.
        self.budget = BudgetGuard(store.engine, store.owner)
        self.message_ids: list[int] = []
        """The stored id of each message on the path (what a new message follows)."""
        self.siblings: list[tuple[int, ...]] = []
        """Each message's alternatives (its own id included), oldest first."""
        self._next_siblings: tuple[int, ...] = ()  # the alternatives the next message joins
        self._resend: UserMessage | None = None  # a saved prompt to answer again (Regenerate)
        self.temporary = False
        """A temporary chat: its messages live in this session only; its usage rows are still saved."""
        self._temporary_prompt = ""  # a temporary chat's system prompt (it has no conversation row)

    @property
    def conversation_id(self) -> str | None:
        return self.conversation.id if self.conversation else None

    def open(self, conversation_id: str) -> None:
        """Load a stored conversation (`ConversationNotFoundError` when it is gone); a hidden one is shown in
        the list from now on."""
        conversation = self.store.get(conversation_id)
        if conversation.hidden:
            # An experiment item's transcript joins Chat's list once someone opens it here.
            self.store.reveal(conversation_id)
            conversation = self.store.get(conversation_id)
        path = self.store.load_path(conversation_id)
        self.messages, self.message_ids, self.siblings = path.messages, path.ids, path.siblings
        self._next_siblings, self._resend = (), None
        self.conversation, self.temporary = conversation, False

    def new(self, temporary: bool = False) -> None:
        """Start an empty chat; it is stored once the first message is sent, unless `temporary`."""
        self.conversation = None
        self.messages, self.message_ids, self.siblings = [], [], []
        self._next_siblings, self._resend = (), None
        self.temporary, self._temporary_prompt = temporary, ""

    def reload(self) -> None:
        """Read the open conversation again from the store."""
        if self.conversation is not None:
            self.open(self.conversation.id)

    def keep_prompt(
        self,
        prompt: UserMessage,
        provider: str,
        model_id: str,
        system_prompt: str = "",
        setup: ModelSetup | None = None,
    ) -> str:
        """Save `prompt` (creating the conversation if needed) before anything can fail; returns its id.

        `setup`, when given, is recorded as the conversation's own, to be restored when it reopens."""
        if setup is not None:
            provider, model_id, system_prompt = setup.provider, setup.model_id, setup.system_prompt
        if self.temporary:
            self._temporary_prompt = system_prompt
            if not self.is_resend(prompt):
                self._save("", prompt)
            self._resend = None
            return ""
        saved = None if setup is None else setup.model_dump()
        conversation = self._ensure_conversation(prompt, provider, model_id, system_prompt, saved)
        if self._resend is prompt and self.messages and self.messages[-1] is prompt:
            self._resend = None  # Regenerate: the prompt is saved already, its new reply is a sibling
            return conversation.id
        self._resend = None
        self._save(conversation.id, prompt)
        return conversation.id

    def is_resend(self, prompt: UserMessage) -> bool:
        """Whether `prompt` is already on screen and saved, waiting for another reply (Regenerate)."""
        return self._resend is prompt

    def _save(
        self,
        conversation_id: str,
        message: AgentMessage,
        model: LlmModel | None = None,
        estimated: bool = False,
        into: _Path | None = None,
    ) -> None:
        path = _Path(self.messages, self.message_ids, self.siblings) if into is None else into
        if self.temporary:
            # Nothing of the chat is stored but what it cost; it keeps no alternatives to go back to.
            if isinstance(message, AssistantMessage | AssistantMessageToolCall):
                tool = charged_tools(path.messages)
                self.store.record_usage(message, model, usage_estimated=estimated, tool=tool)
            path.messages.append(message)
            path.ids.append(-len(path.messages))
            path.siblings.append((path.ids[-1],))
            self._next_siblings = ()
            return
        parent = path.ids[-1] if path.ids else None
        stored = self.store.add_message(
            conversation_id,
            message,
            model,
            parent_id=parent,
            usage_estimated=estimated,
            tool=charged_tools(path.messages),
        )
        path.messages.append(message)
        path.ids.append(stored.id)
        path.siblings.append((*self._next_siblings, stored.id))
        self._next_siblings = ()

    def _ensure_conversation(
        self,
        prompt: UserMessage,
        provider: str,
        model_id: str,
        system_prompt: str,
        setup: dict[str, Any] | None,
    ) -> Conversation:
        if self.conversation is None:
            text = prompt.text
            self.conversation = self.store.create(
                title=title_from(text or "Image"),
                provider=provider,
                model=model_id,
                system_prompt=system_prompt,
                setup=setup,
            )
        elif (self.conversation.provider, self.conversation.model, self.conversation.system_prompt) != (
            provider,
            model_id,
            system_prompt,
        ) or (setup is not None and setup != self.conversation.setup):
            self.store.update_settings(
                self.conversation.id,
                provider=provider,
                model=model_id,
                system_prompt=system_prompt,
                setup=setup,
            )
            self.conversation = self.store.get(self.conversation.id)
        return self.conversation

    def run(
        self,
        run_agent: RunAgent,
        prompt: UserMessage,
        model: LlmModel,
        system_prompt: str = "",
    ) -> Iterator[AgentEvent]:
        """Save `prompt` after the current messages, then answer it: `keep_prompt` and `answer`."""
        self.keep_prompt(prompt, model.provider, model.id, system_prompt)
        return self.answer(run_agent, model)

    def answer(self, run_agent: RunAgent, model: LlmModel) -> Iterator[AgentEvent]:
        """Run the agent on the last message (a saved prompt); yields its events, saving each message."""
        prompt = self.messages[-1] if self.messages else None
        if (self.conversation is None and not self.temporary) or not isinstance(prompt, UserMessage):
            raise ChatSessionError("There is no message waiting for an answer.")
        conversation_id = self.conversation.id if self.conversation else ""
        history = self.messages[:-1]
        # The run keeps to this conversation's path even if the person opens another one meanwhile
        # (a run that waits for a server's question goes on across the page's reruns).
        path = _Path(self.messages, self.message_ids, self.siblings)

        def events() -> Iterator[AgentEvent]:
            for event in run_agent(history, prompt):
                if isinstance(event, MessageEndEvent) and not (
                    isinstance(event.message, UserMessage) and event.message.content == prompt.content
                ):
                    estimated = False
                    if isinstance(event.message, AssistantMessage | AssistantMessageToolCall):
                        system_prompt = self.system_prompt
                        estimated = estimate_stopped_usage(event.message, path.messages, system_prompt, model)
                        _price(event.message, model)
                    self._save(conversation_id, event.message, model, estimated, into=path)
                yield event

        return events()

    def check_budget(self, model: LlmModel, max_tokens: int | None = None) -> BudgetCheck:
        """The spending limits' answer for answering the last message with `model` (ok, warn or refuse)."""
        return self.budget.check_request(model, self.system_prompt, self.messages, max_tokens)

    @property
    def system_prompt(self) -> str:
        """The system prompt the open chat was last sent with."""
        return self.conversation.system_prompt if self.conversation else self._temporary_prompt

    def title_after_first_reply(self, client: LlmClient, model: LlmModel) -> threading.Thread | None:
        """Have the model title a saved conversation after its first reply, in the background.

        Only while the title is still the first line (not renamed, not a fork) and the model is not
        the embedded toy one; returns the thread, or None when no title is asked for."""
        exchange = first_exchange(self.messages)
        conversation = self.conversation
        if conversation is None or self.temporary or exchange is None or not writes_titles(model.provider):
            return None
        if conversation.title != title_from(exchange[0] or "Image"):
            return None
        return title_in_background(self.store, conversation.id, conversation.title, client, model, *exchange)

    def withdraw_prompt(self) -> UserMessage:
        """Take back the last prompt unanswered (a send the limits refused); an emptied new chat goes too."""
        index = self.last_prompt_index()
        prompt = self._prompt_at(index)
        if self.conversation is not None and index < len(self.message_ids):
            # Stored when it was sent: taken out of the tree again, so reopening does not show it.
            self.store.discard_leaf(self.conversation.id, self.message_ids[index])
            self.open(self.conversation.id)
        if len(self.messages) > index:
            self.rewind_to(index)
        if self.conversation is not None and not self.messages:
            self.store.delete(self.conversation.id)
            self.new()
        return prompt

    def last_prompt_index(self) -> int:
        """Position of the last user message (`ChatSessionError` when there is none)."""
        for index in range(len(self.messages) - 1, -1, -1):
            if isinstance(self.messages[index], UserMessage):
                return index
        raise ChatSessionError("There is no message to answer again yet.")

    def rewind_to(self, index: int) -> UserMessage:
        """Step back to before the user message at `index` (Edit); returns it.

        Nothing is deleted: the next message sent becomes an alternative of that prompt.
        """
        prompt = self._prompt_at(index)
        self._cut(index)
        return prompt

    def regenerate(self, index: int) -> UserMessage:
        """Step back to the user message at `index`, to answer it again; returns it.

        Its next reply becomes an alternative of the one there; the prompt is not saved twice.
        """
        prompt = self._prompt_at(index)
        self._cut(index + 1)
        self._resend = prompt
        return prompt

    def _prompt_at(self, index: int) -> UserMessage:
        if not 0 <= index < len(self.messages) or not isinstance(self.messages[index], UserMessage):
            raise ChatSessionError("Only your own messages can be edited and sent again.")
        prompt = self.messages[index]
        assert isinstance(prompt, UserMessage)
        return prompt

    def continue_with_latest(self, start: int) -> Conversation:
        """Go on in a new conversation holding only the messages from `start` on, and open it.

        The store has no way to leave turns out of what is sent, so the old turns stay where they
        were (with their costs) and the new conversation starts from the latest ones."""
        old = self.conversation
        if old is None or not 0 <= start <= len(self.messages):
            raise ChatSessionError("There is no conversation to go on from.")
        conversation = self.store.create(
            title=title_from(f"{old.title} (latest turns)"),
            provider=old.provider,
            model=old.model,
            system_prompt=old.system_prompt,
            setup=old.setup,
        )
        self.store.replace_messages(conversation.id, self.messages[start:])
        self.open(conversation.id)
        return conversation

    def _cut(self, keep: int) -> None:
        self._next_siblings = self.siblings[keep] if keep < len(self.siblings) else ()
        self.messages = self.messages[:keep]
        self.message_ids = self.message_ids[:keep]
        self.siblings = self.siblings[:keep]
        self._resend = None

    def switch_to(self, message_id: int) -> None:
        """Show the path through this alternative (and its latest replies)."""
        if self.conversation is not None:
            self.store.choose(self.conversation.id, message_id)
            self.open(self.conversation.id)

    def fork(self, index: int) -> Conversation:
        """Copy the path up to the message at `index` into a new conversation, and open it."""
        if self.conversation is None or not 0 <= index < len(self.message_ids):
            raise ChatSessionError("Only a saved message can start a new chat.")
        fork = self.store.fork(self.conversation.id, self.message_ids[index])
        self.open(fork.id)
        return fork

    def transcript(self) -> Transcript:
        """The open conversation as an exportable transcript (API keys are never part of it)."""
        conversation = self.conversation
        if conversation is None:
            return Transcript(title="New chat", messages=list(self.messages))
        tree = self.store.load_tree(conversation.id)  # every alternative, as the store keeps them
        return Transcript(
            title=conversation.title,
            provider=conversation.provider,
            model=conversation.model,
            system_prompt=conversation.system_prompt,
            messages=tree.messages,
            parents=tree.parents,
            current=tree.current,
        )

    def import_transcript(self, transcript: Transcript) -> Conversation:
        """Store an imported transcript as a new conversation and open it."""
        conversation = self.store.create(
            title=transcript.title or "Imported chat",
            provider=transcript.provider,
            model=transcript.model,
            system_prompt=transcript.system_prompt,
        )
        self.store.replace_messages(
            conversation.id, transcript.messages, transcript.parents, transcript.current
        )
        self.open(conversation.id)
        return conversation


def charged_tools(history: Sequence[AgentMessage]) -> str | None:
    """The tools a request after `history` is charged to (`usage.tool`): those whose results end it.

    A tool's result is read by the model in the next request, so that request's tokens are its
    cost; several results of one turn charge it to all of them together ("a, b")."""
    names: set[str] = set()
    for message in reversed(history):
        if not isinstance(message, ToolResultMessage):
            break
        names.add(message.tool_name)
    return ", ".join(sorted(names)) or None


def _price(message: AssistantMessage | AssistantMessageToolCall, model: LlmModel) -> None:
    # A reply carries a cost only when its model has a known price: no cost reads "price unknown",
    # never "free".
    message.cost = model.cost_of(message.usage)


def history_start(messages: Sequence[AgentMessage], limit: int) -> int:
    """Where to start drawing so at most about `limit` of the latest messages show, from a prompt on.

    The start is the earliest prompt within the last `limit` messages, so a turn is never cut in
    half (a tool result without its call); with no prompt there, the latest prompt before them.
    """
    if limit >= len(messages):
        return 0
    floor = len(messages) - max(limit, 1)
    for index in range(floor, len(messages)):
        if isinstance(messages[index], UserMessage):
            return index
    for index in range(floor - 1, -1, -1):
        if isinstance(messages[index], UserMessage):
            return index
    return 0


def reply_caption(message: AssistantMessage | AssistantMessageToolCall) -> str:
    """`120 in · 45 out · 0 cached · $0.000123 · 1.40 s`; "price unknown" when the reply has no cost."""
    usage = message.usage
    cost = None if message.cost is None else message.cost.total
    return reply_words(
        usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, cost, message.duration_ms
    )
