"""LLM providers over real HTTP: OpenAI-compatible chat completions and Anthropic messages.

Every client's `stream()` ends with one StreamDone whose `stop_reason` is one of
`stop`, `length`, `tool_calls`, `error` or `aborted`, whatever the wire protocol calls them.
"""

from yiem.providers.http_client import DEFAULT_TIMEOUT, HttpLlmClient
from yiem.providers.openai_chat import OpenAIChatClient
from yiem.providers.retry import RetryPolicy

__all__ = ["DEFAULT_TIMEOUT", "HttpLlmClient", "OpenAIChatClient", "RetryPolicy"]
