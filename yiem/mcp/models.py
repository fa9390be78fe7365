"""What MCP servers send back, as pydantic models: tools, content blocks, resources, prompts."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


class McpModel(BaseModel):
    """Base: PEP 8 names in Python, MCP's camelCase on the wire; unknown fields are kept."""

    # Built on first use, so importing yiem.mcp does not pay for models a program never touches.
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="allow", defer_build=True
    )

    def to_wire(self) -> dict[str, Any]:
        """The MCP JSON shape (camelCase keys, unset fields left out)."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class Icon(McpModel):
    """An icon a server gives itself, a tool, a prompt or a resource (an https or data: URL)."""

    src: str
    mime_type: str | None = None
    sizes: list[str] = Field(default_factory=list)
    theme: str | None = None


class ServerInfo(McpModel):
    """The server's `serverInfo` from the initialize reply."""

    name: str = ""
    version: str = ""
    title: str | None = None
    website_url: str | None = None
    icons: list[Icon] = Field(default_factory=list)


class McpTool(McpModel):
    """One tool from `tools/list` (SP-009)."""

    name: str
    title: str | None = None
    label: str | None = None
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None
    execution: dict[str, Any] | None = None
    icons: list[Icon] = Field(default_factory=list)

    @property
    def task_support(self) -> str:
        """ "required", "optional" or "forbidden" (the default): whether it runs as a task."""
        support = (self.execution or {}).get("taskSupport")
        return support if support in ("required", "optional") else "forbidden"

    @property
    def display_name(self) -> str:
        """Title, else the annotations' title, else label, else name."""
        annotated = (self.annotations or {}).get("title")
        return self.title or (annotated if isinstance(annotated, str) else None) or self.label or self.name


class ResourceContents(McpModel):
    """The contents of one resource: `text`, or base64 `blob`."""

    uri: str
    mime_type: str | None = None
    text: str | None = None
    blob: str | None = None


class TextBlock(McpModel):
    type: Literal["text"] = "text"
    text: str
    annotations: dict[str, Any] | None = None


class ImageBlock(McpModel):
    type: Literal["image"] = "image"
    data: str
    mime_type: str
    annotations: dict[str, Any] | None = None


class AudioBlock(McpModel):
    type: Literal["audio"] = "audio"
    data: str
    mime_type: str
    annotations: dict[str, Any] | None = None


class McpResource(McpModel):
    """One resource from `resources/list`."""

    uri: str
    name: str = ""
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    icons: list[Icon] = Field(default_factory=list)


class McpResourceTemplate(McpModel):
    """One resource template from `resources/templates/list`: a URI with `{variables}`."""

    uri_template: str
    name: str = ""
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    icons: list[Icon] = Field(default_factory=list)


class ResourceLinkBlock(McpResource):
    """A link to a resource the client may read (MCP's ResourceLink extends Resource)."""

    type: Literal["resource_link"] = "resource_link"
    annotations: dict[str, Any] | None = None


class EmbeddedResourceBlock(McpModel):
    type: Literal["resource"] = "resource"
    resource: ResourceContents
    annotations: dict[str, Any] | None = None


class UnknownBlock(McpModel):
    """A content type this client does not know; its fields are kept as extras."""

    type: str


ContentBlock = TextBlock | ImageBlock | AudioBlock | ResourceLinkBlock | EmbeddedResourceBlock | UnknownBlock

_BLOCK_TYPES: dict[str, type[McpModel]] = {
    "text": TextBlock,
    "image": ImageBlock,
    "audio": AudioBlock,
    "resource_link": ResourceLinkBlock,
    "resource": EmbeddedResourceBlock,
}


def parse_content_block(raw: Any) -> ContentBlock:
    """One content block; a type this client does not know is kept as an `UnknownBlock`."""
    if not isinstance(raw, dict):
        return UnknownBlock(type="invalid", value=raw)
    model = _BLOCK_TYPES.get(str(raw.get("type")), UnknownBlock)
    try:
        return model.model_validate(raw)  # type: ignore[return-value]
    except ValueError:
        # A known type with missing fields is shown as it came, not dropped.
        return UnknownBlock.model_validate({**raw, "type": str(raw.get("type"))})


