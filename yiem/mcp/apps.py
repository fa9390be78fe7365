"""MCP Apps (`io.modelcontextprotocol/ui`), the host's side: a tool's view, its `ui://` resource, and the
content security policy and permissions the resource declares. The drawing lives in `ui/`."""

from __future__ import annotations

import base64
import re
import threading
from collections import OrderedDict
from datetime import UTC, datetime
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from yiem.mcp.errors import McpError
from yiem.mcp.models import McpModel, McpTool, ResourceContents

EXTENSION_ID = "io.modelcontextprotocol/ui"
VIEW_MIME_TYPE = "text/html;profile=mcp-app"
# What a host declares in its capabilities' `extensions`: the views it can draw.
UI_CAPABILITY: dict[str, Any] = {"mimeTypes": [VIEW_MIME_TYPE]}
# A view is one HTML document with its scripts inlined; the examples are 0.2 to 0.5 MB.
MAX_VIEW_BYTES = 5 * 1024 * 1024
# An origin a view may name: a scheme, a host (optionally `*.` for its subdomains) and a port; no
# path, quote, space or semicolon, so nothing a server writes can add a directive of its own.
_ORIGIN = re.compile(r"^(https|wss|http|ws)://(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:\d{1,5})?/?$")
_LOOPBACK = re.compile(r"^(http|ws)://(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?/?$")
_PERMISSIONS = {
    "camera": ("camera", "the camera"),
    "microphone": ("microphone", "the microphone"),
    "geolocation": ("geolocation", "your location"),
    "clipboard_write": ("clipboard-write", "writing to the clipboard"),
}


class McpAppError(McpError):
    """A tool's view cannot be drawn: its resource is missing, not a view, too large or unsafe."""

    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(-32002, message, data)

    def _describe(self) -> str:
        return self.message


class ViewCsp(McpModel):
    """The origins a view declares, each mapped to one CSP directive; none declared means none allowed."""

    connect_domains: list[str] = Field(default_factory=list)
    resource_domains: list[str] = Field(default_factory=list)
    frame_domains: list[str] = Field(default_factory=list)
    base_uri_domains: list[str] = Field(default_factory=list)


class ViewPermissions(McpModel):
    """Browser features a view asks for; each maps to an iframe `allow` feature."""

    camera: dict[str, Any] | None = None
    microphone: dict[str, Any] | None = None
    geolocation: dict[str, Any] | None = None
    clipboard_write: dict[str, Any] | None = None


class AppView(BaseModel):
    """A view's document and what it declared, as read from the server."""

    model_config = ConfigDict(frozen=True)

    uri: str
    html: str
    csp: ViewCsp = Field(default_factory=ViewCsp)
    permissions: ViewPermissions = Field(default_factory=ViewPermissions)
    prefers_border: bool | None = None
    fetched_at: datetime = Field(default_factory=lambda: datetime.now(UTC))


class ResourceReader(Protocol):
    def read_resource(self, uri: str) -> list[ResourceContents]: ...


def tool_view_uri(tool: McpTool) -> str | None:
    """The `ui://` resource of a tool's view, or None when the tool has none."""
    meta = (tool.model_extra or {}).get("_meta")
    if not isinstance(meta, dict):
        return None
    ui = meta.get("ui")
    uri = ui.get("resourceUri") if isinstance(ui, dict) else None
    uri = uri if isinstance(uri, str) else meta.get("ui/resourceUri")  # the extension's first spelling
    return uri if isinstance(uri, str) and uri.startswith("ui://") else None


def visible_to_model(tool: McpTool) -> bool:
    """False for a tool the server meant only for its view (`visibility: ["app"]`)."""
    meta = (tool.model_extra or {}).get("_meta")
    ui = meta.get("ui") if isinstance(meta, dict) else None
    visibility = ui.get("visibility") if isinstance(ui, dict) else None
    return not isinstance(visibility, list) or "model" in visibility


def read_view(reader: ResourceReader, uri: str, server: str) -> AppView:
    """The view at `uri`, checked: one HTML document of the view type, under the size limit, safe CSP."""
    try:
        contents = reader.read_resource(uri)
    except McpAppError:
        raise
    except McpError as error:
        raise McpAppError(f"{server} could not give the view {uri}: {error}") from error
    item = next((content for content in contents if content.uri == uri), contents[0] if contents else None)
    if item is None:
        raise McpAppError(f"{server} has no view at {uri}: reading it returned nothing.")
    if (item.mime_type or "").replace(" ", "").lower() != VIEW_MIME_TYPE:
        raise McpAppError(
            f"{server}'s resource {uri} is {item.mime_type or 'of no stated type'}, not a view "
            f"({VIEW_MIME_TYPE}), so it is not drawn."
        )
    html = item.text if item.text is not None else _decoded(item.blob, uri, server)
    if len(html.encode()) > MAX_VIEW_BYTES:
        raise McpAppError(f"{server}'s view {uri} is larger than {MAX_VIEW_BYTES // (1024 * 1024)} MB.")
    meta = (item.model_extra or {}).get("_meta")
    ui = meta.get("ui") if isinstance(meta, dict) else None
    ui = ui if isinstance(ui, dict) else {}
    csp = ViewCsp.model_validate(ui.get("csp") or {})
    for domains in (csp.connect_domains, csp.resource_domains, csp.frame_domains, csp.base_uri_domains):
        for domain in domains:
            _check_origin(domain, uri, server)
    border = ui.get("prefersBorder")
    return AppView(
        uri=uri,
        html=html,
        csp=csp,
        permissions=ViewPermissions.model_validate(ui.get("permissions") or {}),
        prefers_border=border if isinstance(border, bool) else None,
    )


