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
