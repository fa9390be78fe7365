"""What every HTTP provider shares: retries, timeouts, abort, and turning failures into messages."""

from __future__ import annotations

import itertools
import json
import logging
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Generator, Iterator
from types import TracebackType
from typing import Any, Self

import httpx
from httpx_sse import ServerSentEvent, SSEError

from yiem.errors import YiemError
from yiem.limits import ResponseLimits, ResponseTooLargeError, read_capped
from yiem.llm import GenerationOptions, StreamDone, StreamEvent, StreamStart
from yiem.providers._abortable import AbortableClient
from yiem.providers._message_builder import MessageBuilder
from yiem.providers._retry import RetryPolicy
from yiem.providers._server_replies import ModelListError, model_ids, provider_error_text
from yiem.providers._sse import capped_events, capped_reply
from yiem.redaction import header_secrets, redact
from yiem.types import AbortSignal, AgentContext, AnyAssistantMessage, Api, LlmModel

logger = logging.getLogger(__name__)
DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=120.0, write=30.0, pool=10.0)
_ERROR_BODY_LIMIT = 64_000


class ProviderStreamError(YiemError):
    """Internal: the provider reported a failure inside a successful response."""


class HttpRequest:
    """One provider request: where to send it, with which headers and body."""

    __slots__ = ("body", "headers", "url")

    def __init__(self, url: str, headers: dict[str, str], body: dict[str, Any]) -> None:
        self.url = url
        self.headers = headers
        self.body = body


SCHEMA_REFUSED = (
    ". The request asked for JSON matching a response schema, which this provider or model may not "
    "accept (or it takes no structured output at all): simplify the schema, or remove it (in Chat's "
    "settings, or the variant's)."
)
"""Added to a refused request's error when it carried a response schema: the likeliest cause, in words."""


def _asks_for_schema(body: Any) -> bool:
    return isinstance(body, dict) and "response_format" in body


