"""What the Chat page serves: the chat session, model settings and secrets, transcripts, background events."""

from yiem.chat._background import BackgroundEvents, BackgroundEventsError, Quiet
from yiem.chat._context_gauge import (
    KEEP_FRACTION,
    ContextGauge,
    SendEstimate,
    context_gauge,
    conversation_tokens,
    expected_output,
    latest_turns_start,
    send_estimate,
)
from yiem.chat._images import ImageDataError, check_image, image_bytes
from yiem.chat._safe_markdown import safe_markdown
from yiem.chat._session import (
    ChatSession,
    ChatSessionError,
    RunAgent,
    history_start,
    reply_caption,
    title_from,
    tool_results_by_call,
    user_message,
)
from yiem.chat._settings import (
    DEFAULT_MODELS,
    LOCAL,
    ChatSettings,
    KeyStatus,
    ModelSettingsError,
    available_models,
    calls_tools,
    connect,
    default_settings,
    key_status,
    register_server_secrets,
    running_local_model,
    starting_base_url,
    takes_images,
)
from yiem.chat._setup import ChatSetup, apply_setup, conversation_setup, setup_of, stored_setup
from yiem.chat._stopped_usage import token_counter
from yiem.chat._timeline import MODEL_LANE, TimelineBar, reply_ranges, reply_timeline
from yiem.chat._titles import clean_title, write_title, writes_titles
from yiem.chat._transcript import Transcript, TranscriptError, export_json, export_markdown, import_json

# Re-exported: the one secret lookup lives with the providers, whose keys it finds.
from yiem.providers import configured_secret, secrets_file_value

__all__ = [
    "DEFAULT_MODELS",
    "KEEP_FRACTION",
    "LOCAL",
    "MODEL_LANE",
    "BackgroundEvents",
    "BackgroundEventsError",
    "ChatSession",
    "ChatSessionError",
    "ChatSettings",
    "ChatSetup",
    "ContextGauge",
    "ImageDataError",
    "KeyStatus",
    "ModelSettingsError",
    "Quiet",
    "RunAgent",
    "SendEstimate",
    "TimelineBar",
    "Transcript",
    "TranscriptError",
    "apply_setup",
    "available_models",
    "calls_tools",
    "check_image",
    "clean_title",
    "configured_secret",
    "connect",
    "context_gauge",
    "conversation_setup",
    "conversation_tokens",
    "default_settings",
    "expected_output",
    "export_json",
    "export_markdown",
    "history_start",
    "image_bytes",
    "import_json",
    "key_status",
    "latest_turns_start",
    "register_server_secrets",
    "reply_caption",
    "reply_ranges",
    "reply_timeline",
    "running_local_model",
    "safe_markdown",
    "secrets_file_value",
    "send_estimate",
    "setup_of",
    "starting_base_url",
    "stored_setup",
    "takes_images",
    "title_from",
    "token_counter",
    "tool_results_by_call",
    "user_message",
    "write_title",
    "writes_titles",
]
