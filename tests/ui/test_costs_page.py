"""The Costs page in AppTest: figures from seeded rows, filters in the URL, empty state, CSV."""

from __future__ import annotations

import csv
import io
from typing import Any

from sqlalchemy import Engine, insert

from tests.fixtures.costs import QUIZ_ID, add_quiz, usage_row, utc_ms
from ui.state import costs_pick
from yiem.store import usage


def paris_view(page: Any) -> Any:
    """25-26 October 2026 in Paris (the days of the known rows), as a shared link would set it."""
    page.query_params["period"] = "Custom dates"
    page.query_params["dates"] = ["2026-10-25", "2026-10-26"]
    page.query_params["tz"] = "Europe/Paris"
    return page.run()


def pick(param: str, current: str | None) -> str:
    """The key of a Costs filter kept in the URL, drawn while the URL holds `current`."""
    return costs_pick(param, current).name


def metrics(page: Any) -> dict[str, tuple[str, str | None]]:
    return {m.label: (m.value, m.delta) for m in page.metric}


def test_seeded_rows_render_hand_computed_figures(known_usage: Engine, costs_page: Any) -> None:
    page = paris_view(costs_page)
    assert not page.exception
    shown = metrics(page)
    # $0.02475 (Claude) + $0.01125 (gpt-4o) = $0.036, against $0.01125 the 49 hours before: +220 %.
    assert shown["Total cost"] == ("$0.0360", "+220.0%")
    assert shown["Requests"] == ("4", "+300.0%")
    assert shown["Input tokens"] == ("4,500", "+350.0%")
    assert shown["Cached input tokens"] == ("3,000", "+0.0%")
    assert shown["Input from cache"][0] == "40.0%"
    assert shown["Median latency"][0] == "1.75 s"
    assert shown["Median time to first token"][0] == "500 ms"
    assert shown["Error rate"][0] == "25.0%"
    assert "Price unknown** for 1 of these requests: local models" in page.warning[0].value
    tables = [df.value for df in page.dataframe]
    assert len(tables) == 5
    by_model = next(v for v in tables if "Model" in v.columns and "Requests" in v.columns)
    costs = dict(zip(by_model["Model"], by_model["Cost"], strict=True))
    assert round(costs["claude-sonnet-4-20250514"], 5) == 0.02475
    assert costs["qwen2.5:7b"] != costs["qwen2.5:7b"]  # NaN: price unknown, not $0
    prices = next(v for v in tables if "Price from" in v.columns)
    assert set(prices["Model"]) == {"claude-sonnet-4-20250514", "gpt-4o", "qwen2.5:7b"}
    gpt = prices[prices["Model"] == "gpt-4o"].iloc[0]
    assert gpt["Input / 1M"] > 0 and "genai-prices" in gpt["Price from"]
    conversations = next(v for v in tables if "Conversation" in v.columns)
    assert conversations.iloc[0]["Conversation"] == "Plan the trip"
    assert conversations.iloc[0]["Open"] == "chat?c=conv-a"


def test_filters_change_the_figures(known_usage: Engine, costs_page: Any) -> None:
    page = paris_view(costs_page)
    page.multiselect(key="provider").select("openai").run()
    assert not page.exception
    shown = metrics(page)
    assert shown["Requests"][0] == "2"
    assert shown["Total cost"][0] == "$0.0113"
    assert shown["Error rate"][0] == "50.0%"
    page.multiselect(key="provider").unselect("openai").run()
    page.multiselect(key="model").select("claude-sonnet-4-20250514").run()
    assert metrics(page)["Total cost"][0] == "$0.0248"
    assert metrics(page)["Requests"][0] == "1"


def test_a_shared_link_opens_the_same_view(known_usage: Engine, costs_page: Any) -> None:
    """The widgets are bound to the URL: these query parameters are what the browser shows."""
    costs_page.query_params["provider"] = ["openai", "anthropic"]
    page = paris_view(costs_page)
    assert not page.exception
    assert page.multiselect(key="provider").value == ["openai", "anthropic"]
    assert page.selectbox(key="tz").value == "Europe/Paris"
    assert metrics(page)["Requests"][0] == "3"
    assert metrics(page)["Total cost"][0] == "$0.0360"


def test_conversation_filter_is_shared_by_url(known_usage: Engine, costs_page: Any) -> None:
    costs_page.query_params["conversation"] = "conv-a"
    page = paris_view(costs_page)
    assert not page.exception
    assert page.selectbox(key=pick("conversation", "conv-a")).value == "conv-a"
    assert metrics(page)["Requests"][0] == "2"
    assert metrics(page)["Total cost"][0] == "$0.0360"
    page.selectbox(key=pick("conversation", "conv-a")).select("conv-b").run()
    assert page.query_params["conversation"] in ("conv-b", ["conv-b"])
    assert metrics(page)["Requests"][0] == "1"
    assert metrics(page)["Total cost"][0] == "unknown"  # conv-b used only the local model
    page.selectbox(key=pick("conversation", "conv-b")).select_index(0).run()
    assert "conversation" not in page.query_params
    assert metrics(page)["Requests"][0] == "4"