class HttpLlmClient(ABC):
    """Base of the HTTP providers. `stream()` never raises; every failure becomes the final message."""

    provider_name = "provider"
    # Words for a reply asked to match a JSON Schema by a protocol that cannot ask for it; "" if it can.
    no_response_schema = ""
    api: Api = "openai-completions"
    # Used when neither the client nor the model names a base URL.
    default_base_url = ""

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        headers: dict[str, str] | None = None,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        *,
        streaming: bool = True,
        provider: str | None = None,
        extra_body: dict[str, Any] | None = None,
        http_client: httpx.Client | None = None,
        quote_bodies: bool = True,
        limits: ResponseLimits | None = None,
    ) -> None:
        self.extra_body = dict(extra_body or {})
        # How much one answer may hold; past it the read stops in words, the partial reply kept.
        self.limits = limits or ResponseLimits.from_environment()
        # False for a base URL typed in a browser: what such a URL answers is never quoted in an error,
        # so the app cannot be used to read pages of servers that only it can reach.
        self.quote_bodies = quote_bodies
        self.base_url = base_url.rstrip("/") if base_url else None
        self.api_key = api_key
        self.headers = dict(headers or {})
        self.retry = retry or RetryPolicy()
        self.streaming = streaming
        if provider:
            self.provider_name = provider
        self._owns_client = http_client is None
        self._client = AbortableClient(http_client or httpx.Client(timeout=timeout))

    # --- what each wire protocol supplies ----------------------------------------------------

    @abstractmethod
    def build_request(
        self, model: LlmModel, context: AgentContext, options: GenerationOptions, streaming: bool
    ) -> HttpRequest:
        """The HTTP request for one completion."""

    @abstractmethod
    def read_events(
        self, events: Iterator[ServerSentEvent], builder: MessageBuilder
    ) -> Iterator[StreamEvent]:
        """Feed server-sent events into `builder`, yielding deltas; True in `builder.complete` at the end."""

    @abstractmethod
    def read_body(self, data: Any, builder: MessageBuilder) -> Iterator[StreamEvent]:
        """Feed a whole (non-streamed) JSON response into `builder`, yielding deltas."""

    @abstractmethod
    def models_url(self, base_url: str) -> str:
        """Where the server lists its models."""

    @abstractmethod
    def auth_headers(self) -> dict[str, str]:
        """The headers that carry the key and the configured extra headers."""

    def request_headers(self, streaming: bool) -> dict[str, str]:
        """A model request's headers: what it answers in (an event stream or JSON) and auth_headers."""
        return {"Accept": "text/event-stream" if streaming else "application/json", **self.auth_headers()}

    # --- public API ----------------------------------------------------------------------------

    def stream(
        self,
        model: LlmModel,
        context: AgentContext,
        signal: AbortSignal | None = None,
        *,
        options: GenerationOptions | None = None,
    ) -> Iterator[StreamEvent]:
        """Stream one completion: a start, deltas, and exactly one StreamDone. Never raises."""
        builder = MessageBuilder(model, model.provider or self.provider_name, self.api)
        done = False
        try:
            for event in self._stream(
                model, context, signal or AbortSignal(), options or GenerationOptions(), builder
            ):
                if event.type == "done":
                    done = True
                    event = self._redacted(event)
                yield event
        except GeneratorExit:
            raise
        except Exception as error:
            if done:
                # Failing while cleaning up after the final message: that message stands.
                logger.exception("error after the final message from %s", self._where(model))
                return
            # A bug or a surprise must still end the stream with a message a user can read.
            failure = f"Unexpected error while talking to {self._where(model)}: {error!r}"
            yield self._redacted(builder.finish(error=failure))

    def complete(
        self,
        model: LlmModel,
        context: AgentContext,
        signal: AbortSignal | None = None,
        *,
        options: GenerationOptions | None = None,
    ) -> AnyAssistantMessage:
        """Run `stream()` to the end and return the final message."""
        final: AnyAssistantMessage | None = None
        for event in self.stream(model, context, signal, options=options):
            if event.type == "done":
                final = event.message
        assert final is not None  # stream() always ends with StreamDone
        return final

    def list_models(self, base_url: str | None = None) -> list[str]:
        """The model ids the server offers; raises ModelListError with a message a user can act on."""
        try:
            return self._list_models(base_url)
        except ModelListError as error:
            raise ModelListError(self.redact(str(error))) from None

    def redact(self, text: str) -> str:
        """`text` without any secret the server knows, nor this client's own key and header values
        (a key typed in a browser session is masked too, e.g. when a provider echoes it back)."""
        text = redact(text)
        own = [self.api_key or "", *(part for v in self.headers.values() for part in header_secrets(v))]
        for secret in sorted((value for value in own if len(value) >= 8), key=len, reverse=True):
            text = text.replace(secret, "***")
        return text

    def _redacted(self, event: StreamDone) -> StreamDone:
        message = event.message
        if not message.error_message:
            return event
        masked = self.redact(message.error_message)
        if masked == message.error_message:
            return event
        return StreamDone(message=message.model_copy(update={"error_message": masked}))

    def _list_models(self, base_url: str | None) -> list[str]:
        base = (base_url or self.base_url or self.default_base_url).rstrip("/")
        if not base:
            raise ModelListError("No base URL is set, so there is no server to ask for its models.")
        url = self.models_url(base)
        try:
            with self._client.http.stream("GET", url, headers=self.auth_headers()) as response:
                status = response.status_code
                body = read_capped(response.iter_bytes(), self.limits, url)
        except httpx.HTTPError as error:
            raise ModelListError(f"Could not reach {url}: {error or type(error).__name__}") from None
        except ResponseTooLargeError as error:
            raise ModelListError(str(error)) from None
        if status >= 400:
            raise ModelListError(f"HTTP {status} from {url}{self._quoted(body[:_ERROR_BODY_LIMIT])}")
        try:
            return model_ids(json.loads(body))
        except ValueError:
            raise ModelListError(
                f"{url} did not answer with JSON{self._quoted(body[:_ERROR_BODY_LIMIT])}"
            ) from None
        except ModelListError as error:
            raise ModelListError(f"{url} sent a model list yiem cannot read: {error}") from None

    def close(self) -> None:
        """Close the HTTP connections this client opened."""
        if self._owns_client:
            self._client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # --- internals -----------------------------------------------------------------------------

    def _base(self, model: LlmModel) -> str:
        return (self.base_url or model.base_url or self.default_base_url).rstrip("/")

    def _where(self, model: LlmModel) -> str:
        return f"{model.provider or self.provider_name} ({self._base(model) or 'no base URL'})"

    def _stream(
        self,
        model: LlmModel,
        context: AgentContext,
        signal: AbortSignal,
        options: GenerationOptions,
        builder: MessageBuilder,
    ) -> Iterator[StreamEvent]:
        if signal.aborted:
            yield self._aborted(builder, signal)
            return
        if not self._base(model):
            yield builder.finish(error=f"No base URL is set for model {model.id}; set one in the settings.")
            return
        if options.response_schema is not None and self.no_response_schema:
            yield builder.finish(error=self.no_response_schema)
            return
        request = self.build_request(model, context, options, self.streaming)
        # Fields this client does not model (tool_choice, seed, top_p...) go in as given.
        request.body.update(self.extra_body)
        current: list[httpx.Response | None] = [None]
        thread_id = threading.get_ident()
        self._client.reset(thread_id)
        unsubscribe = signal.on_abort(lambda _reason: self._client.interrupt(thread_id, current[0]))
        try:
            response = yield from self._send(model, request, signal, builder, current)
            if response is None:
                return
            yield StreamStart.model_construct(partial=builder.partial, type="start")
            yield from self._read_response(model, response, signal, builder)
        finally:
            unsubscribe()
            if current[0] is not None:
                current[0].close()
            self._client.reset(thread_id)

    def _send(
        self,
        model: LlmModel,
        request: HttpRequest,
        signal: AbortSignal,
        builder: MessageBuilder,
        current: list[httpx.Response | None],
    ) -> Generator[StreamEvent, None, httpx.Response | None]:
        """Send with retries; returns the open response, or yields the final message and returns None."""
        http = self._client.http
        attempt = 0
        while True:
            attempt += 1
            failure: str
            wait: float | None
            try:
                response = http.send(
                    http.build_request("POST", request.url, json=request.body, headers=request.headers),
                    stream=True,
                )
            except httpx.TimeoutException as error:
                if signal.aborted:
                    yield self._aborted(builder, signal)
                    return None
                phase = "connect to" if isinstance(error, httpx.ConnectTimeout) else "get an answer from"
                failure = f"Timed out trying to {phase} {self._where(model)}."
                wait = self.retry.delay(attempt) if isinstance(error, httpx.ConnectTimeout) else None
            except httpx.TransportError as error:
                if signal.aborted:
                    yield self._aborted(builder, signal)
                    return None
                failure = f"Could not reach {self._where(model)}: {error or type(error).__name__}."
                wait = self.retry.delay(attempt)
            else:
                current[0] = response
                if signal.aborted:
                    yield self._aborted(builder, signal)
                    return None
                if response.status_code < 400:
                    return response
                body = self._read_error_body(response)
                current[0] = None
                failure = f"HTTP {response.status_code} from {self._where(model)}{self._quoted(body)}"
                if response.status_code in (400, 422) and _asks_for_schema(request.body):
                    failure += SCHEMA_REFUSED
                retryable = self.retry.should_retry_status(response.status_code)
                wait = self.retry.delay(attempt, response.headers) if retryable else None
            if wait is None:
                if attempt > 1:
                    failure += f" (gave up after {attempt} tries)"
                yield builder.finish(error=failure)
                return None
            waiting = time.perf_counter()
            aborted = signal.wait(wait)
            builder.waited(waiting, f"retry after: {failure}")
            if aborted:
                yield self._aborted(builder, signal)
                return None

    def _read_error_body(self, response: httpx.Response) -> bytes:
        try:
            chunks: list[bytes] = []
            size = 0
            for chunk in response.iter_bytes():
                chunks.append(chunk)
                size += len(chunk)
                if size > _ERROR_BODY_LIMIT:
                    break
            return b"".join(chunks)
        except httpx.HTTPError:
            return b""
        finally:
            response.close()

    def _read_response(
        self, model: LlmModel, response: httpx.Response, signal: AbortSignal, builder: MessageBuilder
    ) -> Iterator[StreamEvent]:
        content_type = response.headers.get("content-type", "").partition(";")[0].strip().lower()
        try:
            where = self._where(model)
            if content_type == "text/event-stream":
                events = capped_events(response.iter_bytes(), self.limits, where)
                yield from capped_reply(self.read_events(events, builder), self.limits, where)
                complete = builder.complete
                if complete:
                    # Read the few bytes after the end marker so the connection can be reused;
                    # a server that keeps talking past it just loses its connection.
                    for _extra in itertools.islice(events, 16):
                        pass
            elif content_type.endswith("json"):
                # Some servers ignore `stream: true` and answer with one JSON body; that is fine.
                raw = read_capped(response.iter_bytes(), self.limits, where)
                try:
                    data = json.loads(raw)
                except ValueError:
                    problem = f"sent a response that is not valid JSON{self._quoted(raw)}"
                    yield builder.finish(error=f"{self._where(model)} {problem}")
                    return
                yield from self.read_body(data, builder)
                complete = True
            else:
                snippet = self._quoted(self._read_error_body(response))
                yield builder.finish(
                    error=f"{self._where(model)} answered with {content_type or 'no content type'} "
                    f"instead of an event stream or JSON{snippet}"
                )
                return
        except ResponseTooLargeError as error:
            yield builder.finish(error=f"{error}{self._kept(builder)}")
            return
        except ProviderStreamError as error:
            words = f": {error}" if self.quote_bodies else self._quoted(b"")
            yield builder.finish(error=f"{self._where(model)} reported an error{words}{self._kept(builder)}")
            return
        except (httpx.TransportError, SSEError) as error:
            if signal.aborted:
                yield self._aborted(builder, signal)
                return
            if isinstance(error, httpx.ReadTimeout):
                reason = f"no data arrived for {self._read_timeout()} s"
            else:
                reason = str(error) or type(error).__name__
            yield builder.finish(
                error=f"The connection to {self._where(model)} broke before the reply was complete "
                f"({reason}).{self._kept(builder)}"
            )
            return
        if signal.aborted:
            yield self._aborted(builder, signal)
        elif not complete:
            yield builder.finish(
                error=f"The stream from {self._where(model)} ended before the reply was complete."
                f"{self._kept(builder)}"
            )
        else:
            yield builder.finish()

    def _quoted(self, body: bytes) -> str:
        """ ": <the server's own words>" for an error, or why they are left out."""
        if self.quote_bodies:
            return f": {provider_error_text(body)}"
        return " (its answer is not shown: this base URL was typed in the app, not set up on the server)"

    def _read_timeout(self) -> str:
        read = self._client.http.timeout.read
        return f"{read:g}" if read is not None else "?"

    @staticmethod
    def _kept(builder: MessageBuilder) -> str:
        return " The partial reply is kept." if builder.has_content else ""

    @staticmethod
    def _aborted(builder: MessageBuilder, signal: AbortSignal) -> StreamEvent:
        return builder.aborted(signal.reason)
