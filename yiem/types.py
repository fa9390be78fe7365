"""Message, content, usage and model types of the YiemAgent specification (SP-001..SP-008, SP-019..SP-022).

No `from __future__ import annotations` here: pydantic would compile every field's annotation
string at import, which was most of `import yiem`'s own time.
"""

from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
)
from pydantic.alias_generators import to_camel

# SP-022 and the surrogate rule live in their own modules; callers keep importing them from here.
from yiem._abort import AbortSignal as AbortSignal
from yiem._unicode import model_json as model_json
from yiem._unicode import replace_lone_surrogates as replace_lone_surrogates
from yiem.timeline import Timeline


def utc_now() -> datetime:
    """Current time, timezone-aware UTC."""
    return datetime.now(UTC)


class SpecModel(BaseModel):
    """Base: PEP 8 names in Python, the spec's camelCase names on the wire, both accepted on input."""

    model_config = ConfigDict(
        # Schemas are built on first use, not at `import yiem` (issue 10: start-up under 150 ms).
        defer_build=True,
        alias_generator=to_camel,
        populate_by_name=True,
        serialize_by_alias=False,
        validate_by_alias=True,
        validate_by_name=True,
    )

    def to_json_dict(self) -> dict[str, Any]:
        """The spec's JSON shape: camelCase keys, ISO 8601 timestamps, lone surrogates replaced."""
        data: dict[str, Any] = replace_lone_surrogates(self.model_dump(mode="json", by_alias=True))
        return data

    def to_json(self) -> str:
        """`to_json_dict()` as compact JSON text: what the store saves."""
        return model_json(self, by_alias=True)


def _ensure_utc(value: datetime) -> datetime:
    # Naive timestamps from old exports are taken as UTC rather than local time.
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


# --- SP-006 content -------------------------------------------------------------------------


class TextContent(SpecModel):
    """SP-006.1: plain text."""

    type: Literal["text"] = "text"
    text: str


class ImageContent(SpecModel):
    """SP-006.2: a base64-encoded image with its MIME type."""

    type: Literal["image"] = "image"
    data: str
    mime_type: str = "image/png"


class ReasoningContent(SpecModel):
    """SP-006.3: the model's reasoning or thinking text."""

    type: Literal["reasoning"] = "reasoning"
    text: str


MessageContent = Annotated[TextContent | ImageContent | ReasoningContent, Field(discriminator="type")]


def content_text(content: Iterable[MessageContent], separator: str = "") -> str:
    """The text blocks joined, reasoning and images left out: what `.text` of every message gives."""
    return separator.join(block.text for block in content if isinstance(block, TextContent))


# --- SP-008 cost, usage ---------------------------------------------------------------------


class ModelCost(SpecModel):
    """SP-008: dollars per 1M tokens (the spec already names these fields in snake case)."""

    model_config = ConfigDict(alias_generator=None, populate_by_name=True, defer_build=True)

    input: float = 0.0
    output: float = 0.0
    cache_read: float = Field(0.0, validation_alias=AliasChoices("cache_read", "cacheRead"))
    cache_write: float = Field(0.0, validation_alias=AliasChoices("cache_write", "cacheWrite"))


class UsageCost(SpecModel):
    """What one usage cost, in dollars."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0
    total: float = 0.0

    def __add__(self, other: "UsageCost") -> "UsageCost":
        return UsageCost(
            input=self.input + other.input,
            output=self.output + other.output,
            cache_read=self.cache_read + other.cache_read,
            cache_write=self.cache_write + other.cache_write,
            total=self.total + other.total,
        )


class LlmUsage(SpecModel):
    """Token counts of one completion.

    `input_tokens` excludes cache reads and writes; `reasoning_tokens` is part of `output_tokens`.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    def __add__(self, other: "LlmUsage") -> "LlmUsage":
        return LlmUsage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
        )

    @property
    def total_tokens(self) -> int:
        """All tokens billed: input, cache reads and writes, output (reasoning is inside output)."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens + self.output_tokens

    def cost(self, model_cost: ModelCost) -> UsageCost:
        """Dollars for these tokens at `model_cost` prices (per 1M tokens)."""
        parts = {
            "input": self.input_tokens * model_cost.input / 1_000_000,
            "output": self.output_tokens * model_cost.output / 1_000_000,
            "cache_read": self.cache_read_tokens * model_cost.cache_read / 1_000_000,
            "cache_write": self.cache_write_tokens * model_cost.cache_write / 1_000_000,
        }
        return UsageCost(**parts, total=sum(parts.values()))


# --- SP-007 model ---------------------------------------------------------------------------

Api = Literal["openai-completions", "anthropic-messages"]


class LlmModel(SpecModel):
    """SP-007: a model and how to reach it (`api` is the wire protocol)."""

    id: str
    name: str = ""
    provider: str = ""
    base_url: str = ""
    api: Api = "openai-completions"
    reasoning: bool = False
    input: list[str] = Field(default_factory=lambda: ["text"])
    cost: ModelCost = Field(default_factory=ModelCost)
    context_window: int = 0
    max_tokens: int = 0
    # False for local and unknown models: their cost shows as "price unknown", never as free.
    price_known: bool = False
    price_source: str = ""

    def cost_of(self, usage: LlmUsage) -> UsageCost | None:
        """What `usage` cost at this model's prices; None when the price is unknown (never $0)."""
        return usage.cost(self.cost) if self.price_known else None


