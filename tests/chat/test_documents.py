"""Attached documents: text read from PDF and text files, sent as a named block, refused in words."""

from __future__ import annotations

import json

import pytest

from tests.fixtures.documents import minimal_pdf
from yiem.chat import (
    Document,
    DocumentError,
    document_block,
    document_in,
    read_document,
    too_large,
    typed_text,
    user_message,
    with_documents,
)
from yiem.redaction import add_secrets
from yiem.types import TextContent


def test_a_pdfs_text_is_read_page_text_and_all() -> None:
    document = read_document("Report.PDF", minimal_pdf(["The quokka report", "Line (two)"]))
    assert document == Document(name="Report.PDF", text="The quokka report\nLine (two)")


@pytest.mark.parametrize("suffix", ["txt", "md", "markdown", "csv", "json"])
def test_text_files_are_read_as_utf8(suffix: str) -> None:
    data = "\ufeffname,ville\nZoë,Köln\n".encode()  # a byte-order mark, as Excel writes CSV
    assert read_document(f"cities.{suffix}", data).text == "name,ville\nZoë,Köln"


def test_a_utf16_text_file_is_read_too() -> None:
    assert read_document("notes.txt", "Grüße".encode("utf-16")).text == "Grüße"


@pytest.mark.parametrize(
    ("name", "data", "words"),
    [
        ("broken.pdf", b"%PDF-1.4\n1 0 obj garbage", "cannot be read as a PDF: the file is damaged"),
        ("fake.pdf", b"\x89PNG\r\n\x1a\nnot a pdf at all", "cannot be read as a PDF"),
        ("picture.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "holds binary data"),
        ("latin.csv", "café".encode("latin-1"), "not UTF-8 text"),
        ("empty.md", b"   \n", "has no text to send"),
        ("blank.pdf", minimal_pdf([]), "A scanned PDF holds pictures"),
        ("sheet.xlsx", b"PK\x03\x04", "only .pdf, .txt, .md, .markdown, .csv, .json files can"),
    ],
)
def test_a_file_that_cannot_be_read_says_why_by_name(name: str, data: bytes, words: str) -> None:
    with pytest.raises(DocumentError) as raised:
        read_document(name, data)
    assert f"“{name}”" in str(raised.value) and words in str(raised.value)


def test_the_block_names_the_file_and_round_trips() -> None:
    document = Document(name='odd "name".json', text=json.dumps({"a": [1, 2]}))
    block = document_block(document)
    assert '<document name="odd _name_.json">' in block.text and document.text in block.text
    assert document_in(block) == Document(name="odd _name_.json", text=document.text)
    assert document_in(TextContent(text="just typed <document> text")) is None


def test_a_message_keeps_what_was_typed_apart_from_its_documents() -> None:
    documents = [Document(name="a.txt", text="alpha"), Document(name="b.md", text="# beta")]
    message = with_documents(user_message("Compare these."), documents)
    assert [document_in(b) for b in message.content if isinstance(b, TextContent)] == [None, *documents]
    assert typed_text(message) == "Compare these."
    assert "alpha" in message.text and "# beta" in message.text  # what the model and the gauge see


def test_a_secret_in_a_document_is_masked() -> None:
    secret = "sk-document-secret-5550001112"
    add_secrets(secret)
    assert secret not in read_document("keys.txt", f"the key is {secret}".encode()).text


def test_a_document_that_fills_the_window_alone_is_refused_in_words() -> None:
    document = Document(name="book.txt", text="x")
    assert too_large(document, 100, 2048) is None
    words = too_large(document, 4096, 2048)
    assert words is not None and "“book.txt” is about 4,096 tokens" in words and "2,048" in words
