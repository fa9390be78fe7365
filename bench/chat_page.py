"""Benchmark of one rerun of the Chat page with a long conversation open.

Run: `.venv/bin/python bench/chat_page.py`. Prints a Markdown table for docs/benchmarks.md.

A rerun is what a click that changes nothing costs: Streamlit runs the whole page script again.
Conversations of 10, 100 and 1,000 stored messages (8 % of the turns call a tool: 80 tool calls
at 1,000 messages) are opened in the real app under Streamlit's AppTest; after one warm-up run,
the median of 5 reruns is taken. The peer, in the same run: a plain Streamlit script drawing the
same messages (a chat bubble with Markdown per message, each tool call's arguments and result as
JSON in an expander, a caption per reply), also under AppTest. The page is measured as opened (the
latest messages; "Show earlier messages" draws more) and with every message shown. Every reply
carries its recorded spans, so each has its (closed) Timeline expander; the page as opened is also
measured on the same conversation stored without spans, as it was before timelines (issue 15),
and with two more alternatives of every turn's last reply (issue 17: Regenerate keeps the old
reply), so each reply drawn has its "‹ 1 / 3 ›" controls while only the chosen path is drawn.
"""

from __future__ import annotations

import itertools
import os
import statistics
import sys
import tempfile
from pathlib import Path
from time import perf_counter
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from yiem.timeline import Span, Timeline  # noqa: E402
from yiem.types import (  # noqa: E402
    AgentMessage,
    AgentToolCall,
    AssistantMessage,
    AssistantMessageToolCall,
    LlmUsage,
    TextContent,
    ToolResultMessage,
    UserMessage,
)

SIZES = (10, 100, 1000)
TOOL_SHARE = 0.08  # tool calls per message: 80 at 1,000 messages
REPEATS = 5
_TEXT = "A reply of a few sentences, with **Markdown** and a list:\n\n- one\n- two\n\nThen a closing line."


def conversation(size: int, timelines: bool = True) -> list[AgentMessage]:
    """`size` messages: turns of a prompt and a reply, `TOOL_SHARE` of them through one tool call."""

    def spans(*found: Span) -> Timeline | None:
        return Timeline("bench", list(found)) if timelines else None

    tools = round(size * TOOL_SHARE)
    turns = tools + (size - 4 * tools + 1) // 2
    messages: list[AgentMessage] = []
    for turn in range(turns):
        messages.append(UserMessage(content=[TextContent(text=f"Question {turn}: what about {turn}?")]))
        if turn * tools // turns != (turn + 1) * tools // turns:
            call = AgentToolCall(id=f"call-{turn}", name="get-sum", arguments={"a": turn, "b": 2})
            messages.append(
                AssistantMessageToolCall(
                    tool_calls=[call],
                    usage=LlmUsage(input_tokens=90, output_tokens=9),
                    timeline=spans(Span("llm", "bench", 0.0, 0.6, first_token=0.3)),
                )
            )
            messages.append(
                ToolResultMessage(
                    tool_call_id=call.id,
                    tool_name=call.name,
                    content=[TextContent(text=str(turn + 2))],
                    timeline=spans(Span("tool", call.name, 0.6, 0.7, call_id=call.id, server="everything")),
                )
            )
        messages.append(
            AssistantMessage(
                content=[TextContent(text=f"{turn}. {_TEXT}")],
                usage=LlmUsage(input_tokens=120, output_tokens=45),
                duration_ms=1400,
                timeline=spans(Span("llm", "bench", 0.7, 2.1, first_token=1.0)),
            )
        )
    return messages[:size]


def _plain_page() -> None:
    # The peer: the same messages drawn with plain Streamlit elements, nothing else.
    import json

    import streamlit as st

    from yiem.types import AssistantMessageToolCall, TextContent, ToolResultMessage

    for message in st.session_state["bench_messages"]:
        role = "user" if message.role == "user" else "assistant"
        with st.chat_message(role):
            for block in message.content:
                if isinstance(block, TextContent):
                    st.markdown(block.text)
            if isinstance(message, AssistantMessageToolCall):
                for call in message.tool_calls:
                    with st.expander(f"Tool `{call.name}`"):
                        st.code(json.dumps(call.arguments, indent=2), language="json")
            elif isinstance(message, ToolResultMessage):
                st.code(json.dumps([b.text for b in message.content if isinstance(b, TextContent)]))
            if role == "assistant" and not isinstance(message, ToolResultMessage):
                st.caption("120 in · 45 out · 0 cached · price unknown · 1.4 s")


