"""`OpenAIChatClient`: any server that speaks OpenAI's `/v1/chat/completions`, streamed or not."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
from httpx_sse import ServerSentEvent

from yiem.extract import openai_usage
from yiem.limits import ResponseLimits
from yiem.llm import GenerationOptions, StreamEvent
from yiem.openai_format import to_openai_messages, tools_to_openai
from yiem.providers._http import (
    DEFAULT_TIMEOUT,
    HttpLlmClient,
    HttpRequest,
    ProviderStreamError,
)
from yiem.providers._json_fields import count, name, obj, text
from yiem.providers._message_builder import MessageBuilder
from yiem.providers._retry import RetryPolicy
from yiem.providers._server_replies import provider_error_text
from yiem.types import AgentContext, LlmModel

# finish_reason → stop_reason; `content_filter` is an error with its own message.
_STOP_REASONS = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
}


class OpenAIChatClient(HttpLlmClient):
    """An OpenAI-compatible chat-completions client (OpenAI, OpenRouter, Groq, vLLM, Ollama, llama.cpp…).

    `base_url` includes the version prefix (`https://api.openai.com/v1`); when None, each
    model's own `base_url` is used.
    """

    provider_name = "openai-compatible"

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
        max_tokens_field: str = "max_tokens",
        stream_usage: bool = True,
        http_client: httpx.Client | None = None,
        quote_bodies: bool = True,
        limits: ResponseLimits | None = None,
    ) -> None:
        super().__init__(
            base_url,
            api_key,
            headers,
            timeout,
            retry,
            streaming=streaming,
            provider=provider,
            extra_body=extra_body,
            http_client=http_client,
            quote_bodies=quote_bodies,
            limits=limits,
        )
        self.max_tokens_field = max_tokens_field
        self.stream_usage = stream_usage

    def models_url(self, base_url: str) -> str:
        return f"{base_url}/models"

    def auth_headers(self) -> dict[str, str]:
        headers = dict(self.headers)
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def build_request(
        self, model: LlmModel, context: AgentContext, options: GenerationOptions, streaming: bool
    ) -> HttpRequest:
        headers = self.request_headers(streaming)
        body: dict[str, Any] = {
            "model": model.id,
            "messages": to_openai_messages(context),
            "stream": streaming,
        }
        if streaming and self.stream_usage:
            body["stream_options"] = {"include_usage": True}
        if context.tools:
            body["tools"] = tools_to_openai(context.tools.values())
        if options.temperature is not None:
            body["temperature"] = options.temperature
        if options.max_tokens is not None:
            body[self.max_tokens_field] = options.max_tokens
        if options.response_schema is not None:
            schema = {"name": "answer", "schema": options.response_schema}
            body["response_format"] = {"type": "json_schema", "json_schema": schema}
        return HttpRequest(f"{self._base(model)}/chat/completions", headers, body)

    def read_events(
        self, events: Iterator[ServerSentEvent], builder: MessageBuilder
    ) -> Iterator[StreamEvent]:
        for event in events:
            data = event.data
            if data.startswith("[DONE]"):
                builder.complete = True
                return
            if not data:
                continue
            try:
                chunk = json.loads(data)
            except ValueError:
                raise ProviderStreamError(f"malformed JSON in the stream: {data[:200]}") from None
            if not isinstance(chunk, dict):
                raise ProviderStreamError(f"unexpected data in the stream: {data[:200]}")
            yield from self._read_chunk(chunk, builder, "delta")
        # Some servers end without `[DONE]`; a finish_reason already says the reply is whole.
        builder.complete = builder.complete or builder.stop_reason is not None

    def read_body(self, data: Any, builder: MessageBuilder) -> Iterator[StreamEvent]:
        if not isinstance(data, dict):
            raise ProviderStreamError(f"unexpected response: {json.dumps(data)[:200]}")
        if not data.get("choices") and not data.get("error"):
            raise ProviderStreamError(f"the response has no choices: {json.dumps(data)[:200]}")
        yield from self._read_chunk(data, builder, "message")
        builder.complete = True

    def _read_chunk(self, chunk: dict[str, Any], builder: MessageBuilder, key: str) -> Iterator[StreamEvent]:
        if chunk.get("error"):
            raise ProviderStreamError(provider_error_text(json.dumps(chunk)))
        builder.model_id = name(chunk.get("model")) or builder.model_id
        # Groq's older deployments put usage under `x_groq`.
        usage = obj(chunk.get("usage")) or obj(obj(chunk.get("x_groq")).get("usage"))
        if usage:
            builder.usage = openai_usage(usage)
        choices = chunk.get("choices")
        choice = obj(choices[0]) if isinstance(choices, list) and choices else {}
        delta = obj(choice.get(key))
        # `reasoning_content` (DeepSeek, vLLM, llama.cpp) or `reasoning` (OpenRouter, Ollama).
        if thought := builder.reasoning(text(delta.get("reasoning_content")) or text(delta.get("reasoning"))):
            yield thought
        if said := builder.text(text(delta.get("content"))):
            yield said
        tool_calls = delta.get("tool_calls")
        if isinstance(tool_calls, list):
            for position, call in enumerate(tool_calls):
                # A whole (non-streamed) message lists each call once, so its position is its index.
                yield self._tool_call_fragment(obj(call), builder, position if key == "message" else None)
        finish = name(choice.get("finish_reason"))
        if finish == "content_filter":
            raise ProviderStreamError("the provider's content filter stopped the reply")
        if finish:
            builder.stop_reason = _STOP_REASONS.get(finish, finish)

    @staticmethod
    def _tool_call_fragment(
        call: dict[str, Any], builder: MessageBuilder, position: int | None
    ) -> StreamEvent:
        function = obj(call.get("function"))
        arguments = function.get("arguments")
        if isinstance(arguments, dict):
            # A few servers send parsed arguments in non-streamed replies.
            arguments = json.dumps(arguments)
        index = count(call.get("index"))
        index = position if index is None else index
        call_id = name(call.get("id"))
        return builder.tool_call(
            builder.index_for_id(call_id) if index is None else index,
            call_id,
            name(function.get("name")),
            text(arguments),
        )
