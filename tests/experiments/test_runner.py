"""run_experiment on ScriptedLlm: the matrix, tools, concurrency per provider, Stop, budget, resume."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from tests.fixtures.core import make_tool, tool_call_response
from yiem import AbortSignal, AgentContext, LlmModel, ModelCost, ScriptedLlm, TextContent, UserMessage
from yiem.experiments import (
    Dataset,
    ExperimentError,
    ItemOutcome,
    MemoryRecorder,
    Progress,
    RunSpec,
    Variant,
    VariantError,
    run_experiment,
    run_spec,
    scorers,
)

PRICED = LlmModel(id="m", provider="scripted", cost=ModelCost(input=1.0, output=2.0), price_known=True)
ANSWERS = {"capital of France": "Paris", "2+2": "4", "colour of the sky": "blue", "largest planet": "Jupiter"}


def dataset() -> Dataset:
    return Dataset.from_records(
        [
            {"id": f"q{n}", "input": question, "expected": answer}
            for n, (question, answer) in enumerate(ANSWERS.items())
        ]
    )


def prompt_of(context: AgentContext) -> str:
    first = context.messages[0]
    assert isinstance(first, UserMessage)
    block = first.content[0]
    assert isinstance(block, TextContent)
    return block.text


def answering(
    wrong: set[str] = frozenset(), gate: threading.Event | None = None
) -> Callable[[AgentContext], Any]:
    """A scripted reply: the right answer (or 'no idea' for questions in `wrong`), 10 in / 5 out tokens."""

    def reply(context: AgentContext) -> Any:
        if gate is not None:
            gate.wait(10)
        question = prompt_of(context)
        text = "no idea" if question in wrong else f"It is {ANSWERS[question]}."
        return {"content": text, "usage": {"inputTokens": 10, "outputTokens": 5}}

    return reply


def scripted(n: int, **kwargs: Any) -> ScriptedLlm:
    return ScriptedLlm([answering(**kwargs)] * n)


def test_matrix_scores_summary_and_exports() -> None:
    good = Variant(name="good", llm=scripted(4), model=PRICED, system_prompt="Answer {style}.")
    bad = Variant(name="bad", llm=scripted(4, wrong={"2+2", "largest planet"}), model=PRICED)
    seen: list[Progress] = []
    result = run_experiment(dataset(), [good, bad], [scorers.contains()], concurrency=2, progress=seen.append)

    assert result.status == "finished"
    assert [(o.item_id, o.variant) for o in result.outcomes] == [
        (f"q{n}", name) for n in range(4) for name in ("good", "bad")
    ]
    passed = {(o.item_id, o.variant): o.passed for o in result.outcomes}
    assert passed[("q1", "good")] and not passed[("q1", "bad")] and passed[("q2", "bad")]
    # Each item's transcript starts with its input; the template var it lacks stays as written.
    first = result.outcomes[0]
    assert prompt_of(AgentContext(messages=first.messages)) == "capital of France"
    assert good.llm.requests[0].system_prompt == "Answer {style}."  # type: ignore[union-attr]

    good_summary, bad_summary = result.summary()
    assert (good_summary.passed, good_summary.items, good_summary.pass_rate) == (4, 4, 1.0)
    assert (bad_summary.passed, bad_summary.pass_rate) == (2, 0.5)
    # Wilson 2/4: centre (0.5 + 1.92/4) / (1 + 3.84/4) = 0.5, half 0.4010 -> (0.1500, 0.8500)
    assert (bad_summary.pass_low, bad_summary.pass_high) == (
        pytest.approx(0.1500, abs=1e-4),
        pytest.approx(0.8500, abs=1e-4),
    )
    # 10 input tokens at $1/M and 5 output at $2/M per item: $0.00002 each.
    assert good_summary.cost == pytest.approx(4 * 0.00002)
    assert good_summary.cost_per_item == pytest.approx(0.00002)
    assert (good_summary.input_tokens, good_summary.output_tokens, good_summary.errors) == (40, 20, 0)
    assert bad_summary.mean_scores == {"contains": 0.5}

    assert [p.done for p in seen] == list(range(9))
    assert seen[-1].total == 8 and seen[-1].cost == pytest.approx(8 * 0.00002) and seen[-1].eta_s == 0.0

    frame = result.to_pandas()
    assert list(frame["variant"]) == ["good", "bad"] * 4
    assert frame["passed"].sum() == 6
    assert "score.contains" in frame.columns
    csv_lines = result.to_csv().splitlines()
    assert len(csv_lines) == 9 and csv_lines[0].startswith(
        "item_id,input,expected,variant,repeat,output,passed"
    )
    data = json.loads(result.to_json())
    assert data["summary"][1]["passed"] == 2 and data["dataset"]["items"][0]["expected"] == "Paris"

    comparison = result.compare("bad", baseline="good")
    assert (comparison.improved, comparison.regressed, comparison.unchanged) == (0, 2, 2)
    assert [c.item_id for c in comparison.regressions] == ["q1", "q3"]
    assert comparison.p_value == pytest.approx(0.5)  # 2 * P[X <= 0 | n=2] = 2 * 1/4
    assert not comparison.significant


def test_repeats_and_baseline_run() -> None:
    first = run_experiment(
        dataset(),
        [Variant(name="v", llm=scripted(8, wrong={"2+2"}), model=PRICED)],
        [scorers.exact("never")],
        repeats=2,
    )
    assert [(o.item_id, o.repeat) for o in first.outcomes][:4] == [("q0", 0), ("q0", 1), ("q1", 0), ("q1", 1)]
    second = run_experiment(
        dataset(), [Variant(name="v", llm=scripted(8), model=PRICED)], [scorers.contains()], repeats=2
    )
    against = second.compare("v", baseline_run=first)
    assert (against.improved, against.regressed, against.unchanged) == (8, 0, 0)
    assert against.p_value == pytest.approx(2 / 256)
    assert against.significant


def test_agent_runs_with_tools_and_called_tool_scorer() -> None:
    def get_time(tool_call_id: str, arguments: dict[str, Any], signal: AbortSignal) -> str:
        return f"12:00 in {arguments['timezone']}"

    tool = make_tool("get_time", get_time, {"type": "object", "properties": {"timezone": {"type": "string"}}})
    llm = ScriptedLlm([tool_call_response(("get_time", {"timezone": "UTC"})), "It is 12:00."])
    item = Dataset.from_records([{"input": "What time is it?", "expected": "12:00"}])
    variant = Variant(name="t", llm=llm, tools=["get_time"], tool_execution="sequential")
    result = run_experiment(
        item,
        [variant],
        [scorers.contains(), scorers.called_tool("get_time", {"timezone": "UTC"})],
        tools={"get_time": tool},
    )
    outcome = result.outcomes[0]
    assert outcome.passed and outcome.turns == 2 and outcome.output == "It is 12:00."
    assert [m.role for m in outcome.messages] == ["user", "assistant", "toolResult", "assistant"]
    assert llm.requests[0].tool_names == ["get_time"]
    with pytest.raises(VariantError, match="no connected MCP server offers"):
        run_experiment(item, [Variant(name="x", llm=ScriptedLlm([]), tools=["missing"])])


def test_a_variant_on_the_embedded_model_is_sent_no_tools_as_in_chat_and_compare() -> None:
    clock = make_tool("clock", lambda: "12:00")
    available = {"clock": clock}
    assert Variant(name="local", tools=["clock"]).select_tools(available) == []
    assert Variant(name="hosted", provider="openai", tools=["clock"]).select_tools(available) == [clock]
    with pytest.raises(VariantError, match="no connected MCP server offers"):
        Variant(name="local", tools=["gone"]).select_tools(available)  # still said, whatever the model


def test_max_turns_and_errors_count_as_errors() -> None:
    looping = ScriptedLlm([tool_call_response(("noop", {}))] * 3)
    tool = make_tool("noop", lambda *_: "ok")
    variant = Variant(name="loop", llm=looping, tools=["noop"], max_turns=2)
    failing = Variant(name="fail", llm=ScriptedLlm([]))
    result = run_experiment(Dataset.from_records([{"input": "go"}]), [variant, failing], tools={"noop": tool})
    loop, fail = result.outcomes
    assert (loop.stop_reason, loop.turns, loop.passed) == ("max_turns", 2, False)
    assert fail.error is not None and "no response left" in fail.error
    assert [s.errors for s in result.summary()] == [1, 1]


def test_concurrency_is_bounded_per_provider() -> None:
    lock = threading.Lock()
    running: dict[str, int] = {"a": 0, "b": 0}
    peak: dict[str, int] = {"a": 0, "b": 0}

    def counting(provider: str) -> Callable[[AgentContext], str]:
        def reply(context: AgentContext) -> str:
            with lock:
                running[provider] += 1
                peak[provider] = max(peak[provider], running[provider])
            threading.Event().wait(0.01)
            with lock:
                running[provider] -= 1
            return "ok"

        return reply

    items = Dataset.from_records([{"input": f"task {n}"} for n in range(24)])
    variants = [
        Variant(name=p, llm=ScriptedLlm([counting(p)] * 24), model=LlmModel(id=p, provider=p))
        for p in ("a", "b")
    ]
    run_experiment(items, variants, concurrency={"a": 3, "*": 2})
    assert peak == {"a": 3, "b": 2}


def test_stop_then_resume_runs_only_what_is_left() -> None:
    signal = AbortSignal()
    recorder = MemoryRecorder()
    stopped_yet = threading.Event()
    first = answering()

    def reply(context: AgentContext) -> Any:
        # The next item may start as soon as the first ends (queued ahead): it waits for the Stop.
        if prompt_of(context) != "capital of France":
            stopped_yet.wait(10)
        return first(context)

    llm = ScriptedLlm([reply] * 8)
    variant = Variant(name="v", llm=llm, model=PRICED)

    def progress(p: Progress) -> None:
        if p.done == 1:
            signal.abort("Stop pressed")
            stopped_yet.set()

    spec = RunSpec(dataset=dataset(), variants=[variant], scorers=[scorers.contains()], concurrency={"*": 1})
    stopped = run_spec(spec, recorder, progress=progress, signal=signal)
    assert (stopped.status, stopped.stop_reason) == ("stopped", "Stop pressed")
    assert [o.item_id for o in stopped.outcomes] == ["q0"]

    resumed = run_spec(spec, recorder)
    assert resumed.status == "finished"
    assert [o.item_id for o in resumed.outcomes] == ["q0", "q1", "q2", "q3"]
    # The finished item was not run again (its question asked once); the next one, if it had
    # started before the Stop, was dropped and ran again with the rest.
    asked = [prompt_of(AgentContext(messages=r.messages)) for r in llm.requests]
    assert asked in (list(ANSWERS), ["capital of France", "2+2", *list(ANSWERS)[1:]])


def telling(question: str, asked: threading.Event) -> Callable[[AgentContext], Any]:
    """The right answer, setting `asked` when `question` is asked."""

    def reply(context: AgentContext) -> Any:
        if prompt_of(context) == question:
            asked.set()
        return answering()(context)

    return reply


def test_a_free_slot_takes_the_next_item_while_the_caller_is_busy() -> None:
    second_started = threading.Event()
    reply = telling("2+2", second_started)
    waited: list[bool] = []

    def slow_caller(p: Progress) -> None:
        if p.done == 1:  # the caller's thread is busy with the first outcome (e.g. storing it)
            waited.append(second_started.wait(10))

    llm = ScriptedLlm([reply] * 4)
    result = run_experiment(dataset(), [Variant(name="v", llm=llm)], concurrency=1, progress=slow_caller)
    assert waited == [True] and result.status == "finished" and len(result.outcomes) == 4


def test_outcomes_that_finish_while_the_caller_stores_are_stored_together() -> None:
    last_asked = threading.Event()
    reply = telling("largest planet", last_asked)

    class SlowStore(MemoryRecorder):
        def __init__(self) -> None:
            super().__init__()
            self.writes: list[list[str]] = []

        def record(self, outcomes: Sequence[ItemOutcome]) -> list[ItemOutcome]:
            if not self.writes:  # the first write is slow: the others finish meanwhile
                last_asked.wait(10)
            self.writes.append([o.item_id for o in outcomes])
            return super().record(outcomes)

    recorder = SlowStore()
    result = run_spec(RunSpec.build(dataset(), [Variant(name="v", llm=ScriptedLlm([reply] * 4))]), recorder)
    assert result.status == "finished" and len(result.outcomes) == 4
    assert sorted(item for write in recorder.writes for item in write) == ["q0", "q1", "q2", "q3"]
    assert len(recorder.writes) < 4


def test_stop_drops_the_items_in_flight() -> None:
    started, gate = threading.Semaphore(0), threading.Event()
    signal = AbortSignal()

    def reply(context: AgentContext) -> Any:
        started.release()
        gate.wait(10)
        return answering()(context)

    llm = ScriptedLlm([reply] * 8, delay=0.05)

    def stop_when_two_run() -> None:
        started.acquire(timeout=10)
        started.acquire(timeout=10)
        signal.abort("Stop pressed")
        gate.set()

    stopper = threading.Thread(target=stop_when_two_run)
    stopper.start()
    result = run_experiment(
        dataset(), [Variant(name="v", llm=llm, model=PRICED)], concurrency=2, signal=signal
    )
    stopper.join()
    assert result.status == "stopped" and result.outcomes == []
    assert len(llm.requests) == 2  # nothing started after the Stop


def test_budget_stops_the_run() -> None:
    llm = scripted(4)
    variant = Variant(name="v", llm=llm, model=PRICED)
    result = run_experiment(dataset(), [variant], budget_usd=0.00003, concurrency=1)  # $0.00002 per item
    assert result.status == "budget"
    assert len(result.outcomes) == 2
    assert len(llm.requests) == 2  # the item queued ahead never started once the budget was spent
    resumed = run_spec(
        RunSpec(dataset=dataset(), variants=[variant], budget_usd=0.00003), MemoryRecorder(result.outcomes)
    )
    assert resumed.status == "budget" and len(resumed.outcomes) == 2  # spent already: nothing more runs


def test_progress_never_counts_an_unknown_price_as_zero() -> None:
    local = LlmModel(id="local", provider="llamacpp")  # no price: a local model
    seen: list[Progress] = []
    run_experiment(dataset(), [Variant(name="v", llm=scripted(4), model=local)], progress=seen.append)
    assert seen[0].done == 0 and seen[0].cost_known is None  # nothing finished: no figure yet
    assert [(p.done, p.unpriced, p.cost_known) for p in seen[1:]] == [(n, n, None) for n in range(1, 5)]

    mixed: list[Progress] = []
    variants = [
        Variant(name="priced", llm=scripted(4), model=PRICED),
        Variant(name="local", llm=scripted(4), model=local),
    ]
    run_experiment(dataset(), variants, progress=mixed.append, concurrency=1)
    last = mixed[-1]
    assert (last.done, last.unpriced) == (8, 4)
    assert last.cost_known == pytest.approx(4 * 0.00002)  # the priced half only, the rest said apart


def test_dataset_is_frozen_per_run() -> None:
    data = dataset()
    result = run_experiment(data, [Variant(name="v", llm=scripted(4))])
    version = result.dataset_version
    data.items[0].input = "changed"
    assert result.dataset.items[0].input == "capital of France"
    assert result.dataset_version == version != data.version


def test_refuses_what_cannot_run() -> None:
    with pytest.raises(ExperimentError, match="at least one variant"):
        run_experiment(dataset(), [])
    with pytest.raises(ExperimentError, match="no items"):
        run_experiment(Dataset(), [Variant(name="v", llm=ScriptedLlm([]))])
    with pytest.raises(ExperimentError, match="Two variants are named 'v'"):
        run_experiment(
            dataset(), [Variant(name="v", llm=ScriptedLlm([])), Variant(name="v", llm=ScriptedLlm([]))]
        )
    with pytest.raises(ExperimentError, match="same name"):
        run_experiment(
            dataset(), [Variant(name="v", llm=ScriptedLlm([]))], [scorers.contains(), scorers.contains()]
        )


def test_outcome_round_trips_as_json() -> None:
    result = run_experiment(
        dataset(), [Variant(name="v", llm=scripted(4), model=PRICED)], [scorers.contains()]
    )
    again = ItemOutcome.model_validate_json(result.outcomes[0].model_dump_json())
    assert again == result.outcomes[0]
