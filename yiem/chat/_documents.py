"""Attached documents: their text read out (PDF, plain text, Markdown, CSV, JSON) and sent as a block
that names the file, so the model, the page and an export all know which file it came from."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import PurePath

from yiem.amounts import tokens as token_words
from yiem.chat._context_gauge import context_gauge
from yiem.errors import YiemError
from yiem.redaction import redact
from yiem.types import TextContent, UserMessage

# What the attach button offers: the suffixes, and what each is called in a message.
DOCUMENT_KINDS = {
    "pdf": "PDF",
    "txt": "text",
    "md": "Markdown",
    "markdown": "Markdown",
    "csv": "CSV",
    "json": "JSON",
}
DOCUMENT_SUFFIXES = tuple(DOCUMENT_KINDS)

# The block as the model gets it. The blank line first keeps it apart from the typed text when a
# server joins a message's text blocks without a separator (llama-server does).
_BLOCK = '\n\n<document name="{name}">\n{text}\n</document>'
_PARSED = re.compile(r'\s*<document name="([^"\n]*)">\n(.*)\n</document>\s*', re.DOTALL)


class DocumentError(YiemError, ValueError):
    """An attached file cannot be read or sent; the message names it and says what to do."""


@dataclass(frozen=True)
class Document:
    """An attached file's name and the text read from it."""

    name: str
    text: str


def read_document(name: str, data: bytes) -> Document:
    """The text of a PDF, text, Markdown, CSV or JSON file; `DocumentError` when it cannot be read."""
    suffix = PurePath(name).suffix.lower().lstrip(".")
    if suffix not in DOCUMENT_KINDS:
        offered = ", ".join(f".{s}" for s in DOCUMENT_SUFFIXES)
        raise DocumentError(f"“{name}” cannot be attached: only {offered} files can.")
    text = _pdf_text(name, data) if suffix == "pdf" else _plain_text(name, data, DOCUMENT_KINDS[suffix])
    if not text.strip():
        hint = " A scanned PDF holds pictures of its pages, not text." if suffix == "pdf" else ""
        raise DocumentError(f"“{name}” has no text to send.{hint}")
    # Shown, stored and sent to a model: a secret the server knows is masked like a typed one.
    return Document(name=name, text=redact(text.strip()))


def _pdf_text(name: str, data: bytes) -> str:
    from pypdf import PdfReader
    from pypdf.errors import FileNotDecryptedError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise DocumentError(
                f"“{name}” is protected by a password; save a copy without one and attach it."
            )
        pages = [page.extract_text() or "" for page in reader.pages]
    except DocumentError:
        raise
    except FileNotDecryptedError as error:
        raise DocumentError(
            f"“{name}” is protected by a password; save a copy without one and attach it."
        ) from error
    # A damaged or fake PDF fails inside pypdf with any of many exception types (its own, ValueError,
    # KeyError, struct errors...): each means the same to the person attaching it.
    except Exception as error:
        raise DocumentError(
            f"“{name}” cannot be read as a PDF: the file is damaged or is not a PDF. Open it and save it "
            "again, or attach its text as a .txt file."
        ) from error
    return "\n\n".join(page.strip() for page in pages if page.strip())


def _plain_text(name: str, data: bytes, kind: str) -> str:
    if b"\x00" in data[:8192] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DocumentError(f"“{name}” is not {kind}: it holds binary data, so it cannot be sent to a model.")
    try:
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):
            return data.decode("utf-16")
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise DocumentError(
            f"“{name}” is not UTF-8 text (it may be binary, or use another encoding): save it as UTF-8 and "
            "attach it again."
        ) from error


def document_block(document: Document) -> TextContent:
    """The text block the model is sent: the document's text inside a tag naming the file."""
    name = re.sub(r'["\n\r<>]', "_", document.name)
    return TextContent(text=_BLOCK.format(name=name, text=document.text))


def document_in(block: TextContent) -> Document | None:
    """The document a text block carries, if it is one made by `document_block`."""
    found = _PARSED.fullmatch(block.text)
    return Document(name=found.group(1), text=found.group(2)) if found else None


def typed_text(message: UserMessage) -> str:
    """What the person typed: the message's text blocks that are not attached documents."""
    return "".join(
        block.text
        for block in message.content
        if isinstance(block, TextContent) and document_in(block) is None
    )


def with_documents(message: UserMessage, documents: list[Document]) -> UserMessage:
    """`message` with each document added as its own text block after what was typed."""
    return message.model_copy(update={"content": [*message.content, *map(document_block, documents)]})


def too_large(document: Document, tokens: int, window: int) -> str | None:
    """Why the document cannot be sent to a model with this context window, if it alone fills it."""
    if context_gauge(tokens, window).level != "full":
        return None
    return (
        f"“{document.name}” is about {token_words(tokens)} tokens, more than the model's whole context "
        f"window ({token_words(window)} tokens), so it cannot be sent. Attach a shorter part of it, or pick "
        "a model with a larger context window in Settings."
    )