# --- SP-005, SP-001..SP-004 messages ---------------------------------------------------------


class AgentToolCall(SpecModel):
    """SP-005: one tool call the model asked for, with parsed arguments."""

    type: Literal["function"] = "function"
    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class UserMessage(SpecModel):
    """SP-001."""

    role: Literal["user"] = "user"
    content: list[MessageContent] = Field(default_factory=list)
    timestamp: datetime = Field(default_factory=utc_now)

    _utc = field_validator("timestamp")(_ensure_utc)

    @classmethod
    def from_text(cls, text: str, images: Iterable[ImageContent] = ()) -> "UserMessage":
        """A prompt of `text` (left out when empty) followed by `images`."""
        content: list[MessageContent] = [TextContent(text=text)] if text else []
        content.extend(images)
        return cls(content=content)

    @property
    def text(self) -> str:
        """The text blocks joined, images left out."""
        return content_text(self.content)


class _AssistantBase(SpecModel):
    role: Literal["assistant"] = "assistant"
    content: list[MessageContent] = Field(default_factory=list)
    api: str = ""
    provider: str = ""
    model: str = ""
    usage: LlmUsage = Field(default_factory=LlmUsage)
    stop_reason: str = "end_turn"
    error_message: str | None = None
    timestamp: datetime = Field(default_factory=utc_now)
    # Beyond the spec: what the dashboard needs, filled by the loop and the catalogue.
    cost: UsageCost | None = None
    duration_ms: float | None = None
    ttft_ms: float | None = None
    timeline: Timeline | None = None  # the LLM request's span (yiem.timeline)

    _utc = field_validator("timestamp")(_ensure_utc)

    @property
    def text(self) -> str:
        """The text blocks joined, reasoning left out."""
        return content_text(self.content)


class AssistantMessage(_AssistantBase):
    """SP-002: an assistant reply without tool calls."""


class AssistantMessageToolCall(_AssistantBase):
    """SP-003: an assistant reply that asks for tool calls."""

    tool_calls: list[AgentToolCall] = Field(default_factory=list)
    stop_reason: str = "tool_calls"


class ToolResultMessage(SpecModel):
    """SP-004: the outcome of one tool call (role `toolResult`; `tool` only in the OpenAI format)."""

    role: Literal["toolResult"] = "toolResult"
    tool_call_id: str
    tool_name: str
    content: list[MessageContent] = Field(default_factory=list)
    details: Any = None
    usage: LlmUsage | None = None
    added_tool_names: list[str] | None = None
    is_error: bool = False
    timestamp: datetime = Field(default_factory=utc_now)
    timeline: Timeline | None = None  # beyond the spec: the call's spans, its hooks and wait

    _utc = field_validator("timestamp")(_ensure_utc)

    @property
    def text(self) -> str:
        """The text blocks joined, images left out."""
        return content_text(self.content)

    def text_joined_by(self, separator: str) -> str:
        """The text blocks with `separator` between them, so a display keeps a tool's blocks apart."""
        return content_text(self.content, separator)


