"""A run's results: the summary per variant, the items × variants matrix, transcripts, exports."""

from __future__ import annotations

import html
from typing import Any

import pandas as pd
import streamlit as st

from ui import avatars
from ui.experiments.agent_settings import played_caption
from ui.experiments.review import draw_cell_review, review_store
from ui.experiments.state import experiment_store
from ui.messages import continue_in_chat
from ui.timeline import draw_timeline
from yiem.amounts import dollars, duration, tokens
from yiem.experiments import ExperimentResult, ItemOutcome
from yiem.reply_timeline import reply_ranges
from yiem.safe_markdown import safe_markdown
from yiem.types import AssistantMessageToolCall, ToolResultMessage, UserMessage

PAGE_ROWS = 20


def draw_summary(result: ExperimentResult) -> None:
    """Per variant: pass rate with its 95% Wilson interval, mean score per scorer, cost, latency, tokens."""
    rows = []
    for s in result.summary():
        row: dict[str, Any] = {
            "variant": s.variant,
            "pass rate": f"{s.pass_rate:.0%} ({s.pass_low:.0%}–{s.pass_high:.0%})",
            "passed": f"{s.passed} / {s.items}",
        }
        row.update({f"mean {name}": round(value, 3) for name, value in s.mean_scores.items()})
        row.update(
            {
                "cost": dollars(s.cost)
                + (f" (+{s.unpriced} unpriced)" if s.unpriced and s.cost is not None else ""),
                "per item": dollars(s.cost_per_item),
                "p50 latency": duration(s.latency_p50_ms),
                "p95 latency": duration(s.latency_p95_ms),
                "tokens in / out": f"{tokens(s.input_tokens)} / {tokens(s.output_tokens)}",
                "errors": s.errors,
            }
        )
        rows.append(row)
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="exp_summary")
    if result.judge_usage.total_tokens:
        st.caption(
            f"Rubric judges, counted apart: {tokens(result.judge_usage.total_tokens)} tokens, "
            f"{dollars(result.judge_cost)}."
        )
    if result.user_usage.total_tokens:
        st.caption(
            f"Simulated users' model, counted apart: {tokens(result.user_usage.total_tokens)} tokens, "
            f"{dollars(result.user_cost)}."
        )


def _badges(outcome: ItemOutcome) -> str:
    parts = []
    for score in outcome.scores:
        colour = "green" if score.passed else "red"
        parts.append(f":{colour}-badge[{score.scorer} {score.score:.2f}]")
    if outcome.error:
        parts.append(":orange-badge[error]")
    return " ".join(parts) or (":green-badge[done]" if outcome.passed else ":red-badge[failed]")


def _start(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def draw_matrix(result: ExperimentResult) -> None:
    """Items as rows, variants as columns; each cell the output's start, badges, cost and latency."""
    by_key = {(o.item_id, o.variant): o for o in result.outcomes if o.repeat == 0}
    items = result.dataset.items
    pages = max(1, -(-len(items) // PAGE_ROWS))
    page = 1
    if pages > 1:
        page = int(st.number_input("Page", 1, pages, key=f"exp_matrix_page_{result.run_id}"))
    widths = [2] + [3] * len(result.variants)
    header = st.columns(widths)
    header[0].markdown("**Item**")
    for column, name in zip(header[1:], result.variants, strict=True):
        column.markdown(f"**{name}**")
    for item in items[(page - 1) * PAGE_ROWS : page * PAGE_ROWS]:
        row = st.container(border=True, key=f"exp_row_{item.id}")
        cells = row.columns(widths)
        cells[0].markdown(html.escape(_start(item.input, 120)))
        if item.expected:
            cells[0].caption(f"expected: {_start(item.expected, 60)}")
        for column, name in zip(cells[1:], result.variants, strict=True):
            outcome = by_key.get((item.id, name))
            if outcome is None:
                column.caption("not run yet")
                continue
            column.markdown(_badges(outcome))
            column.text(_start(outcome.error or outcome.output) or "(no text)")
            column.caption(
                f"{dollars(outcome.cost)} · {duration(outcome.latency_ms)} · {outcome.turns} turns"
            )
            if outcome.user_usage is not None:
                column.caption(played_caption(outcome))
            if column.button(
                "Transcript", key=f"exp_open_{result.run_id}_{item.id}_{name}", icon=":material/article:"
            ):
                show_transcript(outcome, result.run_id)


@st.dialog("Transcript", width="large")
def show_transcript(outcome: ItemOutcome, run_id: str) -> None:
    """The whole run of one item: the prompt, each reply, each tool call and its result, the scores."""
    st.markdown(f"**{outcome.variant}** · item `{outcome.item_id}` · {outcome.stop_reason}")
    for score in outcome.scores:
        st.markdown(
            f"{_badges(outcome.model_copy(update={'scores': [score], 'error': None}))} "
            + safe_markdown(score.reason)
        )
    if outcome.error:
        st.error(safe_markdown(outcome.error))
    store = experiment_store()
    # The results are the team's; each item's transcript is a conversation of whoever ran it.
    own = outcome.conversation_id is None or store.conversations.exists(outcome.conversation_id)
    if not own:
        st.info("This item's transcript stays with the person who ran it; its scores are above.")
    messages = store.transcript(outcome)
    replies = reply_ranges(messages)  # each reply's Timeline goes under its last assistant message
    where = f"exp-timeline-{outcome.conversation_id or outcome.item_id}-{outcome.variant}-{outcome.repeat}"
    for index, message in enumerate(messages):
        if isinstance(message, UserMessage):
            with st.chat_message("user", avatar=avatars.USER):
                st.text(message.text)
        elif isinstance(message, ToolResultMessage):
            with st.chat_message("tool", avatar=avatars.TOOL):
                st.caption(f"{message.tool_name} returned" + (" an error" if message.is_error else ""))
                st.code(message.text or "(empty)")
        else:
            with st.chat_message("assistant", avatar=avatars.ASSISTANT):
                if message.text:
                    st.markdown(safe_markdown(message.text))
                if isinstance(message, AssistantMessageToolCall):
                    for call in message.tool_calls:
                        st.caption(f"calls {call.name}")
                        st.json(call.arguments, expanded=False)
                if index in replies:
                    first, end = replies[index]
                    draw_timeline(messages[first:end], key=f"{where}-{index}")
    if outcome.conversation_id and own:
        continue_in_chat(outcome.conversation_id)
    draw_cell_review(run_id, outcome)


def draw_exports(result: ExperimentResult) -> None:
    # Each cell's reviews go with it, those this person may read (others' words once they are open).
    reviews = review_store().reviews(result.run_id, result.outcomes)
    exports = (
        ("Results as CSV", result.to_csv(reviews), "csv", "text/csv"),
        ("Results as JSON", result.to_json(reviews), "json", "application/json"),
    )
    for column, (label, body, suffix, mime) in zip(st.columns(2), exports, strict=True):
        column.download_button(
            label,
            body,
            file_name=f"experiment-{result.run_id[:8]}.{suffix}",
            mime=mime,
            icon=":material/download:",
            key=f"exp_{suffix}_{result.run_id}",
        )
