"""Conversation export (JSON with the spec's field names, Markdown) and import."""

from __future__ import annotations

import base64
import json

import pytest

from yiem.chat import Transcript, TranscriptError, export_json, export_markdown, import_json
from yiem.types import (
    AgentToolCall,
    AssistantMessage,
    AssistantMessageToolCall,
    ImageContent,
    ReasoningContent,
    TextContent,
    ToolResultMessage,
    UserMessage,
)

# A 1x1 PNG: the smallest real picture.
PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c63f8"
        "cfc0f01f00050001ff89993d1d0000000049454e44ae426082"
    )
).decode()


def _transcript() -> Transcript:
    return Transcript(
        title="Sums",
        provider="llama.cpp",
        model="smollm2",
        system_prompt="Be brief.",
        messages=[
            UserMessage(
                content=[TextContent(text="add 2 and 3"), ImageContent(data=PNG, mime_type="image/png")]
            ),
            AssistantMessageToolCall(
                content=[ReasoningContent(text="I should call it")],
                tool_calls=[AgentToolCall(id="c1", name="get-sum", arguments={"a": 2, "b": 3})],
            ),
            ToolResultMessage(tool_call_id="c1", tool_name="get-sum", content=[TextContent(text="5")]),
            AssistantMessage(content=[TextContent(text="5")], stop_reason="end_turn"),
            AssistantMessage(content=[], stop_reason="error", error_message="HTTP 500: boom"),
        ],
    )


def test_json_export_uses_the_spec_field_names_and_round_trips() -> None:
    """SP-001..SP-004 field names (toolCallId, toolName, stopReason, mimeType) in the export file."""
    original = _transcript()
    text = export_json(original)
    body = json.loads(text)
    assert body["format"] == "yiem.conversation" and body["systemPrompt"] == "Be brief."
    assert body["messages"][0]["content"][1]["mimeType"] == "image/png"
    assert body["messages"][1]["toolCalls"][0]["arguments"] == {"a": 2, "b": 3}
    assert body["messages"][2]["toolCallId"] == "c1" and body["messages"][2]["role"] == "toolResult"
    assert body["messages"][4]["errorMessage"] == "HTTP 500: boom"
    back = import_json(text)
    assert back.model_dump() == original.model_dump()
    assert export_json(back) == text


def test_import_accepts_a_bare_list_of_messages() -> None:
    imported = import_json(json.dumps([{"role": "user", "content": [{"type": "text", "text": "hi"}]}]))
    assert isinstance(imported.messages[0], UserMessage)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("not json", "not JSON"),
        ("42", "JSON object"),
        ('{"title": "x"}', "no `messages` list"),
        ('{"format": "other.app", "messages": []}', "other.app"),
        ('{"messages": [{"role": "user", "content": 3}]}', "Message 0"),
        ('{"messages": [], "title": 5}', "title"),
    ],
)
def test_a_bad_import_says_what_is_wrong(text: str, expected: str) -> None:
    with pytest.raises(TranscriptError, match=expected):
        import_json(text)


def test_markdown_export_shows_roles_tools_reasoning_and_errors() -> None:
    markdown = export_markdown(_transcript())
    assert markdown.startswith("# Sums\n")
    assert "## System\n\nBe brief." in markdown
    assert "**Tool call** `get-sum`" in markdown and '"a": 2' in markdown
    assert "### Tool result: `get-sum`" in markdown
    assert "> **Reasoning**" in markdown and "*[image, image/png]*" in markdown
    assert "**Error:** HTTP 500: boom" in markdown


def _with_image(data: str, where: str = "user") -> str:
    image = {"type": "image", "data": data, "mimeType": "image/png"}
    if where == "user":
        messages = [{"role": "user", "content": [{"type": "text", "text": "look"}, image]}]
    else:
        messages = [
            {"role": "user", "content": [{"type": "text", "text": "draw"}]},
            {"role": "toolResult", "toolCallId": "c1", "toolName": "draw", "content": [image]},
        ]
    return json.dumps({"messages": messages})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Deeper than Python's parser goes: RecursionError before.
        ('{"messages": [], "title": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
        # Parsed, but deeper than any conversation is: what would be serialised again later.
        (
            '{"messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]}], "extra": '
            + "[" * 500
            + "]" * 500
            + "}",
            "nested too deeply",
        ),
        # More digits than Python converts: ValueError before.
        ('{"messages": [], "version": ' + "9" * 5000 + "}", "number with more than"),
        (_with_image("this is not base64!"), "Message 1 has an image .*not base64"),
        (_with_image(base64.b64encode(b"just some text").decode()), "Message 1 has an image .*not a picture"),
        (_with_image(PNG[:40] + "A" * 40), "Message 1 has an image .*not a picture"),  # a damaged PNG
        (_with_image("aGk=", where="tool"), "Message 2 has an image .*not a picture"),
    ],
    ids=["deep-json", "deep-data", "huge-int", "not-base64", "not-image", "damaged-png", "tool-image"],
)
def test_a_hostile_import_is_rejected_in_words(text: str, expected: str) -> None:
    with pytest.raises(TranscriptError, match=expected) as caught:
        import_json(text)
    assert str(caught.value).endswith("."), "a sentence"


def test_an_import_with_real_images_is_accepted() -> None:
    imported = import_json(_with_image(PNG))
    assert imported.messages[0].content[1] == ImageContent(data=PNG, mime_type="image/png")
    # Base64 wrapped over lines (as MIME encoders write it) is still the same picture.
    wrapped = "\n".join(PNG[i : i + 20] for i in range(0, len(PNG), 20))
    assert import_json(_with_image(wrapped)).messages[0].content[1].type == "image"


def test_an_export_without_parents_imports_as_one_chain() -> None:
    old = json.loads(export_json(_transcript()))
    del old["parents"], old["current"]  # what exports looked like before alternatives were kept
    found = import_json(json.dumps(old))
    assert found.parents is None and found.path() == found.messages


def test_the_chosen_path_follows_the_parents_and_markdown_shows_only_it() -> None:
    tree = Transcript(
        title="Two answers",
        messages=[
            UserMessage.from_text("q"),
            AssistantMessage(content=[TextContent(text="old answer")]),
            AssistantMessage(content=[TextContent(text="new answer")]),
        ],
        parents=[None, 0, 0],
        current=2,
    )
    again = import_json(export_json(tree))
    assert (again.parents, again.current) == ([None, 0, 0], 2)
    assert [m.text for m in again.path()] == ["q", "new answer"]  # type: ignore[union-attr]
    markdown = export_markdown(again)
    assert "new answer" in markdown and "old answer" not in markdown


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"parents": [None]}, "has 1 entries for 5 messages"),
        ({"parents": [None, 1, 1, 2, 3]}, "Message 2's parent \\(1\\) must be an earlier"),
        ({"current": 9}, "`current` \\(9\\) is not a message's index"),
    ],
)
def test_a_damaged_tree_is_rejected_in_words(change: dict[str, object], expected: str) -> None:
    body = {**json.loads(export_json(_transcript())), **change}
    with pytest.raises(TranscriptError, match=expected):
        import_json(json.dumps(body))
