"""What the Chat page serves: the chat session, its library, transcripts, background events."""

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
from yiem.chat._documents import (
    DOCUMENT_SUFFIXES,
    Document,
    DocumentError,
    document_block,
    document_in,
    read_document,
    too_large,
    typed_text,
    with_documents,
)
from yiem.chat._library import ChatLibrary, LibraryError, SavedPrompt
from yiem.chat._session import (
    ChatSession,
    ChatSessionError,
    RunAgent,
    history_start,
    reply_caption,
    title_from,
    user_message,
)
from yiem.chat._setup import conversation_setup, stored_setup
from yiem.chat._stopped_usage import token_counter
from yiem.chat._suggestions import Suggestions, chat_suggestions
from yiem.chat._titles import clean_title, write_title, writes_titles
from yiem.chat._transcript import Transcript, TranscriptError, export_json, export_markdown, import_json

__all__ = [
    "DOCUMENT_SUFFIXES",
    "KEEP_FRACTION",
    "BackgroundEvents",
    "BackgroundEventsError",
    "ChatLibrary",
    "ChatSession",
    "ChatSessionError",
    "ContextGauge",
    "Document",
    "DocumentError",
    "LibraryError",
    "Quiet",
    "RunAgent",
    "SavedPrompt",
    "SendEstimate",
    "Suggestions",
    "Transcript",
    "TranscriptError",
    "chat_suggestions",
    "clean_title",
    "context_gauge",
    "conversation_setup",
    "conversation_tokens",
    "document_block",
    "document_in",
    "expected_output",
    "export_json",
    "export_markdown",
    "history_start",
    "import_json",
    "latest_turns_start",
    "read_document",
    "reply_caption",
    "send_estimate",
    "stored_setup",
    "title_from",
    "token_counter",
    "too_large",
    "typed_text",
    "user_message",
    "with_documents",
    "write_title",
    "writes_titles",
]
