"""The empty chat's suggested prompts (issue 28): the tool one only for a model that is sent tools."""

from __future__ import annotations

from yiem.chat import chat_suggestions
from yiem.chat._suggestions import ADD_THE_SERVER, NO_TOOLS, TOOL_PROMPT
from yiem.model_setup import calls_tools


def test_the_embedded_model_gets_three_plain_prompts_and_the_reason_none_uses_a_tool() -> None:
    offered = chat_suggestions(calls_tools("local"), {"get_current_time"})
    assert len(offered.prompts) == 3 and TOOL_PROMPT not in offered.prompts
    assert offered.note == NO_TOOLS and "SmolLM2 cannot call tools" in offered.note


def test_a_tool_calling_model_gets_the_time_server_prompt() -> None:
    assert calls_tools("openai")
    ready = chat_suggestions(True, {"get_current_time", "convert_time"})
    assert ready.prompts[-1] == TOOL_PROMPT and ready.note is None
    clashed = chat_suggestions(True, {"time__get_current_time"})  # renamed after a clash: still it
    assert clashed.note is None
    missing = chat_suggestions(True, set())
    assert missing.prompts[-1] == TOOL_PROMPT and missing.note == ADD_THE_SERVER
