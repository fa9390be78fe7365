"""LLM providers over real HTTP: OpenAI-compatible chat completions and Anthropic messages.

Every client's `stream()` ends with one StreamDone whose `stop_reason` is one of
`stop`, `length`, `tool_calls`, `error` or `aborted`, whatever the wire protocol calls them.
"""

from yiem.providers._http import DEFAULT_TIMEOUT, HttpLlmClient
from yiem.providers._retry import RetryPolicy
from yiem.providers._secrets import configured_secret, secrets_file_value, secrets_files
from yiem.providers._server_replies import ModelListError
from yiem.providers.anthropic import AnthropicClient, to_anthropic_messages, tool_to_anthropic
from yiem.providers.openai_chat import OpenAIChatClient
from yiem.providers.presets import (
    PRESETS,
    MissingApiKeyError,
    ProviderPreset,
    SecretLookup,
    UnknownProviderError,
    api_key_for,
    client_for,
    client_for_model,
    configured_base_url,
    get_preset,
    same_url,
    server_key,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "PRESETS",
    "AnthropicClient",
    "HttpLlmClient",
    "MissingApiKeyError",
    "ModelListError",
    "OpenAIChatClient",
    "ProviderPreset",
    "RetryPolicy",
    "SecretLookup",
    "UnknownProviderError",
    "api_key_for",
    "client_for",
    "client_for_model",
    "configured_base_url",
    "configured_secret",
    "get_preset",
    "same_url",
    "secrets_file_value",
    "secrets_files",
    "server_key",
    "to_anthropic_messages",
    "tool_to_anthropic",
]
