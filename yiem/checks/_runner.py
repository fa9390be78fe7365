"""Run a collection: connect each server once, call each saved tool, check its assertions."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from yiem.checks._assertions import AssertionKind, check_assertion, snapshot_diff, unreturned_field
from yiem.checks._collection import CheckSetupError, Collection, SavedCall
from yiem.mcp import McpClient, McpError
from yiem.mcp.config import McpServerConfig, connect_server, parse_server_entry
from yiem.mcp.errors import McpConfigError
from yiem.redaction import redact
from yiem.types import utc_now

ProgressCallback = Callable[[int, int, SavedCall], None]


class AssertionOutcome(BaseModel):
    """One assertion of one call: what it said and, when it failed, why."""

    assertion: str
    passed: bool
    failure: str | None = None


class CallOutcome(BaseModel):
    """One saved call in a run: pass or fail, the failing assertions in words, a snapshot's diff."""

    call_id: str
    name: str
    server: str
    tool: str
    passed: bool
    duration_ms: float
    error: str | None = None  # the call itself failed (protocol, timeout): no result to check
    assertions: list[AssertionOutcome] = Field(default_factory=list)
    snapshot_diff: str = ""
    result: dict[str, Any] | None = None

    @property
    def failures(self) -> list[str]:
        """What went wrong, one sentence each."""
        found = [self.error] if self.error else []
        return found + [f"{a.assertion}: {a.failure}" for a in self.assertions if not a.passed]


class CheckRun(BaseModel):
    """A run of a collection, kept with its time so runs can be compared."""

    id: str = Field(default_factory=lambda: uuid.uuid4().hex[:12])
    collection: str
    started_at: datetime = Field(default_factory=utc_now)
    duration_ms: float = 0.0
    servers: dict[str, str] = Field(default_factory=dict)  # collection's name -> the entry it ran against
    outcomes: list[CallOutcome] = Field(default_factory=list)

    @property
    def passed(self) -> int:
        return sum(1 for o in self.outcomes if o.passed)

    @property
    def failed(self) -> int:
        return len(self.outcomes) - self.passed

    @property
    def pass_rate(self) -> float:
        return self.passed / len(self.outcomes) if self.outcomes else 1.0


def resolve_entries(
    collection: Collection,
    entries: Mapping[str, McpServerConfig] | None = None,
    overrides: Mapping[str, str] | None = None,
) -> dict[str, tuple[str, McpServerConfig]]:
    """For each server the collection calls, the entry to run against: an override's entry, else the
    entry of that name (from `entries`, such as mcp.json, then the collection's own)."""
    known: dict[str, McpServerConfig] = {}
    for name, raw in collection.servers.items():
        try:
            known[name] = parse_server_entry(name, raw, f"collection {collection.name!r}")
        except McpConfigError as exc:
            raise CheckSetupError(str(exc)) from None
    known.update(entries or {})
    overrides = dict(overrides or {})
    needed = {call.server for call in collection.calls}
    unused = sorted(set(overrides) - needed)
    if unused:
        raise CheckSetupError(
            f"--server {unused[0]}=…: the collection calls no server named {unused[0]!r} "
            f"(it calls {', '.join(sorted(needed)) or 'none'})."
        )
    chosen: dict[str, tuple[str, McpServerConfig]] = {}
    for server in sorted(needed):
        entry_name = overrides.get(server, server)
        if entry_name not in known:
            offered = ", ".join(sorted(known)) or "none"
            raise CheckSetupError(
                f"The collection calls server {server!r}, but there is no server entry {entry_name!r} "
                f"(known entries: {offered}). Add it to mcp.json or pass --server {server}=ENTRY."
            )
        chosen[server] = (entry_name, known[entry_name])
    return chosen