def alternatives(messages: list[AgentMessage]) -> tuple[list[AgentMessage], list[int | None]]:
    """The messages as one chain plus two more alternatives of each turn's last reply, and the parents."""
    parents: list[int | None] = [None, *range(len(messages) - 1)]
    tree = list(messages)
    for index, message in enumerate(messages):
        ends_turn = index + 1 == len(messages) or isinstance(messages[index + 1], UserMessage)
        if isinstance(message, AssistantMessage) and ends_turn and index:
            for _ in range(2):
                tree.append(message.model_copy())
                parents.append(index - 1)
    return tree, parents


def _median_rerun(at: Any) -> float:
    at.run()  # warm-up: opens the conversation, connects nothing (no mcp.json)
    if at.exception:
        raise SystemExit(f"the page failed: {at.exception}")
    times = []
    for _ in range(REPEATS):
        started = perf_counter()
        at.run()
        times.append(perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    folder = tempfile.mkdtemp(prefix="yiem-bench-chat-")
    os.environ["YIEM_DATABASE_URL"] = f"sqlite:///{folder}/bench.db"
    os.environ["YIEM_MCP_CONFIG"] = f"{folder}/no-mcp.json"
    os.chdir(ROOT)
    from streamlit.testing.v1 import AppTest

    from yiem.store import ConversationStore, create_store_engine

    store = ConversationStore(create_store_engine(os.environ["YIEM_DATABASE_URL"]))
    rows = []
    for size in SIZES:
        messages = conversation(size)
        opened = store.create(title=f"{size} messages")
        store.replace_messages(opened.id, messages)
        page = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
        page.query_params["c"] = opened.id
        latest = _median_rerun(page)
        # The same conversation as stored before timelines: no spans, so no Timeline expanders.
        bare = store.create(title=f"{size} messages without spans")
        store.replace_messages(bare.id, conversation(size, timelines=False))
        page = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
        page.query_params["c"] = bare.id
        without = _median_rerun(page)
        # The same path, each turn's last reply with two more alternatives beside it.
        branched = store.create(title=f"{size} messages with alternatives")
        tree, parents = alternatives(messages)
        store.replace_messages(branched.id, tree, parents, current=len(messages) - 1)
        page = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
        page.query_params["c"] = branched.id
        with_alternatives = _median_rerun(page)
        if not any(caption.value == "1 / 3" for caption in page.caption):
            raise SystemExit("the conversation with alternatives drew no '1 / 3' controls")
        # The same with every message drawn (what "Show earlier messages" leads to).
        page = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
        page.query_params["c"] = opened.id
        page.session_state["yiem_history_shown"] = (opened.id, size)
        everything = _median_rerun(page)
        plain = AppTest.from_function(_plain_page, default_timeout=600)
        plain.session_state["bench_messages"] = messages
        plain_seconds = _median_rerun(plain)
        calls = sum(len(m.tool_calls) for m in messages if isinstance(m, AssistantMessageToolCall))
        rows.append((size, calls, latest, everything, plain_seconds, without, with_alternatives))
    print(
        "| messages (tool calls) | Chat page as opened, s per rerun | Chat page, all shown | "
        "plain Streamlit, all | ratio all shown / plain | as opened, no spans stored | "
        "as opened, 3 alternatives per reply |"
    )
    print("|---|---|---|---|---|---|---|")
    for size, calls, latest, everything, plain_seconds, without, with_alternatives in rows:
        print(
            f"| {size:,} ({calls}) | {latest:.3f} | {everything:.3f} | {plain_seconds:.3f} | "
            f"{everything / plain_seconds:.2f} × | {without:.3f} | {with_alternatives:.3f} |"
        )
    print()
    for small, large in itertools.pairwise(rows):
        print(
            f"{small[0]:,} -> {large[0]:,} messages ({large[0] / small[0]:.0f} ×): as opened "
            f"{large[2] / small[2]:.1f} ×, all shown {large[3] / small[3]:.1f} ×, "
            f"plain Streamlit {large[4] / small[4]:.1f} ×"
        )
    print(f"\nmedians of {REPEATS} reruns after one warm-up run; load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
