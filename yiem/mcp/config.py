"""mcp.json in the `mcpServers` format of Claude Desktop, Cursor and VS Code: read, expand, save."""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from yiem.errors import YiemError
from yiem.mcp._auth import GrantAuth, OAuthChallenge, OAuthClient, SignInSession, client_credentials_grant
from yiem.mcp.client import McpClient
from yiem.mcp.errors import McpConfigError
from yiem.mcp.models import Root
from yiem.redaction import add_secrets, header_secrets


class MachineSignInConfigError(YiemError, ValueError):
    """An mcp.json entry for machine sign-in that lacks its credentials."""


# `${VAR}` or `${VAR:-default}`; `$${...}` is a literal `${...}` (how a value typed in the browser is saved).
_VAR = re.compile(r"\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
# Literal header values under these names are secrets too (an operator may write a token in mcp.json).
_SECRET_HEADER = re.compile(r"auth|key|token|secret|cookie|session|password", re.IGNORECASE)


class StdioServerConfig(BaseModel):
    """A server started as a child process and spoken to over stdin and stdout."""

    model_config = ConfigDict(extra="allow")

    type: Literal["stdio"] = "stdio"
    command: str = Field(min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    # Folders the server may work in (MCP roots), set by an admin; none by default.
    roots: list[str] = Field(default_factory=list)


class McpServerUrlError(McpConfigError, ValueError):
    """A server URL that is not http(s); a ValueError so pydantic reports it with the entry's other faults."""


class HttpServerConfig(BaseModel):
    """A server reached over Streamable HTTP at `url`."""

    model_config = ConfigDict(extra="allow")

    # "sse" is the legacy HTTP+SSE transport; "http" falls back to it when a server refuses.
    type: Literal["http", "streamable-http", "sse"] = "http"
    url: str
    headers: dict[str, str] = Field(default_factory=dict)
    roots: list[str] = Field(default_factory=list)
    # A client registered beforehand at the server's authorization server, for servers whose
    # authorization server does not register clients itself (OAuth sign-in).
    oauth_client_id: str | None = None
    oauth_client_secret: str | None = None
    # Machine sign-in (no person): "client_credentials" with the secret above, or a PEM private key
    # (private_key_jwt) named by `${VAR}`; tokens are fetched by the app and kept in memory only.
    oauth_grant: Literal["authorization_code", "client_credentials"] = "authorization_code"
    oauth_private_key: str | None = None
    oauth_signing_algorithm: str = "ES256"

    @model_validator(mode="after")
    def _machine_needs_credentials(self) -> HttpServerConfig:
        if self.oauth_grant == "client_credentials" and not (
            self.oauth_client_id and (self.oauth_client_secret or self.oauth_private_key)
        ):
            raise MachineSignInConfigError(
                "oauth_grant 'client_credentials' needs oauth_client_id and either oauth_client_secret "
                "or oauth_private_key (write them as ${VAR} so the secret stays in the environment)"
            )
        return self

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str) -> str:
        # A `${VAR}` may hold the whole URL; it is checked again once expanded.
        if not url.startswith(("http://", "https://", "${")):
            raise McpServerUrlError(f"must start with http:// or https:// (got {url!r})")
        return url


McpServerConfig = StdioServerConfig | HttpServerConfig


class McpConfig(BaseModel):
    """The servers of one mcp.json, in file order, with `${VAR}` left unexpanded."""

    model_config = ConfigDict(extra="allow")

    servers: dict[str, McpServerConfig] = Field(default_factory=dict)
    # Whether people using the app may add servers that run commands on this machine.
    allow_stdio_from_ui: bool = False


def parse_server_entry(name: str, raw: Any, source: str = "mcp.json") -> McpServerConfig:
    """One `mcpServers` entry; the kind comes from `type`, else from `command` or `url`."""
    where = f"{source}: server {name!r}"
    if not isinstance(raw, dict):
        raise McpConfigError(f"{where} must be an object with a command or a url")
    kind = raw.get("type")
    if kind is None:
        kind = "stdio" if "command" in raw else "http" if "url" in raw else None
    model: type[StdioServerConfig] | type[HttpServerConfig]
    if kind == "stdio":
        model = StdioServerConfig
    elif kind in ("http", "streamable-http", "sse"):
        model = HttpServerConfig
    elif kind is None:
        raise McpConfigError(f"{where} needs a 'command' (stdio) or a 'url' (http)")
    else:
        raise McpConfigError(
            f"{where}: field 'type' is {kind!r}; use 'stdio', 'http', 'streamable-http' or 'sse'"
        )
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise McpConfigError(_describe(where, exc)) from exc


def parse_mcp_config(data: Any, source: str = "mcp.json") -> McpConfig:
    """Validate parsed mcp.json data."""
    if not isinstance(data, dict):
        raise McpConfigError(f"{source} must hold a JSON object with an 'mcpServers' object")
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise McpConfigError(f"{source}: field 'mcpServers' must be an object of name → server")
    allow = data.get("allow_stdio_from_ui", False)
    if not isinstance(allow, bool):
        raise McpConfigError(f"{source}: field 'allow_stdio_from_ui' must be true or false")
    extra = {key: value for key, value in data.items() if key not in ("mcpServers", "allow_stdio_from_ui")}
    return McpConfig(
        servers={name: parse_server_entry(name, raw, source) for name, raw in servers.items()},
        allow_stdio_from_ui=allow,
        **extra,
    )


def load_mcp_config(path: str | Path) -> McpConfig:
    """Read mcp.json; a missing file is an empty configuration."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return McpConfig()
    except OSError as exc:
        raise McpConfigError(f"cannot read {path}: {exc.strerror}") from exc
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise McpConfigError(f"{path} is not valid JSON: {exc}") from exc
    return parse_mcp_config(data, str(path))


def config_to_json(config: McpConfig) -> dict[str, Any]:
    """The mcp.json shape of `config`, `${VAR}` references kept as written."""
    data: dict[str, Any] = dict(config.model_extra or {})
    data["mcpServers"] = {
        name: entry.model_dump(mode="json", exclude_defaults=True) | _kept_type(entry)
        for name, entry in config.servers.items()
    }
    if config.allow_stdio_from_ui:
        data["allow_stdio_from_ui"] = True
    return data


def save_mcp_config(path: str | Path, config: McpConfig) -> None:
    """Write `config` to `path` atomically, so a crash never leaves half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(config_to_json(config), indent=2, ensure_ascii=False) + "\n"
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def expand_vars(value: str, field: str, environ: Mapping[str, str], *, secret: bool = False) -> str:
    """`${VAR}` and `${VAR:-default}` from `environ`; an unset variable without default is an error.
    `$${...}` stays a literal `${...}`. With `secret`, values taken from `environ` are masked from now on."""

    def replace(match: re.Match[str]) -> str:
        escaped, name, default = match.group(1), match.group(2), match.group(3)
        if escaped:
            return match.group(0)[1:]
        if name in environ:
            if secret:
                add_secrets(*header_secrets(environ[name]))
            return environ[name]
        if default is not None:
            return default
        raise McpConfigError(
            f"field {field!r} uses ${{{name}}}, but the environment variable {name} is not set"
        )

    return _VAR.sub(replace, value)


def resolve_server(
    name: str, entry: McpServerConfig, environ: Mapping[str, str] | None = None
) -> McpServerConfig:
    """A copy of `entry` with every `${VAR}` expanded; errors name the entry and field.

    Values from the environment in a URL, header or `env`, and literal values of headers that carry
    credentials, are registered as secrets, so they are masked wherever text is stored or shown."""
    env = os.environ if environ is None else environ
    try:
        if isinstance(entry, StdioServerConfig):
            return entry.model_copy(
                update={
                    "command": expand_vars(entry.command, "command", env),
                    "args": [expand_vars(arg, f"args[{i}]", env) for i, arg in enumerate(entry.args)],
                    "env": {
                        key: expand_vars(value, f"env.{key}", env, secret=True)
                        for key, value in entry.env.items()
                    },
                    "cwd": expand_vars(entry.cwd, "cwd", env) if entry.cwd else None,
                }
            )
        url = expand_vars(entry.url, "url", env, secret=True)
        if not url.startswith(("http://", "https://")):
            raise McpConfigError(f"field 'url' must start with http:// or https:// (got {url!r})")
        headers = {
            key: expand_vars(value, f"headers.{key}", env, secret=True)
            for key, value in entry.headers.items()
        }
        for key, value in headers.items():
            if _SECRET_HEADER.search(key):
                add_secrets(*header_secrets(value))
        secret = entry.oauth_client_secret
        secret = expand_vars(secret, "oauth_client_secret", env, secret=True) if secret else None
        pem = entry.oauth_private_key
        pem = expand_vars(pem, "oauth_private_key", env) if pem else None
        add_secrets(secret, pem)
        return entry.model_copy(
            update={"url": url, "headers": headers, "oauth_client_secret": secret, "oauth_private_key": pem}
        )
    except McpConfigError as exc:
        raise McpConfigError(f"server {name!r}: {exc}") from None


def entry_roots(entry: McpServerConfig) -> list[Root]:
    """The entry's folders as MCP roots: absolute file:// URIs named by the folder."""
    roots = []
    for folder in entry.roots:
        path = Path(os.path.expanduser(folder)).resolve()
        roots.append(Root(uri=path.as_uri(), name=path.name or str(path)))
    return roots


def literal_entry(entry: McpServerConfig) -> McpServerConfig:
    """`entry` as mcp.json must hold it to mean exactly what was typed: each `${` written `$${`, so
    nothing typed in the browser is ever filled from the server's environment."""

    def escape(value: str) -> str:
        return value.replace("${", "$${")

    if isinstance(entry, StdioServerConfig):
        return entry.model_copy(
            update={
                "command": escape(entry.command),
                "args": [escape(arg) for arg in entry.args],
                "env": {key: escape(value) for key, value in entry.env.items()},
                "cwd": escape(entry.cwd) if entry.cwd else None,
            }
        )
    return entry.model_copy(
        update={"url": escape(entry.url), "headers": {k: escape(v) for k, v in entry.headers.items()}}
    )


def connect_server(
    name: str,
    entry: McpServerConfig,
    environ: Mapping[str, str] | None = None,
    *,
    expand: bool = True,
    auth: GrantAuth | None = None,
    **options: Any,
) -> McpClient:
    """Expand `entry` and open a session with it; `options` go to `McpClient`, `auth` (an OAuth
    sign-in's token) to an HTTP server.

    Roots are always declared (the entry's folders, none by default) so they can change later.
    `expand=False` for an entry typed in the browser: it is used exactly as typed, `${…}` included
    (expansion is for mcp.json as the operator wrote it)."""
    resolved = resolve_server(name, entry, environ) if expand else entry
    options.setdefault("roots", entry_roots(resolved))
    if isinstance(resolved, StdioServerConfig):
        return McpClient.stdio(resolved.command, resolved.args, resolved.env, resolved.cwd, **options)
    if resolved.type == "sse":
        return McpClient.sse(resolved.url, resolved.headers, **options)
    if auth is None and expand and resolved.oauth_grant == "client_credentials":
        return _signed_in_as_machine(resolved, options)
    return McpClient.http(resolved.url, resolved.headers, quote_bodies=expand, auth=auth, **options)


def _signed_in_as_machine(entry: HttpServerConfig, options: dict[str, Any]) -> McpClient:
    """Connect with tokens the app fetches itself from the entry's client credentials (only for
    mcp.json as the operator wrote it: a typed entry never signs in with the server's secrets)."""
    client = OAuthClient(
        client_id=entry.oauth_client_id or "",
        client_secret=entry.oauth_client_secret,
        private_key_pem=entry.oauth_private_key,
        signing_algorithm=entry.oauth_signing_algorithm,
    )
    url = entry.url
    auth = GrantAuth(
        None, renew=lambda grant: client_credentials_grant(url, OAuthChallenge(), client, previous=grant)
    )
    session = SignInSession(
        auth,
        lambda refused, previous: client_credentials_grant(url, refused.challenge, client, previous=previous),
    )
    return session.run(lambda: McpClient.http(url, entry.headers, auth=auth, **options))


def _kept_type(entry: McpServerConfig) -> dict[str, str]:
    # `type` is written for HTTP entries (other tools need it); stdio is implied by `command`.
    return {"type": entry.type} if isinstance(entry, HttpServerConfig) else {}


def _describe(where: str, exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        field = ".".join(str(part) for part in error["loc"]) or "entry"
        problems.append(f"field {field!r}: {error['msg'].removeprefix('Value error, ')}")
    return f"{where}: " + "; ".join(problems)