class CallToolResult(McpModel):
    """The outcome of `tools/call` (SP-010): content blocks, structured content, error flag."""

    content: list[ContentBlock] = Field(default_factory=list)
    structured_content: Any = None
    is_error: bool = False

    @classmethod
    def from_wire(cls, result: dict[str, Any]) -> CallToolResult:
        """Parse a `tools/call` result, keeping unknown content blocks."""
        blocks = result.get("content")
        return cls(
            content=[parse_content_block(block) for block in blocks] if isinstance(blocks, list) else [],
            structured_content=result.get("structuredContent"),
            is_error=bool(result.get("isError", False)),
        )

    @property
    def text(self) -> str:
        """The text blocks joined by newlines."""
        return "\n".join(block.text for block in self.content if isinstance(block, TextBlock))


class PromptArgument(McpModel):
    name: str
    description: str | None = None
    required: bool = False


class McpPrompt(McpModel):
    """One prompt template from `prompts/list`."""

    name: str
    title: str | None = None
    description: str | None = None
    arguments: list[PromptArgument] = Field(default_factory=list)
    icons: list[Icon] = Field(default_factory=list)


class PromptMessage(McpModel):
    role: str
    content: ContentBlock

    @classmethod
    def from_wire(cls, raw: dict[str, Any]) -> PromptMessage:
        return cls(role=str(raw.get("role", "user")), content=parse_content_block(raw.get("content")))


class GetPromptResult(McpModel):
    """A prompt filled with its arguments: `prompts/get`."""

    description: str | None = None
    messages: list[PromptMessage] = Field(default_factory=list)


class McpProgress(McpModel):
    """A `notifications/progress` for one request."""

    progress: float
    total: float | None = None
    message: str | None = None


class McpNotification(McpModel):
    """A notification from the server, as the event sink receives it."""

    method: str
    params: dict[str, Any] = Field(default_factory=dict)


class McpTask(McpModel):
    """A task the server runs for a request (`tools/call` with `task`): its state and time to live."""

    task_id: str
    status: str
    status_message: str | None = None
    created_at: str | None = None
    last_updated_at: str | None = None
    ttl: int | None = None
    poll_interval: int | None = None

    @property
    def finished(self) -> bool:
        """Completed, failed or cancelled: the task will not change any more."""
        return self.status in ("completed", "failed", "cancelled")


class Root(McpModel):
    """A folder the client lets a server work in (`roots/list`): a file:// URI and a name."""

    uri: str
    name: str | None = None


class ElicitationRequest(McpModel):
    """A server's question to the person (`elicitation/create`): a form (schema) or a URL to open."""

    mode: Literal["form", "url"] = "form"
    message: str = ""
    requested_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    url: str | None = None
    elicitation_id: str | None = None


class ElicitationResult(McpModel):
    """The person's answer: accept (with the form's content), decline or cancel."""

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = None


class SamplingRequest(McpModel):
    """A server asks the client's model for a reply (`sampling/createMessage`)."""

    messages: list[dict[str, Any]] = Field(default_factory=list)
    model_preferences: dict[str, Any] | None = None
    system_prompt: str | None = None
    include_context: str | None = None
    temperature: float | None = None
    max_tokens: int = 1000
    stop_sequences: list[str] | None = None
    metadata: dict[str, Any] | None = None


class SamplingResult(McpModel):
    """The reply that goes back to the server: one message, the model that wrote it, why it stopped."""

    role: Literal["assistant", "user"] = "assistant"
    content: dict[str, Any]
    model: str
    stop_reason: str | None = None


class CompletionResult(McpModel):
    """Suggested values for one argument (`completion/complete`)."""

    values: list[str] = Field(default_factory=list)
    total: int | None = None
    has_more: bool = False
