"""Charts of results: quality against cost with the Pareto frontier, per-scorer bars, runs over time,
and the item-by-item comparison with a baseline."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from yiem.experiments import ExperimentResult, RunRecord, pareto_front


def draw_quality_cost(result: ExperimentResult) -> None:
    """Each variant a point: pass rate against cost per item (latency when no price is known)."""
    summaries = result.summary()
    priced = any(s.cost_per_item is not None for s in summaries)
    axis = "cost per item ($)" if priced else "p50 latency (s)"
    points = [
        (s.variant, (s.cost_per_item or 0.0) if priced else (s.latency_p50_ms or 0.0) / 1000, s.pass_rate)
        for s in summaries
    ]
    front = pareto_front(points)
    figure = go.Figure()
    figure.add_trace(
        go.Scatter(
            x=[p[1] for p in points],
            y=[p[2] for p in points],
            text=[p[0] for p in points],
            mode="markers+text",
            textposition="top center",
            name="variants",
            marker={"size": 12},
        )
    )
    by_name = {p[0]: p for p in points}
    figure.add_trace(
        go.Scatter(
            x=[by_name[n][1] for n in front],
            y=[by_name[n][2] for n in front],
            mode="lines",
            name="Pareto frontier",
            line={"dash": "dash"},
        )
    )
    figure.update_layout(
        xaxis_title=axis,
        yaxis_title="pass rate",
        yaxis_range=[-0.05, 1.1],
        height=360,
        margin={"t": 30, "b": 40},
    )
    st.plotly_chart(figure, key=f"exp_scatter_{result.run_id}")
    if not priced:
        st.caption("No variant has a known price (local models), so latency stands in for cost.")


def draw_scorer_bars(result: ExperimentResult) -> None:
    rows = [
        {"variant": s.variant, "scorer": name, "mean score": value}
        for s in result.summary()
        for name, value in s.mean_scores.items()
    ]
    if not rows:
        return
    frame = pd.DataFrame(rows)
    figure = go.Figure(
        [
            go.Bar(name=variant, x=part["scorer"], y=part["mean score"])
            for variant, part in frame.groupby("variant", sort=False)
        ]
    )
    figure.update_layout(barmode="group", yaxis_range=[0, 1], height=300, margin={"t": 30, "b": 40})
    st.plotly_chart(figure, key=f"exp_bars_{result.run_id}")


def draw_history(runs: list[tuple[RunRecord, ExperimentResult]]) -> None:
    """Pass rate per variant across the experiment's runs."""
    rows = [
        {
            "run": datetime.fromtimestamp(record.created_ms / 1000, UTC),
            "variant": s.variant,
            "pass rate": s.pass_rate,
        }
        for record, result in runs
        for s in result.summary()
        if s.items
    ]
    if len({row["run"] for row in rows}) < 2:
        return
    frame = pd.DataFrame(rows)
    figure = go.Figure(
        [
            go.Scatter(x=part["run"], y=part["pass rate"], name=variant, mode="lines+markers")
            for variant, part in frame.groupby("variant", sort=False)
        ]
    )
    figure.update_layout(
        yaxis_range=[0, 1.05], height=300, margin={"t": 30, "b": 40}, yaxis_title="pass rate"
    )
    st.plotly_chart(figure, key="exp_history")


def draw_comparison(result: ExperimentResult, runs: list[tuple[RunRecord, ExperimentResult]]) -> None:
    """Candidate against baseline item by item: improved, regressed, unchanged, and exact McNemar."""
    labels = {record.id: f"{_when(record.created_ms)} · {record.status}" for record, _ in runs}
    results = {record.id: res for record, res in runs}
    a, b, c = st.columns(3)
    baseline_id = a.selectbox(
        "Baseline run",
        list(labels),
        format_func=labels.__getitem__,
        key=f"exp_base_run_{result.run_id}",
        index=list(labels).index(result.run_id) if result.run_id in labels else 0,
    )
    baseline_run = results.get(baseline_id, result)
    baseline = b.selectbox("Baseline variant", baseline_run.variants, key=f"exp_base_v_{result.run_id}")
    others = [v for v in result.variants if baseline_id != result.run_id or v != baseline] or result.variants
    candidate = c.selectbox("Candidate variant", others, key=f"exp_cand_{result.run_id}")
    comparison = result.compare(
        candidate, baseline=baseline, baseline_run=None if baseline_id == result.run_id else baseline_run
    )
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Improved", comparison.improved)
    m2.metric("Regressed", comparison.regressed)
    m3.metric("Unchanged", comparison.unchanged)
    m4.metric("McNemar p", f"{comparison.p_value:.3f}")
    if comparison.improved + comparison.regressed == 0:
        st.caption("No item changed between pass and fail.")
    elif comparison.significant:
        st.success("The difference in pass/fail is unlikely to be noise (exact McNemar test, p < 0.05).")
    else:
        st.info(
            "The difference in pass/fail could well be noise (exact McNemar test, p ≥ 0.05): run more items."
        )
    only = st.toggle("Only regressions", key=f"exp_only_regressions_{result.run_id}")
    inputs = {item.id: item.input for item in result.dataset.items}
    rows = [
        {
            "item": inputs.get(change.item_id, change.item_id),
            "repeat": change.repeat,
            "change": change.change,
            "baseline": f"{'pass' if change.baseline_passed else 'fail'} ({change.baseline_score:.2f})",
            "candidate": f"{'pass' if change.candidate_passed else 'fail'} ({change.candidate_score:.2f})",
        }
        for change in (comparison.regressions if only else comparison.items)
    ]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key=f"exp_changes_{result.run_id}")


def _when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
