"""An MCP server over stdio whose one tool, `draw`, answers with images that cannot be decoded.

`python tests/mcp_servers/bad_images.py`: the scripted server's protocol, with `draw` only. Its
result holds a text, an image whose data is not base64 and one that is base64 but not a picture.
"""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.mcp_servers.scripted import ScriptedServer, Send, serve_stdio

DRAW = {"name": "draw", "description": "Draws a picture (badly).", "inputSchema": {"type": "object"}}
NOT_AN_IMAGE = base64.b64encode(b"these bytes are no picture").decode()


class BadImagesServer(ScriptedServer):
    """`draw` returns two images that no decoder can read."""

    def __init__(self) -> None:
        super().__init__()
        self.tools = [dict(DRAW)]

    def _call(
        self, name: str, args: dict[str, Any], params: dict[str, Any], request_id: Any, send: Send
    ) -> dict[str, Any] | None:
        if name != "draw":
            return super()._call(name, args, params, request_id, send)
        return {
            "content": [
                {"type": "text", "text": "here are two pictures"},
                {"type": "image", "data": "%%% not base64 %%%", "mimeType": "image/png"},
                {"type": "image", "data": NOT_AN_IMAGE, "mimeType": "image/jpeg"},
            ],
            "isError": False,
        }


if __name__ == "__main__":
    serve_stdio(BadImagesServer(), noise=False)
