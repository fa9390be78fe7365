"""The fan-out against a scripted loopback OpenAI-compatible server that answers each column after 1 s."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.fixtures.ports import free_port
from tests.scripted_http import Reply, ScriptedServer, openai_text_stream
from yiem.compare import ColumnFigures, CompareError, Comparison, cheapest_and_fastest
from yiem.model_setup import ModelSetup

USAGE = {"prompt_tokens": 12, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 4}}


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    scripted = ScriptedServer()
    yield scripted
    scripted.close()


def _slow_answer(word: str) -> Reply:
    # Headers after 1 s, then the chunks 0.1 s apart: the first token comes well before the end.
    return Reply(
        headers={"Content-Type": "text/event-stream"},
        chunks=openai_text_stream(word, " and", " more", usage=USAGE),
        delay=0.1,
        delay_headers=1.0,
    )


def _dead_url() -> str:
    return f"http://127.0.0.1:{free_port()}/v1"


def _column(server: ScriptedServer, prompt: str, **extra: object) -> ModelSetup:
    return ModelSetup.model_validate(
        {
            "provider": "llamacpp",
            "base_url": f"{server.url}/v1",
            "model_id": "scripted",
            "system_prompt": prompt,
            **extra,
        }
    )


def test_three_columns_stream_at_once(server: ScriptedServer) -> None:
    server.script(_slow_answer("one"), _slow_answer("two"), _slow_answer("three"))
    comparison = Comparison([_column(server, f"You are column {i}.") for i in range(3)])
    comparison.start("Hello")
    assert comparison.wait(timeout=30)
    columns = comparison.columns
    assert [c.status for c in columns] == ["done", "done", "done"], [c.error for c in columns]
    assert sorted(c.text.split(" ")[0] for c in columns) == ["one", "three", "two"]
    # They overlap: every column's first token came before any column finished (in turn, the
    # second column's first token would come a full second after the first column ended).
    first_tokens = [c.figures.first_token_at for c in columns]
    finishes = [c.figures.finished_at for c in columns]
    assert all(t is not None for t in first_tokens) and all(t is not None for t in finishes)
    assert max(t for t in first_tokens if t is not None) < min(t for t in finishes if t is not None)
    # Each column sent its own system prompt.
    systems = sorted(str(r.body["messages"][0]["content"]) for r in server.requests)
    assert [f"You are column {i}." in text for i, text in enumerate(systems)] == [True] * 3
    for column in columns:
        figures = column.figures
        assert figures.ttft_ms is not None and figures.total_ms is not None
        assert figures.total_ms > figures.ttft_ms >= 1000  # headers came after 1 s
        assert (figures.input_tokens, figures.cached_tokens, figures.output_tokens) == (8, 4, 3)
        assert figures.tokens_per_s is not None and figures.tokens_per_s > 0
        assert figures.cost is None  # a local server's model has no price: "price unknown", not $0


def _answer_after_one_second(word: str) -> Reply:
    # The case: the whole answer comes 1 s after the request, in one go.
    return Reply(
        headers={"Content-Type": "text/event-stream"},
        chunks=openai_text_stream(word, usage=USAGE),
        delay_headers=1.0,
    )


def test_three_columns_answered_after_one_second_each_are_asked_at_once(server: ScriptedServer) -> None:
    # In turn they would take 3 s; at once, about 1 s (bench/compare.py times it). Here the
    # overlap is shown without a clock: the server held all three requests open together, which it
    # cannot when each column waits for the one before (then at most one is ever open).
    server.script(*(_answer_after_one_second(w) for w in ("one", "two", "three")))
    comparison = Comparison([_column(server, f"You are column {i}.") for i in range(3)])
    comparison.start("Hello")
    assert comparison.wait(timeout=30)
    assert [c.status for c in comparison.columns] == ["done"] * 3, [c.error for c in comparison.columns]
    assert len(server.requests) == 3
    assert server.peak_in_flight == 3


def test_a_follow_up_continues_each_column_s_own_conversation(server: ScriptedServer) -> None:
    server.script(_answer_after_one_second("red"), _answer_after_one_second("blue"))
    comparison = Comparison([_column(server, "You are A."), _column(server, "You are B.")])
    comparison.start("Pick a colour.")
    assert comparison.wait(timeout=30)
    first = {c.spec.system_prompt: c.text for c in comparison.columns}
    assert sorted(first.values()) == ["blue", "red"]
    server.script(_answer_after_one_second("again"), _answer_after_one_second("again"))
    comparison.start("Why that one?")
    assert comparison.wait(timeout=30)
    assert [c.status for c in comparison.columns] == ["done", "done"], [c.error for c in comparison.columns]
    follow_ups = server.requests[2:]
    assert len(follow_ups) == 2
    for request in follow_ups:
        sent = request.body["messages"]
        assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
        # Its own system prompt with its own earlier answer, never the other column's.
        system = next(name for name in first if name in json.dumps(sent[0]["content"]))
        assert first[system] in json.dumps(sent[2]["content"])
        assert "Why that one?" in json.dumps(sent[3]["content"])


def test_a_dead_column_fails_in_words_while_the_others_finish(server: ScriptedServer) -> None:
    server.script(_slow_answer("alive"), _slow_answer("alive"))
    dead = ModelSetup(provider="llamacpp", base_url=_dead_url(), model_id="gone")
    comparison = Comparison([_column(server, "a"), dead, _column(server, "b")])
    comparison.start("Hello")
    assert comparison.wait(timeout=60)
    alive, failed, other = comparison.columns
    assert alive.status == other.status == "done" and alive.text.startswith("alive")
    assert failed.status == "error" and failed.error
    assert "Traceback" not in failed.error
    assert "connect" in failed.error.lower()


def test_a_priced_column_shows_its_cost_and_is_marked_cheapest(server: ScriptedServer) -> None:
    server.script(_slow_answer("paid"), _slow_answer("free"))
    paid = _column(server, "p", provider="openai", model_id="gpt-4o-mini", api_key="sk-test")
    comparison = Comparison([paid, _column(server, "q")])
    comparison.start("Hello")
    assert comparison.wait(timeout=30)
    assert [c.status for c in comparison.columns] == ["done", "done"], [c.error for c in comparison.columns]
    cost = comparison.columns[0].figures.cost
    assert cost is not None and cost > 0
    assert comparison.columns[1].figures.cost is None
    cheapest, fastest = comparison.marks()
    assert cheapest is None  # only one column has a price: nothing to compare it with
    assert fastest in (0, 1)


def test_stop_stops_every_column(server: ScriptedServer) -> None:
    forever = Reply(
        headers={"Content-Type": "text/event-stream"},
        chunks=openai_text_stream("tick")[:2],
        delay=0.05,
        repeat_forever=True,
    )
    server.script(forever, forever)
    comparison = Comparison([_column(server, "a"), _column(server, "b")])
    comparison.start("Hello")
    while not all(c.text for c in comparison.columns):
        comparison.wait(timeout=0.05)
    comparison.stop()
    assert comparison.wait(timeout=30)
    assert [c.status for c in comparison.columns] == ["stopped", "stopped"]
    assert all(c.text.startswith("tick") for c in comparison.columns)


def test_column_count_and_marks() -> None:
    with pytest.raises(CompareError, match="2 to 6"):
        Comparison([ModelSetup()])
    figures = [
        ColumnFigures(cost=0.002, total_ms=900),
        ColumnFigures(cost=0.001, total_ms=1500),
        None,
        ColumnFigures(cost=None, total_ms=400),
    ]
    assert cheapest_and_fastest(figures) == (1, 3)


def test_a_column_asking_for_a_missing_tool_says_so_while_the_other_answers(server: ScriptedServer) -> None:
    server.script(_slow_answer("fine"))
    comparison = Comparison([_column(server, "a", tools=["clock"]), _column(server, "b")], tools={})
    comparison.start("What time is it?")
    assert comparison.wait(timeout=30)
    broken, fine = comparison.columns
    assert broken.status == "error" and broken.error is not None
    assert "clock" in broken.error and "Tools page" in broken.error
    assert fine.status == "done" and fine.text.startswith("fine")
