"""Every kind of tool result content, drawn by the Tools page (AppTest)."""

from __future__ import annotations

import base64
import io
import json
import wave
from typing import Any

from streamlit.testing.v1 import AppTest


def _wav() -> str:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"\x00\x00" * 800)
    return base64.b64encode(buffer.getvalue()).decode()


RESPONSE: dict[str, Any] = {
    "content": [
        {"type": "text", "text": "**Bold** words"},
        {"type": "text", "text": '{"rows": [1, 2]}'},
        {"type": "audio", "data": _wav(), "mimeType": "audio/wav"},
        {
            "type": "resource_link",
            "uri": "file:///reports/q3.pdf",
            "name": "q3.pdf",
            "title": "Q3 report",
            "description": "The quarter in numbers",
            "mimeType": "application/pdf",
            "size": 2048,
        },
        {
            "type": "resource",
            "resource": {"uri": "memo://notes/1", "mimeType": "text/plain", "text": "A note"},
        },
        {
            "type": "resource",
            "resource": {"uri": "memo://blob/2", "mimeType": "application/octet-stream", "blob": "AAEC"},
        },
        {"type": "hologram", "beam": 3},
    ],
    "structuredContent": {"total": "three"},
}


# AppTest runs this function's source alone, so its annotations name builtins only.
def _draw(response: dict, output_schema: dict | None, error: str | None = None) -> None:  # type: ignore[type-arg]
    from ui.tools.result import draw_record
    from yiem.explorer import CallRecord, CallStatus

    record = CallRecord(
        server="s",
        tool="t",
        arguments={"x": 1},
        duration_ms=1234.0,
        status=CallStatus.FAILED if error else CallStatus.DONE,
        request={"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "t", "arguments": {"x": 1}}},
        response=response if not error else None,
        error=error,
    )
    draw_record(record, output_schema, key="r")


def test_every_content_kind_is_drawn() -> None:
    schema = {"type": "object", "properties": {"total": {"type": "integer"}}, "required": ["total"]}
    at = AppTest.from_function(_draw, args=(RESPONSE, schema))
    at.run()
    assert not at.exception, at.exception
    markdown = "\n".join(element.value for element in at.markdown)
    assert "**Bold** words" in markdown
    assert "**Q3 report** — `file:///reports/q3.pdf` · application/pdf · 2,048 bytes" in markdown
    assert "A note" in markdown
    assert len(at.get("audio")) == 1
    shown_json = [json.loads(element.value) for element in at.json]
    assert {"rows": [1, 2]} in shown_json, "text that is JSON is shown as JSON"
    assert {"total": "three"} in shown_json
    captions = "\n".join(element.value for element in at.caption)
    assert "The quarter in numbers" in captions
    assert "3 bytes of application/octet-stream." in markdown
    assert "A content block of type 'hologram' that yiem does not draw:" in captions
    assert at.get("download_button"), "a binary resource can be downloaded"
    warnings = [element.value for element in at.warning]
    assert warnings == [
        "The structured content does not match the tool's output schema: "
        "total: 'three' is not of type 'integer'"
    ]
    assert "s` · `t` · 1.23 s" in captions


def test_an_error_result_and_a_failed_call_read_as_errors() -> None:
    failing = {"content": [{"type": "text", "text": "disk full"}], "isError": True}
    at = AppTest.from_function(_draw, args=(failing, None))
    at.run()
    assert [element.value for element in at.error] == ["The tool reported an error:", "disk full"]
    at = AppTest.from_function(_draw, args=({}, None, "MCP server 'x' closed its output"))
    at.run()
    assert [element.value for element in at.error] == ["MCP server 'x' closed its output"]
    assert any("closed its output" in caption.value for caption in at.caption), "the raw view says why"
