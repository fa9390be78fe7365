"""Questions MCP servers ask the person (elicitation, sampling), waiting until the page answers.

A server's request arrives on the client's thread; the handler here parks it as a
`ServerQuestion` and blocks until the Tools page answers it (or it expires). Sampling replies
come from a real model the page runs once the person approves; the person may edit both the
request and the reply.
"""

from __future__ import annotations

import threading
import uuid
from datetime import datetime
from typing import Any, Literal, TypedDict

from yiem.llm import GenerationOptions, LlmClient, StreamDone
from yiem.mcp import (
    ElicitationHandler,
    ElicitationRequest,
    ElicitationResult,
    McpError,
    SamplingHandler,
    SamplingRequest,
    SamplingResult,
)
from yiem.store import SAMPLING_SOURCE, ConversationStore
from yiem.types import (
    AgentContext,
    AgentMessage,
    AnyAssistantMessage,
    AssistantMessage,
    ImageContent,
    LlmModel,
    TextContent,
    UserMessage,
    utc_now,
)

QUESTION_TIMEOUT_S = 600.0
# JSON-RPC code servers expect when the person refuses a sampling request.
USER_REJECTED = -1


class ServerQuestion:
    """One question from one server, waiting for the person's answer."""

    def __init__(
        self, server: str, kind: Literal["elicitation", "sampling"], request: Any, timeout: float
    ) -> None:
        self.id = uuid.uuid4().hex[:12]
        self.server = server
        self.kind = kind
        self.request = request
        self.asked_at: datetime = utc_now()
        self.timeout = timeout
        self._answered = threading.Event()
        self._answer: Any = None
        self._refusal: str | None = None

    @property
    def elicitation(self) -> ElicitationRequest:
        assert isinstance(self.request, ElicitationRequest)
        return self.request

    @property
    def sampling(self) -> SamplingRequest:
        assert isinstance(self.request, SamplingRequest)
        return self.request

    @property
    def answered(self) -> bool:
        return self._answered.is_set()

    def answer(self, answer: ElicitationResult | SamplingResult) -> None:
        """Send the person's answer back to the server."""
        self._answer = answer
        self._answered.set()

    def refuse(self, reason: str) -> None:
        """Refuse a sampling request; the server gets an error saying so."""
        self._refusal = reason
        self._answered.set()

    def wait(self) -> Any:
        """Block the server's request until answered; unanswered in time counts as cancel."""
        if not self._answered.wait(self.timeout):
            if self.kind == "elicitation":
                return ElicitationResult(action="cancel")
            raise McpError(USER_REJECTED, f"Nobody answered the sampling request within {self.timeout:g} s")
        if self._refusal is not None:
            raise McpError(USER_REJECTED, self._refusal)
        return self._answer


class QuestionHandlers(TypedDict):
    """The `McpClient` options through which a server asks the person."""

    elicitation: ElicitationHandler
    sampling: SamplingHandler


class ServerQuestions:
    """Every open question of one browser session, from all its servers."""

    def __init__(self, timeout: float = QUESTION_TIMEOUT_S) -> None:
        self.timeout = timeout
        self._open: dict[str, ServerQuestion] = {}
        self._lock = threading.Lock()

    def handlers(self, server: str) -> QuestionHandlers:
        """`elicitation` and `sampling` options for `McpClient` (or `connect_server`) of `server`."""

        def elicit(request: ElicitationRequest) -> ElicitationResult:
            result: ElicitationResult = self._ask(server, "elicitation", request)
            return result

        def sample(request: SamplingRequest) -> SamplingResult:
            result: SamplingResult = self._ask(server, "sampling", request)
            return result

        return QuestionHandlers(elicitation=elicit, sampling=sample)

    def _ask(self, server: str, kind: Literal["elicitation", "sampling"], request: Any) -> Any:
        question = ServerQuestion(server, kind, request, self.timeout)
        with self._lock:
            self._open[question.id] = question
        try:
            return question.wait()
        finally:
            with self._lock:
                self._open.pop(question.id, None)

    def withdraw(self, reason: str) -> None:
        """Answer every open question as a person who left would: forms cancelled, sampling refused."""
        for question in self.pending():
            if question.kind == "elicitation":
                question.answer(ElicitationResult(action="cancel"))
            else:
                question.refuse(reason)

    def pending(self, server: str | None = None) -> list[ServerQuestion]:
        """Open questions, oldest first (of one server when `server` is given)."""
        with self._lock:
            found = [q for q in self._open.values() if not q.answered]
        return [q for q in found if server is None or q.server == server]


