"""Human judgment of a run: the review queue (blind names, shortcuts), people's scores beside the
automatic ones, agreement (Krippendorff's alpha) and the cells where the judge and people disagree."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from ui.bootstrap import owner, store_engine
from ui.experiments.state import draft, save
from ui.review_form import Verdict, describe, draw_form
from yiem.experiments import (
    HUMAN_SCORER,
    Agreement,
    ExperimentResult,
    ItemOutcome,
    OutcomeKey,
    Review,
    ReviewError,
    ReviewStore,
    disagreements,
    judge_agreement,
    reviewer_agreement,
    scorer_comparison,
    scorer_figures,
    with_corrections,
    with_human_scores,
)
from yiem.identity import Owner
from yiem.store import StoreError, database_url

KEEP_LABEL = "Keep this as the item's expected answer"


def review_store() -> ReviewStore:
    return ReviewStore(store_engine(database_url()), owner())


def draw_queue(result: ExperimentResult) -> None:
    """ "Review this run": the next cell this person has not reviewed, one at a time, variant names hidden."""
    store = review_store()
    cell = store.queue(result.run_id, result.outcomes, result.variants)
    if cell is None:
        st.success("You have reviewed every result of this run. Thank you.", icon=":material/task_alt:")
        return
    outcome = cell.outcome
    item = next((i for i in result.dataset.items if i.id == outcome.item_id), None)
    st.markdown(f"**{cell.left} of {cell.total} left** · this answer is from **{cell.blind_name}**")
    where = f"{result.run_id}_{outcome.item_id}_{outcome.variant}_{outcome.repeat}"
    # Keyed by how many are left and by the cell itself, so a cell's words and boxes are never another
    # cell's (the last one's, still drawn faded; or one a resumed run put at the same count).
    cell_key = f"{cell.left}_{hashlib.sha256(where.encode()).hexdigest()[:12]}"
    with st.container(border=True, key=f"review_cell_{cell_key}"):
        st.caption("The task")
        st.text(item.input if item is not None else outcome.item_id)
        if item is not None and item.expected:
            st.caption(f"Expected: {item.expected}")
        st.caption("The answer")
        st.text(outcome.error or outcome.output or "(no text)")
    st.caption("Shortcuts: G for good, B for bad.")
    with st.container(key=f"review_form_{cell_key}"):
        draw_form(
            where,
            _keeper(result.run_id, outcome.key),
            keep_label=KEEP_LABEL,
            shortcuts=True,
            buttons="review",
        )


def draw_cell_review(run_id: str, outcome: ItemOutcome) -> None:
    """Review one matrix cell from its transcript: this person's own review, and the form to change it."""
    store = review_store()
    mine = next(
        (
            r
            for r in store.reviews(run_id, [outcome])
            if r.key == outcome.key and r.reviewer == store.person.id
        ),
        None,
    )
    saved = (
        None
        if mine is None
        else Verdict(mine.passed, mine.rating, mine.comment, mine.expected, mine.use_expected)
    )
    st.markdown("**Your review**")
    if saved is not None:
        st.caption(describe(saved))
    where = f"cell_{run_id}_{outcome.item_id}_{outcome.variant}_{outcome.repeat}"
    draw_form(where, _keeper(run_id, outcome.key), saved=saved, keep_label=KEEP_LABEL, buttons="cell_review")


def _keeper(run_id: str, key: OutcomeKey) -> Callable[[Verdict], None]:
    def keep(verdict: Verdict) -> None:
        review_store().save(
            run_id,
            key,
            passed=verdict.passed,
            rating=verdict.rating,
            comment=verdict.comment,
            expected=verdict.expected,
            use_expected=verdict.keep,
        )

    return keep


def draw_assignment(result: ExperimentResult) -> None:
    """The experiment's owner names the people asked to review the run, and may open everyone's comments
    early."""
    store = review_store()
    asked = store.assigned(result.run_id)
    if asked:
        st.caption("Asked to review: " + ", ".join(person.label or person.id for person in asked))
    if not store.may_manage(result.run_id):
        return
    typed = st.text_input(
        "Ask people to review (their sign-in emails, separated by commas)",
        key=f"review_assign_{result.run_id}",
    )
    left, right = st.columns(2)
    if left.button("Ask them", key="review_assign_go", icon=":material/group_add:"):
        people = [Owner(id=email.strip(), label=email.strip()) for email in typed.split(",") if email.strip()]
        if not people:
            st.error("Type at least one email to ask someone to review.")
        else:
            try:
                store.assign(result.run_id, people)
            except ReviewError as error:  # someone the experiment is not shared with
                st.error(str(error))
            else:
                st.rerun()
    if right.button("Open everyone's comments now", key="review_reveal", icon=":material/visibility:"):
        store.reveal(result.run_id)
        st.rerun()