def _message_tag(value: Any) -> str:
    role = value.get("role") if isinstance(value, dict) else getattr(value, "role", None)
    if role == "assistant":
        if isinstance(value, dict):
            has_calls = "tool_calls" in value or "toolCalls" in value
        else:
            has_calls = isinstance(value, AssistantMessageToolCall)
        return "assistant_tool_call" if has_calls else "assistant"
    if role in ("toolResult", "tool"):
        return "toolResult"
    return "user"


AgentMessage = Annotated[
    Annotated[UserMessage, Tag("user")]
    | Annotated[AssistantMessage, Tag("assistant")]
    | Annotated[AssistantMessageToolCall, Tag("assistant_tool_call")]
    | Annotated[ToolResultMessage, Tag("toolResult")],
    Discriminator(_message_tag),
]
"""Any message of a conversation; assistant messages with `toolCalls` parse as SP-003."""

AnyAssistantMessage = AssistantMessage | AssistantMessageToolCall


# --- tools ----------------------------------------------------------------------------------


class ToolOutput(SpecModel):
    """What a tool returns when plain text or content blocks are not enough."""

    content: list[MessageContent] = Field(default_factory=list)
    details: Any = None
    is_error: bool = False


ToolResult = str | list[MessageContent] | ToolOutput
"""What `AgentTool.execute` may return; failure is signalled by raising."""

ToolExecute = Callable[..., ToolResult]
"""`execute(tool_call_id, arguments, signal)`; it may also take `on_update=` for progress."""


class AgentTool(BaseModel):
    """A tool the agent can call."""

    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)

    name: str
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    execute: ToolExecute
    title: str | None = None
    label: str | None = None
    # SP-024: a custom check returning None or an error text; None means the default SP-023 check.
    validate_required_args: Callable[[dict[str, Any]], str | None] | None = None
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None
    server: str | None = None  # the MCP server it comes from: named in the run's timeline

    @property
    def display_name(self) -> str:
        """Title, else label, else name."""
        return self.title or self.label or self.name


# --- SP-019..SP-021 context, state, config --------------------------------------------------


class AgentContext(BaseModel):
    """SP-019: what one LLM call sees."""

    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)

    system_prompt: str = ""
    messages: list[AgentMessage] = Field(default_factory=list)
    tools: dict[str, AgentTool] | None = None


class AgentState(BaseModel):
    """SP-020: an agent's mutable state (messages exclude the system prompt)."""

    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)

    system_prompt: str = ""
    model: LlmModel | None = None
    tools: dict[str, AgentTool] = Field(default_factory=dict)
    messages: list[AgentMessage] = Field(default_factory=list)
    pending_tool_calls: list[str] = Field(default_factory=list)
    error_message: str | None = None
    is_running: bool = False


class BeforeToolCallContext(BaseModel):
    """What `before_tool_call` sees: the call, its validated arguments and the context."""

    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)

    assistant_message: AssistantMessageToolCall
    tool_call: AgentToolCall
    args: dict[str, Any]
    context: AgentContext


class BeforeToolCallResult(BaseModel):
    """Return with `block=True` to refuse the call; `reason` becomes the error result."""

    model_config = ConfigDict(defer_build=True)

    block: bool = False
    reason: str | None = None


class AfterToolCallContext(BaseModel):
    """What `after_tool_call` sees: the call and its outcome."""

    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)

    assistant_message: AssistantMessageToolCall
    tool_call: AgentToolCall
    args: dict[str, Any]
    result: ToolOutput
    is_error: bool
    context: AgentContext


class AfterToolCallResult(BaseModel):
    """Fields left as None keep the tool's own outcome."""

    model_config = ConfigDict(defer_build=True)

    content: list[MessageContent] | None = None
    details: Any = None
    is_error: bool | None = None


BeforeToolCall = Callable[[BeforeToolCallContext], BeforeToolCallResult | None]
AfterToolCall = Callable[[AfterToolCallContext], AfterToolCallResult | None]


class AgentLoopConfig(BaseModel):
    """SP-021: hooks, execution mode and limits of the agent loop."""

    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)

    before_tool_call: BeforeToolCall | None = None
    after_tool_call: AfterToolCall | None = None
    tool_execution: Literal["sequential", "parallel"] = "parallel"
    tool_timeout: float = 120.0
    max_turns: int = 20
    temperature: float | None = None
    max_tokens: int | None = None
    response_schema: dict[str, Any] | None = None  # JSON the replies must match, where the provider can
