"""Client ID Metadata Documents: yiem's client id is the https URL of a JSON document about itself,
which the app serves, so authorization servers that support it need no registration."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit


def is_client_metadata_url(url: str) -> bool:
    """Whether `url` can be a client id: https, with a path, no fragment (the CIMD draft, §3)."""
    parts = urlsplit(url)
    has_path = parts.path not in ("", "/")
    return parts.scheme == "https" and bool(parts.netloc) and has_path and not parts.fragment


def client_metadata_document(url: str, redirect_uris: list[str], client_name: str = "yiem") -> dict[str, Any]:
    """The document to serve at `url`: its own URL as `client_id`, a public client."""
    return {
        "client_id": url,
        "client_name": client_name,
        "redirect_uris": redirect_uris,
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "application_type": "web",
    }
