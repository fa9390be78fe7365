"""URI templates as forms: variables, expansion (RFC 6570 levels 1-3), completion references."""

from __future__ import annotations

from yiem.explorer import expand_template, prompt_ref, template_ref, template_schema, template_variables
from yiem.mcp import McpResourceTemplate


def test_variables_in_order_once() -> None:
    assert template_variables("file:///{+path}/{name}{?q,lang}{&q}") == ["path", "name", "q", "lang"]
    assert template_variables("demo://static") == []


def test_expansion_escapes_unless_reserved() -> None:
    assert expand_template("demo://text/{id}", {"id": "a b/c"}) == "demo://text/a%20b%2Fc"
    assert expand_template("file:///{+path}", {"path": "srv/a b"}) == "file:///srv/a%20b"
    assert expand_template("x://s{?q,lang}", {"q": "tea", "lang": ""}) == "x://s?q=tea"
    assert expand_template("x://{a}{/b}", {"a": "1", "b": "2"}) == "x://1/2"


def test_schema_and_refs() -> None:
    template = McpResourceTemplate.model_validate({"uriTemplate": "demo://{kind}/{id}", "name": "d"})
    schema = template_schema(template)
    assert list(schema["properties"]) == ["kind", "id"] and schema["required"] == ["kind", "id"]
    assert prompt_ref("p") == {"type": "ref/prompt", "name": "p"}
    assert template_ref("demo://{id}") == {"type": "ref/resource", "uri": "demo://{id}"}


def test_icons_come_from_the_server_and_only_safe_ones_are_shown() -> None:
    """Icons of the server and its tools are read; a page shows https or data:image only."""
    from tests.fixtures.mcp import SCRIPTED_STDIO
    from yiem.explorer import icon_src
    from yiem.mcp import Icon, McpClient

    with McpClient.stdio(SCRIPTED_STDIO.command, SCRIPTED_STDIO.args) as client:
        server_icon = icon_src(client.server_info.icons)
        add = next(tool for tool in client.list_tools() if tool.name == "add")
    assert server_icon is not None and server_icon.startswith("data:image/png;base64,")
    assert [icon.src.split(":")[0] for icon in add.icons] == ["data", "http"]
    assert icon_src(add.icons) == server_icon
    assert icon_src([Icon(src="http://plain.example/a.png"), Icon(src="javascript:alert(1)")]) is None
    assert icon_src([Icon(src="https://cdn.example/a.png")]) == "https://cdn.example/a.png"