def run_collection(
    collection: Collection,
    entries: Mapping[str, McpServerConfig] | None = None,
    overrides: Mapping[str, str] | None = None,
    on_progress: ProgressCallback | None = None,
    connected: Mapping[str, McpClient] | None = None,
) -> CheckRun:
    """Run every saved call; a server that cannot be reached or an assertion the tool cannot meet
    raises `CheckSetupError` before any call is counted.

    `connected` (the Tools page's open sessions, by entry name) are used as they are and left open;
    other entries are connected for the run and closed after it."""
    chosen = _chosen(collection, entries, overrides, connected or {})
    run = CheckRun(collection=collection.name, servers={k: v[0] for k, v in chosen.items()})
    started = time.perf_counter()
    with ExitStack() as stack:
        clients: dict[str, McpClient] = {}
        schemas: dict[str, dict[str, Mapping[str, Any] | None]] = {}
        for server, (entry_name, entry) in chosen.items():
            try:
                client = (connected or {}).get(entry_name)
                if client is None and entry is not None:
                    client = connect_server(entry_name, entry)
                    stack.callback(client.close)
                assert client is not None  # _chosen gives an entry for every server not connected
                tools = client.list_tools()
            except (McpError, McpConfigError, OSError) as exc:
                raise CheckSetupError(
                    f"Could not connect to server {entry_name!r}: {redact(str(exc))}"
                ) from None
            clients[server] = client
            schemas[server] = {tool.name: tool.output_schema for tool in tools}
        _check_calls_exist(collection, schemas)
        total = len(collection.calls)
        for index, call in enumerate(collection.calls):
            run.outcomes.append(_run_call(clients[call.server], call, schemas[call.server].get(call.tool)))
            if on_progress is not None:
                on_progress(index + 1, total, call)
    run.duration_ms = (time.perf_counter() - started) * 1000
    return run


def _chosen(
    collection: Collection,
    entries: Mapping[str, McpServerConfig] | None,
    overrides: Mapping[str, str] | None,
    connected: Mapping[str, McpClient],
) -> dict[str, tuple[str, McpServerConfig | None]]:
    if not connected:
        return dict(resolve_entries(collection, entries, overrides))
    # On the page: a connected server by its name, else an entry as the command line finds it.
    placeholders = {name: None for name in connected}
    known = {**dict(entries or {}), **placeholders}
    overrides = dict(overrides or {})
    chosen: dict[str, tuple[str, McpServerConfig | None]] = {}
    for server in sorted({call.server for call in collection.calls}):
        name = overrides.get(server, server)
        if name not in known:
            raise CheckSetupError(
                f"The collection calls server {server!r}, which is not connected; connect it or run it "
                f"against another server ({', '.join(sorted(connected))})."
            )
        chosen[server] = (name, known[name])
    return chosen


def _check_calls_exist(collection: Collection, schemas: Mapping[str, Mapping[str, Any]]) -> None:
    for call in collection.calls:
        tools = schemas[call.server]
        if call.tool not in tools:
            raise CheckSetupError(
                f"{call.label}: server {call.server!r} has no tool {call.tool!r} "
                f"(it has {', '.join(sorted(tools)) or 'none'})."
            )
        for assertion in call.assertions:
            reason = unreturned_field(assertion, tools[call.tool])
            if reason:
                raise CheckSetupError(f"{call.label}: {reason}.")


def _run_call(client: McpClient, call: SavedCall, output_schema: Mapping[str, Any] | None) -> CallOutcome:
    started = time.perf_counter()
    try:
        result = client.call_tool_raw(call.tool, dict(call.arguments), timeout=call.timeout_s)
    except McpError as exc:
        return CallOutcome(
            call_id=call.id,
            name=call.label,
            server=call.server,
            tool=call.tool,
            passed=False,
            duration_ms=(time.perf_counter() - started) * 1000,
            error=f"The call failed: {redact(str(exc))}",
        )
    duration_ms = (time.perf_counter() - started) * 1000
    outcomes: list[AssertionOutcome] = []
    diff = ""
    for assertion in call.assertions:
        failure = check_assertion(assertion, result, duration_ms, output_schema)
        outcomes.append(
            AssertionOutcome(assertion=assertion.words(), passed=failure is None, failure=failure)
        )
        if assertion.kind is AssertionKind.SNAPSHOT and assertion.snapshot is not None:
            diff = snapshot_diff(assertion.snapshot, result)
    return CallOutcome(
        call_id=call.id,
        name=call.label,
        server=call.server,
        tool=call.tool,
        passed=all(o.passed for o in outcomes),
        duration_ms=duration_ms,
        assertions=outcomes,
        snapshot_diff=diff,
        result=result,
    )
