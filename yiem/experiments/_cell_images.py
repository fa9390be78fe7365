"""An imported row's images column: data URLs or bare base64, each checked to be a whole picture.

A browser user has no server paths and the machine no internet, so images arrive inline: in CSV
as data URLs or base64 separated by whitespace (or a JSON list), in JSONL as a list of those or of
image blocks as `Dataset.to_jsonl` writes them.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from yiem.model_setup import ImageDataError, check_image
from yiem.types import ImageContent


class CellImageError(ImageDataError):
    """One image of a cell cannot be used; the message names which, to follow "Row N has …"."""


def cell_images(value: Any) -> list[ImageContent]:
    """The pictures a cell holds, each with the MIME type its bytes show; `CellImageError` if not."""
    if value in (None, "", []):
        return []
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = json.loads(text)
            except json.JSONDecodeError:
                raise CellImageError("an images column that starts with [ but is not a JSON list") from None
        else:
            value = text.split()
    if not isinstance(value, list):
        raise CellImageError("an images column that is neither text nor a list of images")
    return [_picture(entry, number) for number, entry in enumerate(value, start=1)]


def _picture(entry: Any, number: int) -> ImageContent:
    where = f"image {number}"
    if isinstance(entry, str):
        block = _from_text(entry.strip(), where)
    else:
        try:
            block = ImageContent.model_validate(entry)
        except ValidationError:
            raise CellImageError(
                f"{where} that is neither a data URL, base64 text nor an image block"
            ) from None
    try:
        mime_type = check_image(block)
    except ImageDataError as error:
        raise CellImageError(f"{where} that cannot be used: {error}") from None
    # What the bytes are, not what the URL or block claimed: the model is told the true type.
    return block.model_copy(update={"mime_type": mime_type})


def _from_text(text: str, where: str) -> ImageContent:
    if not text.startswith("data:"):
        return ImageContent(data=text)
    header, comma, data = text.partition(",")
    if not comma or not header.endswith(";base64") or not header.startswith("data:image/"):
        raise CellImageError(f"{where} whose data URL is not data:image/…;base64,…")
    return ImageContent(data=data, mime_type=header.removeprefix("data:").split(";")[0])