def _alpha_words(agreement: Agreement) -> str:
    if agreement.alpha is None:
        return f"not yet — {agreement.why}"
    return f"α = {agreement.alpha:.3f} over {agreement.cells} cells ({agreement.raters} raters)"


def draw_judgment(result: ExperimentResult) -> None:
    """People's pass rate beside each scorer's, agreement, the disagreement table, and the reviews."""
    store = review_store()
    reviews = store.reviews(result.run_id, result.outcomes)
    if not reviews:
        st.info("Nobody has reviewed this run yet: press “Review this run” to start.")
        return
    scored = with_human_scores(result.outcomes, reviews)
    rows = []
    for variant in result.variants:
        for scorer in [HUMAN_SCORER, *result.scorers]:
            figures = scorer_figures(scored, scorer, variant)
            if figures.cells:
                interval = f"({figures.pass_low:.0%}–{figures.pass_high:.0%})"
                rows.append(
                    {
                        "variant": variant,
                        "scorer": "people" if scorer == HUMAN_SCORER else scorer,
                        "pass rate": f"{figures.pass_rate:.0%} {interval}",
                        "passed": f"{figures.passed} / {figures.cells}",
                    }
                )
    # Tables, not data grids: a handful of rows, and their words are in the page for anyone to read.
    st.table(pd.DataFrame(rows).set_index("variant"))
    baseline = result.variants[0]
    for candidate in result.variants[1:]:
        against = scorer_comparison(scored, HUMAN_SCORER, baseline, candidate)
        if against.items:
            st.markdown(
                f"**People on {candidate} against {baseline}:** {against.improved} better, "
                f"{against.regressed} worse of {len(against.items)} paired cells, "
                f"McNemar p = {against.p_value:.3f}"
            )
    st.markdown(f"**Agreement between reviewers:** {_alpha_words(reviewer_agreement(reviews))}")
    for scorer in result.scorers:
        st.markdown(
            f"**People and {scorer}:** {_alpha_words(judge_agreement(result.outcomes, reviews, scorer))}"
        )
        table = disagreements(result.outcomes, reviews, scorer)
        if table:
            st.table(
                pd.DataFrame(
                    [
                        {
                            "item": row.item_id,
                            "variant": row.variant,
                            scorer: "pass" if row.judge_passed else "fail",
                            "people": f"{row.up} of {row.reviews} good",
                            "why": row.judge_reason,
                        }
                        for row in table
                    ]
                ).set_index("item")
            )
    if any(review.hidden for review in reviews):
        st.caption(
            "Others' comments stay hidden until every reviewer is done, or the experiment's owner opens them."
        )
    st.table(pd.DataFrame([_review_row(review) for review in reviews]).set_index("item"))
    _draw_corrections(result)
    st.download_button(
        "Reviews as JSON",
        json.dumps([review.model_dump() for review in reviews], ensure_ascii=False, indent=2),
        file_name=f"experiment-{result.run_id[:8]}-reviews.json",
        mime="application/json",
        icon=":material/download:",
        key=f"review_json_{result.run_id}",
    )


def _draw_corrections(result: ExperimentResult) -> None:
    # Reviewers' "what it should have said", kept as the items' expected answers in the open experiment
    # (the next run uses them; this run keeps the dataset it ran).
    kept = review_store().corrected_expectations(result.run_id, result.outcomes)
    if not kept:
        return
    current = draft()
    if st.button(
        f"Use the {len(kept)} kept corrections as the items' expected answers",
        key="review_corrections",
        icon=":material/edit_note:",
    ):
        current.dataset, changed = with_corrections(current.dataset, kept)
        if not changed:
            st.info("This experiment's dataset already has those answers, or no longer has those items.")
            return
        try:
            save(current)
        except StoreError as error:  # made read-only or private by its owner since the page was drawn
            st.error(f"The experiment was not saved: {error}")
            return
        st.success(f"{changed} expected answers changed in this experiment; the next run uses them.")


def _review_row(review: Review) -> dict[str, Any]:
    return {
        "item": review.item_id,
        "variant": review.variant,
        "reviewer": review.reviewer_name or review.reviewer,
        "verdict": "👍" if review.passed else "👎",
        "stars": review.rating or "",
        "comment": "(hidden until all are done)" if review.hidden else review.comment,
        "should have said": "" if review.hidden else review.expected,
    }
