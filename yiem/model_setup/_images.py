"""Image blocks checked before they are trusted: imported, or drawn on the page."""

from __future__ import annotations

import base64
import binascii
import io
import struct

from yiem.errors import YiemError
from yiem.types import ImageContent

# What the chat's models accept and the page draws.
PICTURE_FORMATS = ("PNG", "JPEG", "GIF", "WEBP")


class ImageDataError(YiemError, ValueError):
    """An image block's data is not a picture; the message says why, to follow "has an image that…"."""


def image_bytes(block: ImageContent) -> bytes:
    """The block's decoded bytes; `ImageDataError` when its data is not base64."""
    # Encoders that wrap base64 over lines (MIME) are fine: only the line breaks are dropped.
    try:
        return base64.b64decode("".join(block.data.split()), validate=True)
    except (binascii.Error, ValueError) as error:
        raise ImageDataError("its data is not base64") from error


def check_image(block: ImageContent) -> str:
    """The MIME type of the picture the block holds; `ImageDataError` unless a whole PNG, JPEG, GIF or WebP.

    The file's structure is checked without decoding its pixels, so a huge picture costs little.
    """
    from PIL import Image

    data = image_bytes(block)
    try:
        with Image.open(io.BytesIO(data), formats=PICTURE_FORMATS) as picture:
            mime_type = Image.MIME[picture.format or "PNG"]
            picture.verify()
    # Pillow reports a damaged file through any of these (SyntaxError for a broken PNG chunk).
    except (OSError, SyntaxError, ValueError, EOFError, struct.error, Image.DecompressionBombError) as error:
        raise ImageDataError("its data is not a picture (PNG, JPEG, GIF or WebP)") from error
    return mime_type
