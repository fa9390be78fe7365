"""Items made from a Chat reply: each variant's replay beside the reply Chat had, where the texts part,
and what each cost."""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from yiem.amounts import dollars
from yiem.experiments import ExperimentResult, OriginalReply, diff_lines, original_diffs


def draw_replays(result: ExperimentResult, originals: Mapping[str, OriginalReply]) -> None:
    """Per item made from Chat and per variant: the two replies, their diff and both costs."""
    items = {item.id for item in result.dataset.items} & set(originals)
    if not items:
        return
    st.subheader("Replayed against the Chat reply")
    for variant in result.variants:
        for diff in original_diffs(result, originals, variant):
            original = originals[diff.item_id]
            key = f"exp_replay_{result.run_id}_{diff.item_id}_{variant}_{diff.repeat}"
            with st.container(border=True, key=key):
                change = diff.cost_change
                st.markdown(
                    f"**{variant}** replays item `{diff.item_id}`"
                    + (f" (repeat {diff.repeat + 1})" if result.repeats > 1 else "")
                    + (
                        f" · cost {'+' if change >= 0 else '−'}{dollars(abs(change))}"
                        if change is not None
                        else ""
                    )
                )
                left, right = st.columns(2)
                by = f" ({original.model})" if original.model else ""
                left.caption(f"In Chat{by} · {dollars(diff.baseline_cost)}")
                left.text(diff.baseline_output or "(no text)")
                right.caption(f"Replay by {variant} · {dollars(diff.candidate_cost)}")
                right.text(diff.candidate_output or "(no text)")
                if diff.same_reply:
                    st.caption("The same reply, word for word.")
                else:
                    st.code(
                        "\n".join(diff_lines(diff.baseline_output, diff.candidate_output)), language="diff"
                    )
