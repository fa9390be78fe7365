"""Datasets: CSV and JSONL import with a column mapping, JSONL export, versions."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import pytest
from PIL import Image

from yiem.experiments import Dataset, DatasetError, DatasetItem
from yiem.store import ConversationNotFoundError, ConversationStore, create_store_engine
from yiem.types import (
    AgentMessage,
    AgentToolCall,
    AssistantMessage,
    AssistantMessageToolCall,
    ImageContent,
    TextContent,
    ToolResultMessage,
    UserMessage,
)

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
    image = {"type": "image", "data": _picture("PNG"), "mimeType": "image/png"}
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


def test_frozen_shares_no_container_with_the_dataset() -> None:
    image = ImageContent(data="aGk=", mime_type="image/png")
    data = Dataset(items=[DatasetItem(id="a", input="x", images=[image], vars={"k": "v"}, tags=["t"])])
    frozen = data.frozen()
    before = frozen.model_dump()
    item = data.items[0]
    item.vars["k"] = "changed"
    item.tags.append("new")
    item.images.append(image)
    item.images[0].data = "Ynll"
    data.items.append(DatasetItem(id="b", input="y"))
    assert frozen.model_dump() == before


def _saved_chat(store: ConversationStore, title: str, messages: list[AgentMessage]) -> str:
    conversation = store.create(title=title, provider="local", model="smollm2")
    for message in messages:
        store.append_message(conversation.id, message)
    return conversation.id


def _reply(text: str, error: str | None = None) -> AssistantMessage:
    return AssistantMessage(content=[TextContent(text=text)], error_message=error)


def test_items_from_two_saved_conversations(tmp_path: Path) -> None:
    engine = create_store_engine(f"sqlite:///{tmp_path / 'app.db'}")
    mine = ConversationStore(engine, owner="ann")
    image = ImageContent(data="aGk=", mime_type="image/png")
    capitals = _saved_chat(
        mine,
        "capitals",
        [
            UserMessage.from_text("Capital of France?"),
            _reply("Paris."),
            UserMessage.from_text("And of Italy?", [image]),
            # A turn with a tool call: its answer is the last plain reply, not the call.
            AssistantMessageToolCall(tool_calls=[AgentToolCall(id="c1", name="lookup")]),
            ToolResultMessage(tool_call_id="c1", tool_name="lookup", content=[TextContent(text="Rome")]),
            _reply("Rome."),
            UserMessage.from_text("And of Spain?"),
            _reply("", error="The provider did not answer."),
        ],
    )
    sums = _saved_chat(mine, "sums", [UserMessage.from_text("2+2?"), _reply("4")])

    data = Dataset.from_conversations(mine, [capitals, sums], name="from chat")
    assert data.name == "from chat"
    assert [(i.input, i.expected) for i in data.items] == [
        ("Capital of France?", "Paris."),
        ("And of Italy?", "Rome."),
        ("And of Spain?", None),  # the reply failed: the question is kept, with nothing expected
        ("2+2?", "4"),
    ]
    assert data.items[1].images == [image] and data.items[0].images == []
    # Each is the conversation up to its turn: a later question is replayed knowing what came before.
    history = mine.load_messages(capitals)
    users = [n for n, message in enumerate(history) if isinstance(message, UserMessage)]
    assert [item.messages for item in data.items[:3]] == [history[:n] for n in users]
    assert data.items[0].messages == [] and data.items[3].messages == []
    # Ids name the conversation and the turn: adding the same conversation again gives the same ids.
    assert [i.id for i in data.items] == [
        f"{capitals[:8]}-1",
        f"{capitals[:8]}-2",
        f"{capitals[:8]}-3",
        f"{sums[:8]}-1",
    ]
    assert Dataset.from_conversations(mine, [sums]).items == data.items[3:]

    # Another person's store cannot read ann's conversations, and says so rather than adding nothing.
    theirs = ConversationStore(engine, owner="bob")
    with pytest.raises(ConversationNotFoundError, match="not yours"):
        Dataset.from_conversations(theirs, [sums])


def test_with_images_replaces_one_items_images() -> None:
    image = ImageContent(data="aGk=", mime_type="image/png")
    data = Dataset(items=[DatasetItem(id="a", input="x"), DatasetItem(id="b", input="y")])
    attached = data.with_images("b", [image])
    assert [item.images for item in attached.items] == [[], [image]]
    assert data.items[1].images == []  # the dataset it came from is unchanged
    assert attached.with_images("b", []).items[1].images == []
    with pytest.raises(DatasetError, match="no item 'gone'"):
        data.with_images("gone", [image])


def _picture(form: str) -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (2, 2), (0, 128, 255)).save(buffer, format=form)
    return base64.b64encode(buffer.getvalue()).decode()


def test_csv_images_column_takes_data_urls_and_bare_base64() -> None:
    png, jpeg = _picture("PNG"), _picture("JPEG")
    text = f'question,pictures\nWhat colour?,"data:image/png;base64,{png}  {jpeg}"\nNone here,\n'
    data = Dataset.from_csv(text, input="question", images="pictures", vars=[])
    first, second = data.items
    assert [(image.data, image.mime_type) for image in first.images] == [
        (png, "image/png"),
        (jpeg, "image/jpeg"),
    ]
    assert second.images == [] and first.vars == {}
    # A data URL that claims the wrong type is stored as what its bytes are.
    wrong = Dataset.from_csv(f'input,images\nx,"data:image/png;base64,{jpeg}"\n')
    assert wrong.items[0].images[0].mime_type == "image/jpeg"
    # A JSON list in a CSV cell works too.
    listed = Dataset.from_csv(f'input,images\nx,"[""{png}"", ""{jpeg}""]"\n')
    assert len(listed.items[0].images) == 2


def test_jsonl_images_column_takes_a_list() -> None:
    gif = _picture("GIF")
    line = json.dumps({"q": "Which?", "shots": [f"data:image/gif;base64,{gif}", gif]})
    (item,) = Dataset.from_jsonl(line + "\n", input="q", images="shots").items
    assert [image.mime_type for image in item.images] == ["image/gif", "image/gif"]
    assert "shots" not in item.vars


@pytest.mark.parametrize(
    ("cell", "words"),
    [
        ("not*base64!", "Row 2 has image 1 that cannot be used: its data is not base64."),
        (
            base64.b64encode(b"just some text").decode(),
            "Row 2 has image 1 that cannot be used: its data is not a picture",
        ),
        ("data:text/plain;base64,aGk=", "Row 2 has image 1 whose data URL is not data:image/"),
        ("data:image/png,rawbytes", "Row 2 has image 1 whose data URL is not data:image/"),
        ("[not json", "Row 2 has an images column that starts with [ but is not a JSON list."),
    ],
)
def test_csv_images_that_are_not_pictures_are_refused_naming_the_row(cell: str, words: str) -> None:
    png = _picture("PNG")
    # The bad one second in its cell, after a good one: the message names which image.
    second = cell if cell.startswith("[") else f"{png} {cell}"
    text = f'input,images\nfine,{png}\nbad,"{second}"\n'
    words = words if cell.startswith("[") else words.replace("image 1", "image 2")
    with pytest.raises(DatasetError) as caught:
        Dataset.from_csv(text)
    assert str(caught.value).startswith(words)


def test_jsonl_image_blocks_are_checked_too() -> None:
    fake = {"type": "image", "data": "aGk=", "mimeType": "image/png"}
    with pytest.raises(
        DatasetError, match="Line 1 has image 1 that cannot be used: its data is not a picture"
    ):
        Dataset.from_jsonl(json.dumps({"input": "x", "images": [fake]}))
    with pytest.raises(DatasetError, match="Line 1 has image 1 that is neither a data URL"):
        Dataset.from_jsonl(json.dumps({"input": "x", "images": [42]}))
    with pytest.raises(DatasetError, match="Line 1 has an images column that is neither text nor a list"):
        Dataset.from_jsonl(json.dumps({"input": "x", "images": {"a": 1}}))
    # With no images column chosen, the column is left alone (and is not a var either).
    (item,) = Dataset.from_jsonl(json.dumps({"input": "x", "images": [fake]}), images=None).items
    assert item.images == [] and item.vars == {}
