"""Images in model replies, tool results and MCP text load only from data: URLs; others become links."""

from __future__ import annotations

from yiem.safe_markdown import safe_markdown

DATA = "data:image/png;base64,iVBORw0KGgo="


def test_a_remote_image_becomes_a_link_with_its_address_shown() -> None:
    out = safe_markdown("See ![](http://127.0.0.1:9/?d=secret) now")
    assert "![" not in out
    assert "[:material/image: image](<http://127.0.0.1:9/?d=secret>)" in out
    assert "`http://127.0.0.1:9/?d=secret`" in out
    titled = safe_markdown('![a cat](https://x.example/c.png "Cat")')
    assert titled.startswith("[:material/image: image: a cat](<https://x.example/c.png>)")


def test_a_data_image_stays_an_image() -> None:
    assert safe_markdown(f"![dot]({DATA})") == f"![dot]({DATA})"


def test_any_other_image_syntax_is_escaped_to_a_link() -> None:
    out = safe_markdown("![ref][logo]\n\n[logo]: http://x.example/l.png\n![odd](http://x.example/a(b).png)")
    assert "![" not in out.replace("\\![", "")
    assert out.startswith("\\![ref][logo]")


def test_code_is_left_as_written() -> None:
    text = "```md\n![](http://x.example/a.png)\n```\nand `![](http://y)` inline"
    assert safe_markdown(text) == text


def test_text_without_images_is_unchanged() -> None:
    assert safe_markdown("plain [link](http://x.example) and **bold**!") == (
        "plain [link](http://x.example) and **bold**!"
    )