def _decoded(blob: str | None, uri: str, server: str) -> str:
    if not blob:
        raise McpAppError(f"{server}'s view {uri} is empty.")
    try:
        return base64.b64decode(blob, validate=True).decode()
    except ValueError as error:
        raise McpAppError(f"{server}'s view {uri} is not readable text ({error}).") from error


def _check_origin(domain: str, uri: str, server: str) -> None:
    if not isinstance(domain, str) or not (_ORIGIN.match(domain) or _LOOPBACK.match(domain)):
        raise McpAppError(
            f"{server}'s view {uri} declares {domain!r} as an origin it may reach; only an origin such "
            "as https://api.example.com is accepted, so the view is not drawn."
        )
    if domain.startswith(("http://", "ws://")) and not _LOOPBACK.match(domain):
        raise McpAppError(
            f"{server}'s view {uri} asks to reach {domain} over plain http; only https origins (or this "
            "computer's own) are allowed, so the view is not drawn."
        )


def content_security_policy(view: AppView) -> str:
    """The policy the view's frame runs under: what the resource declared and nothing more."""
    resources = " ".join(view.csp.resource_domains)
    connect = " ".join(view.csp.connect_domains) or "'none'"
    frames = " ".join(view.csp.frame_domains) or "'none'"
    base = " ".join(view.csp.base_uri_domains) or "'none'"
    # Views inline their scripts and styles (there is no origin of their own to load them from).
    return "; ".join(
        [
            "default-src 'none'",
            f"script-src 'unsafe-inline' {resources}".strip(),
            f"style-src 'unsafe-inline' {resources}".strip(),
            f"img-src data: blob: {resources}".strip(),
            f"font-src data: {resources}".strip(),
            f"media-src data: blob: {resources}".strip(),
            f"connect-src {connect}",
            f"frame-src {frames}",
            f"base-uri {base}",
            "form-action 'none'",
        ]
    )


def allow_attribute(permissions: ViewPermissions) -> str:
    """The frame's `allow` attribute: only the features the resource declared."""
    return "; ".join(
        feature for field, (feature, _) in _PERMISSIONS.items() if getattr(permissions, field) is not None
    )


def permission_words(view: AppView) -> list[str]:
    """What the view may use, one sentence a feature; empty when it asked for none."""
    return [
        f"It may use {words}."
        for field, (_, words) in _PERMISSIONS.items()
        if getattr(view.permissions, field) is not None
    ]


def csp_words(view: AppView) -> list[str]:
    """The view's reach in words: where it may connect, load from, frame and point its base."""
    csp = view.csp
    return [
        _reach("connect to", csp.connect_domains, "It may not connect anywhere."),
        _reach("load images, scripts, styles and fonts from", csp.resource_domains, "It loads nothing."),
        _reach("embed pages from", csp.frame_domains, "It may not embed other pages."),
        _reach("set its base address to", csp.base_uri_domains, "It may not change its base address."),
    ]


def _reach(verb: str, domains: list[str], none: str) -> str:
    return f"It may {verb} {', '.join(domains)}." if domains else none


class ViewCache:
    """Views already read, by server and URI, so a redraw or a reopened chat does not read them again."""

    def __init__(self, size: int = 64) -> None:
        self._views: OrderedDict[tuple[str, str], AppView] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def get(self, server: str, uri: str) -> AppView | None:
        with self._lock:
            view = self._views.get((server, uri))
            if view is not None:
                self._views.move_to_end((server, uri))
            return view

    def load(self, reader: ResourceReader, server: str, uri: str) -> AppView:
        """The cached view, else read from the server and kept."""
        if (view := self.get(server, uri)) is not None:
            return view
        view = read_view(reader, uri, server)
        with self._lock:
            self._views[(server, uri)] = view
            while len(self._views) > self._size:
                self._views.popitem(last=False)
        return view

    def forget(self, server: str) -> None:
        """Drop a server's views (it reconnected, or its tools changed)."""
        with self._lock:
            for key in [key for key in self._views if key[0] == server]:
                del self._views[key]
