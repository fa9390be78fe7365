"""Multi-round-trip results (2026-07-28, SEP-2322): a server that needs an answer before it can finish.

Instead of asking the client a question on a stream of its own, a 2026-07-28 server answers
`tools/call`, `prompts/get` or `resources/read` with `resultType: "input_required"` and the
questions (`inputRequests`: elicitation, sampling, roots). The client answers them with the same
handlers that answer a 2025-11-25 server's own requests, then sends the request again (a new id)
with `inputResponses` and the server's `requestState` echoed untouched.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from yiem.mcp.errors import METHOD_NOT_FOUND, McpError, McpProtocolError

MAX_ROUNDS = 10
Handler = Callable[[dict[str, Any]], dict[str, Any]]
Retry = Callable[[dict[str, Any] | None, str | None], dict[str, Any]]


def needs_input(result: Mapping[str, Any]) -> bool:
    """Whether a reply asks for input; a reply without `resultType` is complete."""
    return result.get("resultType") == "input_required"


def retry_params(
    params: dict[str, Any] | None, responses: dict[str, Any] | None, state: str | None
) -> dict[str, Any]:
    """The original parameters with this round's answers and state (and none of an earlier round's)."""
    again = {k: v for k, v in (params or {}).items() if k not in ("inputResponses", "requestState")}
    if responses is not None:
        again["inputResponses"] = responses
    if state is not None:
        again["requestState"] = state
    return again


def resolve(
    result: dict[str, Any], handlers: Mapping[str, Handler], retry: Retry, label: str, method: str
) -> dict[str, Any]:
    """Answer the server's questions and retry until it gives the final result."""
    delay = 0.05
    for _ in range(MAX_ROUNDS):
        if not needs_input(result):
            return result
        requests = result.get("inputRequests")
        state = result.get("requestState")
        if (requests is not None and not isinstance(requests, dict)) or (
            state is not None and not isinstance(state, str)
        ):
            raise McpProtocolError(
                f"MCP server {label} asked for input on {method!r} in a malformed reply "
                "(inputRequests must be an object, requestState a string)",
                data=result,
            )
        if not requests and state is None:
            raise McpProtocolError(
                f"MCP server {label} said {method!r} needs input but asked nothing and kept no state",
                data=result,
            )
        responses = answer_all(requests or {}, handlers, label)
        if not requests:
            # Only state: the server is working; ask again soon, backing off a little.
            time.sleep(delay)
            delay = min(delay * 2, 0.25)
        result = retry(responses or None, state)
    if needs_input(result):
        raise McpProtocolError(
            f"MCP server {label} still needed input on {method!r} after {MAX_ROUNDS} rounds; gave up"
        )
    return result


def answer_all(requests: Mapping[str, Any], handlers: Mapping[str, Handler], label: str) -> dict[str, Any]:
    """Each of a server's input requests answered by the client's handler for its method, by key."""
    return {key: _answer(request, handlers, label) for key, request in requests.items()}


def _answer(request: Any, handlers: Mapping[str, Handler], label: str) -> dict[str, Any]:
    method = request.get("method") if isinstance(request, dict) else None
    params = request.get("params") if isinstance(request, dict) else None
    if not isinstance(method, str):
        raise McpProtocolError(f"MCP server {label} sent an input request without a method: {request!r}")
    handler = handlers.get(method)
    if handler is None:
        raise McpError(
            METHOD_NOT_FOUND,
            f"MCP server {label} asked for {method!r}, which this client does not offer",
        )
    return handler(params if isinstance(params, dict) else {})
