"""Datasets: CSV and JSONL import with a column mapping, JSONL export, versions."""

from __future__ import annotations

from pathlib import Path

import pytest

from yiem.experiments import Dataset, DatasetError, DatasetItem

CSV = """question,answer,language,topic
Capital of France?,Paris,English,"geo, easy"
"Two plus two, in words?",four,English,maths
"""


def test_csv_with_a_column_mapping() -> None:
    data = Dataset.from_csv(
        CSV, name="quiz", input="question", expected="answer", vars=["language"], tags="topic"
    )
    assert data.name == "quiz"
    first, second = data.items
    assert (first.input, first.expected, first.vars, first.tags) == (
        "Capital of France?",
        "Paris",
        {"language": "English"},
        ["geo", "easy"],
    )
    assert second.input == "Two plus two, in words?"
    # Without `vars`, every column not used otherwise becomes a var.
    loose = Dataset.from_csv(CSV, input="question", expected="answer", tags=None)
    assert loose.items[0].vars == {"language": "English", "topic": "geo, easy"}


def test_csv_errors_name_the_row_and_column(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="Row 2 has no value in the input column 'question'"):
        Dataset.from_csv("question,answer\nfirst,1\n,2\n", input="question")
    with pytest.raises(DatasetError, match="no column 'lang'"):
        Dataset.from_csv(CSV, input="question", vars=["lang"])
    with pytest.raises(DatasetError, match="empty"):
        Dataset.from_csv("")
    with pytest.raises(DatasetError, match="Cannot read"):
        Dataset.from_csv(tmp_path / "missing.csv")


def test_jsonl_round_trip_keeps_everything(tmp_path: Path) -> None:
    image = {"type": "image", "data": "aGk=", "mimeType": "image/png"}
    original = Dataset.from_records(
        [
            {"input": "Describe it", "images": [image], "tags": ["vision"], "vars": {"tone": "dry"}},
            {"input": "2+2", "expected": "4", "id": "sum"},
        ]
    )
    path = tmp_path / "d.jsonl"
    path.write_text(original.to_jsonl())
    again = Dataset.from_jsonl(path, name="dataset")
    assert again == original
    assert again.version == original.version
    assert again.items[0].images[0].mime_type == "image/png"


def test_jsonl_errors_name_the_line() -> None:
    with pytest.raises(DatasetError, match="Line 2 is not valid JSON"):
        Dataset.from_jsonl('{"input": "a"}\n{"input": \n')
    with pytest.raises(DatasetError, match="Line 1 is not a JSON object"):
        Dataset.from_jsonl("[1, 2]\n")


def test_version_follows_the_items() -> None:
    data = Dataset(items=[DatasetItem(id="a", input="x")])
    before = data.version
    frozen = data.frozen()
    data.items[0].expected = "y"
    assert data.version != before
    assert frozen.version == before