def sampling_messages(request: SamplingRequest) -> list[AgentMessage]:
    """The server's messages as chat messages (text and images; other blocks as a note)."""
    messages: list[AgentMessage] = []
    for raw in request.messages:
        blocks = raw.get("content")
        parts: list[TextContent | ImageContent] = []
        for block in blocks if isinstance(blocks, list) else [blocks]:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                parts.append(TextContent(text=str(block.get("text", ""))))
            elif block.get("type") == "image" and isinstance(block.get("data"), str):
                parts.append(ImageContent(data=block["data"], mime_type=block.get("mimeType", "image/png")))
            else:
                parts.append(TextContent(text=f"[{block.get('type')} content left out]"))
        if raw.get("role") == "assistant":
            texts = [part for part in parts if isinstance(part, TextContent)]
            messages.append(AssistantMessage(content=list(texts)))
        else:
            messages.append(UserMessage(content=list(parts)))
    return messages


def sample_reply(
    request: SamplingRequest,
    client: LlmClient,
    model: LlmModel,
) -> AnyAssistantMessage:
    """The model's reply to the (possibly edited) request: one assistant message with its usage."""
    context = AgentContext(system_prompt=request.system_prompt or "", messages=sampling_messages(request))
    options = GenerationOptions(temperature=request.temperature, max_tokens=request.max_tokens)
    final: AnyAssistantMessage | None = None
    for event in client.stream(model, context, options=options):
        if isinstance(event, StreamDone):
            final = event.message
    assert final is not None  # every stream ends with exactly one StreamDone
    return final


def sampling_result(reply_text: str, message: AnyAssistantMessage, model: LlmModel) -> SamplingResult:
    """What goes back to the server: the (possibly edited) text, the model, why it stopped."""
    stop = {"end_turn": "endTurn", "stop": "endTurn", "max_tokens": "maxTokens", "length": "maxTokens"}.get(
        message.stop_reason, message.stop_reason
    )
    return SamplingResult(
        content={"type": "text", "text": reply_text},
        model=message.model or model.id,
        stop_reason=stop,
    )


def model_hints(request: SamplingRequest) -> str:
    """The server's model preferences in words: hints, then the cost / speed / intelligence priorities."""
    prefs = request.model_preferences or {}
    words = []
    hints = [h.get("name") for h in prefs.get("hints", []) if isinstance(h, dict) and h.get("name")]
    if hints:
        words.append("prefers " + ", ".join(str(h) for h in hints))
    for key, name in (
        ("costPriority", "cost"),
        ("speedPriority", "speed"),
        ("intelligencePriority", "intelligence"),
    ):
        if isinstance(prefs.get(key), int | float):
            words.append(f"{name} {prefs[key]:g}")
    return "; ".join(words) or "no model preferences"


def count_sampling(
    store: ConversationStore,
    server: str,
    request: SamplingRequest,
    reply: AnyAssistantMessage,
    model: LlmModel,
    conversation_id: str | None = None,
) -> str:
    """Save a sampling reply where the Costs page counts it: source `mcp-sampling`, charged to
    `server`, in a conversation named for the server (`conversation_id`, made when missing)."""
    sampling = ConversationStore(store.engine, store.owner, source=SAMPLING_SOURCE)
    if conversation_id is None or not sampling.exists(conversation_id):
        conversation_id = sampling.create(
            title=f"MCP sampling · {server}", provider=model.provider, model=model.id
        ).id
    # Only the reply is a model's answer: the server's own assistant turns would count as requests.
    for message in sampling_messages(request):
        if message.role == "user":
            sampling.append_message(conversation_id, message)
    sampling.append_message(conversation_id, reply, model, tool=server)
    return conversation_id