def test_experiment_filter_is_shared_by_url(known_usage: Engine, costs_page: Any) -> None:
    page = paris_view(costs_page)
    assert not any(str(b.key).startswith("costs_pick:experiment:") for b in page.get("selectbox"))
    add_quiz(known_usage)
    from ui.costs.filters import experiment_names

    experiment_names.clear()  # its choices are cached for 30 s
    page.run()
    picker = page.selectbox(key=pick("experiment", None))
    assert picker.options == ["All usage", "quiz"]
    assert metrics(page)["Requests"][0] == "7"
    picker.select(QUIZ_ID).run()
    assert not page.exception
    assert page.query_params["experiment"] in (QUIZ_ID, [QUIZ_ID])
    shown = metrics(page)
    assert (shown["Requests"][0], shown["Total cost"][0]) == ("3", "$0.000950")  # priced rows only
    assert "Price unknown** for 1 of these requests" in page.warning[0].value
    assert page.selectbox(key=pick("conversation", None)).options == ["All conversations", "v · q1", "v · q2"]
    page.selectbox(key=pick("experiment", QUIZ_ID)).select_index(0).run()
    assert "experiment" not in page.query_params
    assert metrics(page)["Requests"][0] == "7"


def test_empty_store_offers_demo_data(costs_page: Any) -> None:
    page = costs_page.run()
    assert not page.exception
    assert "No usage recorded yet" in page.info[0].value
    assert not page.metric
    page.button[0].click().run()
    assert not page.exception
    assert metrics(page)["Requests"][0] != "0"
    assert page.metric


def test_csv_downloads_hold_the_filtered_rows(known_usage: Engine, costs_page: Any) -> None:
    page = paris_view(costs_page)
    buttons = {b.key: b for b in page.get("download_button")}
    rows = list(csv.DictReader(io.StringIO(page.download(buttons["csv_rows"]))))
    assert [int(r["created_ms"]) for r in rows] == [
        utc_ms("2026-10-24T22:30:00"),
        utc_ms("2026-10-25T22:30:00"),
        utc_ms("2026-10-26T10:00:00"),
        utc_ms("2026-10-26T12:00:00"),
    ]
    assert rows[0]["input_tokens"] == "2000" and rows[0]["conversation_id"] == "conv-a"
    providers = list(csv.DictReader(io.StringIO(page.download(buttons["csv_provider"]))))
    assert [(r["provider"], r["cost_usd"]) for r in providers] == [
        ("anthropic", "0.024750"),
        ("openai", "0.011250"),
        ("ollama", "0.000000"),
    ]


def test_a_linked_conversation_outside_the_period_keeps_its_title(
    known_usage: Engine, costs_page: Any
) -> None:
    costs_page.query_params["conversation"] = "conv-b"
    costs_page.query_params["provider"] = "openai"  # conv-b only used Ollama: not among the top
    page = paris_view(costs_page)
    assert not page.exception
    picker = page.selectbox(key=pick("conversation", "conv-b"))
    assert picker.value == "conv-b"
    assert "Local chat" in picker.options
    assert "No requests match these filters" in page.info[0].value


def test_estimated_requests_are_marked(known_usage: Engine, costs_page: Any) -> None:
    page = paris_view(costs_page)
    assert not any("estimate" in caption.value for caption in page.caption)
    stopped = usage_row(created_ms=utc_ms("2026-10-25T10:00:00"), stop_reason="aborted", output_tokens=40)
    with known_usage.begin() as conn:
        conn.execute(insert(usage).values(**stopped, estimated=True))
    page = paris_view(costs_page)
    assert not page.exception
    marked = [caption.value for caption in page.caption if "estimate" in caption.value]
    assert marked and "≈ 1 of these requests" in marked[0], marked
    assert metrics(page)["Requests"][0] == "5"


def test_compare_page_filter_is_shared_by_url(known_usage: Engine, costs_page: Any) -> None:
    page = paris_view(costs_page)
    assert not any(str(b.key).startswith("costs_pick:source:") for b in page.get("selectbox"))
    when = utc_ms("2026-10-25T12:00:00")
    with known_usage.begin() as conn:
        conn.execute(
            insert(usage),
            [
                usage_row(
                    created_ms=when, input_tokens=10, output_tokens=5, cost_output=0.002, source="compare"
                ),
                usage_row(created_ms=when, model="gpt-4o-mini", input_tokens=7, source="compare"),
            ],
        )
    from ui.costs.filters import source_names

    source_names.clear()  # its choices are cached for 30 s
    page.run()
    picker = page.selectbox(key=pick("source", None))
    assert picker.options == ["Every page", "Compare page"]
    assert metrics(page)["Requests"][0] == "6"
    picker.select("compare").run()
    assert not page.exception
    assert page.query_params["source"] in ("compare", ["compare"])
    shown = metrics(page)
    assert (shown["Requests"][0], shown["Total cost"][0]) == ("2", "$0.002000")
    page.selectbox(key=pick("source", "compare")).select_index(0).run()
    assert "source" not in page.query_params
    assert metrics(page)["Requests"][0] == "6"


def test_spending_per_tool_call_has_its_tab(known_usage: Engine, costs_page: Any) -> None:
    when = utc_ms("2026-10-25T12:00:00")
    with known_usage.begin() as conn:
        conn.execute(
            insert(usage),
            [
                usage_row(created_ms=when, input_tokens=100, cost_input=0.003, tool="time__now", source=None),
                usage_row(created_ms=when + 1, cost_output=0.001, tool="everything", source="mcp-sampling"),
            ],
        )
    from ui.costs.filters import source_names

    source_names.clear()  # its choices are cached for 30 s
    page = paris_view(costs_page)
    assert not page.exception
    (by_tool,) = [df.value for df in page.dataframe if "Tool call" in df.value.columns]
    assert list(by_tool["Tool call"]) == ["time__now", "Sampling for everything"]
    assert list(by_tool["Requests"]) == [1, 1]
    assert round(by_tool["Cost"].iloc[0], 6) == 0.003
    # The sampling rows are also one of the page filter's choices.
    assert page.selectbox(key=pick("source", None)).options == ["Every page", "MCP servers' sampling"]
