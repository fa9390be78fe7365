"""Titles written by the chat's model after the first reply, the first line kept when it cannot."""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Sequence

from yiem.llm import GenerationOptions, LlmClient
from yiem.model_setup import LOCAL
from yiem.store import ConversationStore
from yiem.types import (
    AgentContext,
    AgentMessage,
    AnyAssistantMessage,
    AssistantMessage,
    LlmModel,
    UserMessage,
)

TITLE_INSTRUCTIONS = (
    "Write a title for this conversation: at most six words, in the language of the user's message. "
    "Reply with the title only, without quotes or punctuation at the end."
)
TITLE_MAX_CHARS = 60
TITLE_MAX_WORDS = 8
# Each side of the exchange is cut to this many characters: a title needs the gist, not a long paste.
_EXCERPT_CHARS = 2000
_TITLE_TOKENS = 32
# Stop reasons of an answer that did not end by itself (cut off, failed, stopped).
_WRAPPING = " \t\"'`*#«»“”„‘’「」"  # quotes and Markdown a model puts around a title
_UNFINISHED = frozenset({"length", "error", "aborted"})

_log = logging.getLogger(__name__)


def writes_titles(provider: str) -> bool:
    """Whether this provider's model is asked for titles: not the embedded SmolLM2 135M, a toy whose
    titles would be worse than the first line."""
    return provider != LOCAL


def first_exchange(messages: Sequence[AgentMessage]) -> tuple[str, str] | None:
    """The first prompt's text and its reply's, when the messages are exactly that one exchange."""
    if len(messages) != 2 or not isinstance(messages[0], UserMessage):
        return None
    reply = messages[1]
    if not isinstance(reply, AssistantMessage) or reply.stop_reason in _UNFINISHED or not reply.text.strip():
        return None  # a failed, stopped or tool-calling first turn: the first line stays
    return messages[0].text, reply.text


def title_request(prompt: str, reply: str) -> AgentContext:
    """What the model is asked to title: the first prompt and its reply, shortened."""
    exchange = f"User:\n{prompt[:_EXCERPT_CHARS]}\n\nAssistant:\n{reply[:_EXCERPT_CHARS]}"
    return AgentContext(system_prompt=TITLE_INSTRUCTIONS, messages=[UserMessage.from_text(exchange)])


def clean_title(message: AnyAssistantMessage) -> str | None:
    """The title in the model's answer, or None when it failed, was cut off or is no title."""
    if message.stop_reason in _UNFINISHED or message.error_message:
        return None
    lines = [line for line in message.text.strip().splitlines() if line.strip()]
    if len(lines) != 1:
        return None  # a title is one line; more is the model talking instead of titling
    title = re.sub(r"^(title|titre|titel|título|titolo)\s*:\s*", "", lines[0].strip(), flags=re.IGNORECASE)
    title = title.strip(_WRAPPING).rstrip(".。!！").strip(_WRAPPING)
    if not any(ch.isalpha() for ch in title):
        return None
    if len(title) > TITLE_MAX_CHARS or len(title.split()) > TITLE_MAX_WORDS:
        return None
    return title


def write_title(
    store: ConversationStore,
    conversation_id: str,
    fallback: str,
    client: LlmClient,
    model: LlmModel,
    prompt: str,
    reply: str,
) -> str:
    """Ask the model for a title, count its usage, and set it unless the title changed meanwhile.

    Returns the conversation's title: the model's, or `fallback` (the first line) when it failed."""
    options = GenerationOptions(max_tokens=_TITLE_TOKENS, temperature=0.2)
    answer: AnyAssistantMessage | None = None
    for event in client.stream(model, title_request(prompt, reply), options=options):
        if event.type == "done":
            answer = event.message
    if answer is None:
        return fallback
    # Spent tokens count whatever the answer: a failed title costs what it cost.
    store.record_usage(answer, model, conversation_id)
    title = clean_title(answer)
    if title is None or not store.retitle(conversation_id, fallback, title):
        return fallback
    return title


def title_in_background(
    store: ConversationStore,
    conversation_id: str,
    fallback: str,
    client: LlmClient,
    model: LlmModel,
    prompt: str,
    reply: str,
) -> threading.Thread:
    """Run `write_title` in a daemon thread (the reply is never held up); returns the started thread."""

    def work() -> None:
        try:
            write_title(store, conversation_id, fallback, client, model, prompt, reply)
        except Exception:  # nobody waits for it: the first-line title stays, the log says why
            _log.exception("The model could not title conversation %s", conversation_id)

    thread = threading.Thread(target=work, name="yiem-title", daemon=True)
    thread.start()
    return thread
