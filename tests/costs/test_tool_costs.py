"""Spending per tool call (usage.tool): Chat requests charged to the tools whose results they
carried, a server's sampling charged to that server, summed in SQL (SQLite, then PostgreSQL)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, insert, select

from tests.fixtures.costs import usage_row, utc_ms
from yiem.agent import Agent
from yiem.chat import ChatSession, user_message
from yiem.costs import UsageFilter, tool_costs
from yiem.events import AgentEvent
from yiem.explorer import count_sampling
from yiem.mcp import SamplingRequest
from yiem.scripted_llm import ScriptedLlm
from yiem.store import SAMPLING_SOURCE, ConversationStore, create_store_engine, usage
from yiem.types import (
    AgentMessage,
    AgentTool,
    AssistantMessage,
    LlmModel,
    LlmUsage,
    ModelCost,
    TextContent,
    UserMessage,
)

PRICED = LlmModel(
    id="scripted-1", provider="scripted", cost=ModelCost(input=3.0, output=15.0), price_known=True
)
DAY = UsageFilter(start_ms=utc_ms("2026-10-25T00:00:00"), end_ms=utc_ms("2026-10-26T00:00:00"))


def test_rows_are_summed_per_tool_and_per_sampling_server(known_usage: Engine) -> None:
    noon, chat = utc_ms("2026-10-25T12:00:00"), {"source": None}  # executemany: the same keys in each row
    with known_usage.begin() as conn:
        conn.execute(
            insert(usage),
            [
                usage_row(created_ms=noon, input_tokens=100, cost_input=0.003, tool="time__now", **chat),
                usage_row(created_ms=noon + 1, input_tokens=50, cost_input=0.001, tool="time__now", **chat),
                usage_row(created_ms=noon + 2, input_tokens=70, cost_input=0.002, tool="a, b", **chat),
                usage_row(created_ms=noon + 3, cost_output=0.005, tool="everything", source=SAMPLING_SOURCE),
                # The next day: outside the filter.
                usage_row(created_ms=utc_ms("2026-10-26T12:00:00"), cost_input=1.0, tool="time__now", **chat),
            ],
        )
    rows = tool_costs(known_usage, DAY)
    assert [(r.key, r.label, r.totals.requests) for r in rows] == [
        ("sampling:everything", "Sampling for everything", 1),
        ("time__now", "time__now", 2),
        ("a, b", "a, b", 1),
    ]
    assert rows[1].totals.cost_total == pytest.approx(0.004)
    assert rows[1].totals.input_tokens == 150
    # The known rows (charged to no tool) are not in the breakdown; a provider filter applies.
    assert tool_costs(known_usage, UsageFilter(providers=("anthropic",))) == []


def test_a_chat_request_is_charged_to_the_tools_whose_results_it_carried(tmp_path: Path) -> None:
    store = ConversationStore(create_store_engine(f"sqlite:///{tmp_path / 'chat.db'}"))
    llm = ScriptedLlm(
        [
            {
                "toolCalls": [
                    {"id": "c1", "name": "shout", "arguments": {"text": "hi"}},
                    {"id": "c2", "name": "count", "arguments": {"text": "hi"}},
                ]
            },
            {"toolCalls": [{"id": "c3", "name": "shout", "arguments": {"text": "again"}}]},
            {"content": "HI it is.", "usage": {"inputTokens": 100, "outputTokens": 10}},
        ]
    )
    tools = [
        AgentTool(name="shout", execute=lambda _id, args, _signal: args["text"].upper()),
        AgentTool(name="count", execute=lambda _id, args, _signal: str(len(args["text"]))),
    ]
    agent = Agent(llm, PRICED, tools=tools)
    chat = ChatSession(store)

    def run(history: list[AgentMessage], prompt: UserMessage) -> Iterator[AgentEvent]:
        agent.state.messages = list(history)
        return agent.prompt("shout and count hi")

    for _event in chat.run(run, user_message("shout and count hi"), PRICED):
        pass
    with store.engine.connect() as conn:
        charged = list(conn.execute(select(usage.c.tool).order_by(usage.c.id)).scalars())
    # The first request followed the prompt; the second both tools' results; the third shout's.
    assert charged == [None, "count, shout", "shout"]
    rows = tool_costs(store.engine, UsageFilter())
    assert {r.key: r.totals.requests for r in rows} == {"count, shout": 1, "shout": 1}


def test_a_sampling_reply_is_counted_under_its_server(any_store_url: str) -> None:
    store = ConversationStore(create_store_engine(any_store_url))
    request = SamplingRequest(
        messages=[
            {"role": "user", "content": {"type": "text", "text": "Say hi"}},
            {"role": "assistant", "content": {"type": "text", "text": "Earlier turn"}},
        ]
    )
    reply = AssistantMessage(
        content=[TextContent(text="hi")],
        usage=LlmUsage(input_tokens=20, output_tokens=2),
        provider=PRICED.provider,
        model=PRICED.id,
    )
    first = count_sampling(store, "everything", request, reply, PRICED)
    again = count_sampling(store, "everything", request, reply, PRICED, first)
    assert again == first  # one conversation per server
    with store.engine.connect() as conn:
        rows = conn.execute(select(usage.c.source, usage.c.tool, usage.c.conversation_id)).all()
    # Only the model's replies are requests: the server's own assistant turn is not counted.
    assert [tuple(r) for r in rows] == [(SAMPLING_SOURCE, "everything", first)] * 2
    (row,) = tool_costs(store.engine, UsageFilter())
    assert row.label == "Sampling for everything" and row.totals.requests == 2
    assert row.totals.cost_total == pytest.approx(2 * (20 * 3 + 2 * 15) / 1e6)
    assert store.get(first).title == "MCP sampling · everything"
