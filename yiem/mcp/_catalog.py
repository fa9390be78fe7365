"""McpClient's catalogue methods: resources, prompts, templates, completion and paging, kept here
so the client stays small. Lists a 2026-07-28 server marks cacheable are reused while fresh."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from yiem.mcp._list_cache import ListCache
from yiem.mcp.errors import McpProtocolError
from yiem.mcp.models import (
    CompletionResult,
    GetPromptResult,
    McpPrompt,
    McpResource,
    McpResourceTemplate,
    PromptMessage,
    ResourceContents,
)

MAX_PAGES = 1000


class CatalogMethods:
    """Needs `request`, `label`, `stateless` and `lists` from the client."""

    lists: ListCache

    @property
    def label(self) -> str:
        raise NotImplementedError

    @property
    def stateless(self) -> bool:
        raise NotImplementedError

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        raise NotImplementedError

    def list_resources(self) -> list[McpResource]:
        """Every resource, following `nextCursor` to the end."""
        return [McpResource.model_validate(raw) for raw in self._paginate("resources/list", "resources")]

    def read_resource(self, uri: str) -> list[ResourceContents]:
        """The contents of the resource at `uri`."""
        result = self.request("resources/read", {"uri": uri})
        contents = result.get("contents")
        return (
            [ResourceContents.model_validate(raw) for raw in contents] if isinstance(contents, list) else []
        )

    def list_prompts(self) -> list[McpPrompt]:
        """Every prompt, following `nextCursor` to the end."""
        return [McpPrompt.model_validate(raw) for raw in self._paginate("prompts/list", "prompts")]

    def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None) -> GetPromptResult:
        """The prompt `name` filled with `arguments`."""
        result = self.request("prompts/get", {"name": name, "arguments": dict(arguments or {})})
        messages = result.get("messages")
        return GetPromptResult(
            description=result.get("description"),
            messages=[PromptMessage.from_wire(raw) for raw in messages if isinstance(raw, dict)]
            if isinstance(messages, list)
            else [],
        )

    def list_resource_templates(self) -> list[McpResourceTemplate]:
        """Every resource template, following `nextCursor` to the end."""
        raw = self._paginate("resources/templates/list", "resourceTemplates")
        return [McpResourceTemplate.model_validate(item) for item in raw]

    def complete(
        self,
        ref: Mapping[str, str],
        argument: str,
        value: str,
        context: Mapping[str, str] | None = None,
    ) -> CompletionResult:
        """Suggestions for `argument` of a prompt (`{"type": "ref/prompt", "name": …}`) or a
        resource template (`{"type": "ref/resource", "uri": …}`), given what is typed so far."""
        params: dict[str, Any] = {"ref": dict(ref), "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": dict(context)}
        result = self.request("completion/complete", params)
        return CompletionResult.model_validate(result.get("completion") or {})

    def set_logging_level(self, level: str) -> None:
        """Ask the server to send log messages at `level` and above (`notifications/message`)."""
        self.request("logging/setLevel", {"level": level})

    def list_age(self, method: str) -> float | None:
        """How many seconds old the last `method` list (say "tools/list") was when it came from the
        cache; None when the server sent it fresh."""
        return self.lists.age(method)

    def _paginate(self, method: str, key: str) -> list[dict[str, Any]]:
        cached = self.lists.get(method) if self.stateless else None
        if cached is not None:
            return cached
        items: list[dict[str, Any]] = []
        seen: set[str] = set()
        cursor: str | None = None
        ttls: list[Any] = []
        for _ in range(MAX_PAGES):
            result = self.request(method, {"cursor": cursor} if cursor else None)
            ttls.append(result.get("ttlMs"))
            page = result.get(key)
            if isinstance(page, list):
                items.extend(item for item in page if isinstance(item, dict))
            next_cursor = result.get("nextCursor")
            if not next_cursor:
                if self.stateless and all(isinstance(ttl, int | float) for ttl in ttls):
                    self.lists.put(method, items, min(ttls))  # fresh as long as its stalest page
                return items
            if next_cursor in seen:
                raise McpProtocolError(
                    f"MCP server {self.label} repeated the cursor {next_cursor!r} in {method} after "
                    f"{len(items)} items; stopped to avoid an endless loop",
                    data={key: items},
                )
            seen.add(str(next_cursor))
            cursor = str(next_cursor)
        raise McpProtocolError(f"MCP server {self.label} sent more than {MAX_PAGES} pages for {method}")
