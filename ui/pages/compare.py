"""The Compare page: one prompt to 2-6 models side by side, blind votes, and the leaderboard.

It reads top to bottom: the comparison the URL names (`?cmp=ID`) and the saved ones, the columns'
settings, the prompt (sent to every column at once), the live or finished columns with their
figures, the blind vote, then the leaderboard. A column can take a saved Experiments variant's settings.
"""

from __future__ import annotations

import streamlit as st

from ui import bootstrap
from ui.compare.columns import draw_columns, draw_live
from ui.compare.saved import draw_saved, follow_url, show_in_url
from ui.compare.setup import draw_column_settings
from ui.compare.suggestions import draw_suggestions, first_run, preset_example, suggested_prompt
from ui.compare.votes import draw_leaderboard, draw_vote
from ui.messages import IMAGE_TYPES, submitted_prompt
from ui.state import (
    BLIND_TOGGLE,
    CHAT,
    COMPARE_BLIND,
    COMPARE_LAST_PROMPT,
    COMPARE_RUN,
    COMPARE_VOTED,
    STORE,
    TOOL_REGISTRY,
)
from yiem.compare import CompareError, Comparison, ComparisonStore, VoteStore, blind_order
from yiem.experiments import ExperimentStore
from yiem.model_setup import takes_images
from yiem.store import StoreError

bootstrap.ensure_session()
st.title("Compare")
st.caption("One prompt to several models at once: their answers side by side, what each cost and how fast.")

owner = bootstrap.owner()
saved = ComparisonStore(STORE().engine, owner.id)
comparison: Comparison | None = follow_url(saved)

try:
    variants = ExperimentStore(saved.engine, owner.id, admin=owner.is_admin).saved_variants()
except StoreError as error:
    st.error(f"The Experiments page's saved variants could not be read: {error}")
    variants = []
first = first_run(saved)  # nothing saved yet: the columns start apart and prompts are suggested
preset_example(first)
specs = draw_column_settings(variants)
blind = st.toggle(
    "Blind vote: two columns, names hidden and order shuffled until you vote", key=BLIND_TOGGLE.name
)
tag = st.text_input("Tag for votes", key="cmp_tag", placeholder="optional, to filter the leaderboard")
votes = VoteStore(saved.engine, owner.id)
# An admin's leaderboard counts the whole team's votes; everyone else's, their own.
board_votes = VoteStore(votes.engine, None) if owner.signed_in and owner.is_admin else votes

# Images go with the prompt only when every column's model takes them, as Chat decides for its model.
with_images = all(takes_images(spec.provider, spec.model_id) for spec in specs)
prompt, images = submitted_prompt(
    st.chat_input(
        "One prompt for every column (attach images with +)"
        if with_images
        else "One prompt for every column",
        key="cmp_prompt_images" if with_images else "cmp_prompt",
        accept_file="multiple" if with_images else False,
        file_type=IMAGE_TYPES if with_images else None,
    )
)
prompt = suggested_prompt() or prompt
if prompt.strip() or images:
    try:
        if blind and len(specs) != 2:
            raise CompareError("Blind mode compares exactly two columns; set Columns to 2.")
        follow_up = (
            comparison is not None
            and not blind
            and not COMPARE_BLIND.get()
            and [c.spec for c in comparison.columns] == specs
        )
        if not follow_up:
            order = blind_order(specs) if blind else specs
            tools = TOOL_REGISTRY().tools
            comparison = Comparison(order, tools=tools, store=saved, blind=blind, budget=CHAT().budget)
            COMPARE_RUN.set(comparison)
        assert comparison is not None
        COMPARE_BLIND.set(blind)
        COMPARE_VOTED.pop()
        COMPARE_LAST_PROMPT.set(prompt)
        comparison.start(prompt, images)
        show_in_url(comparison)
    except (CompareError, StoreError) as error:
        st.error(str(error))

if comparison is None and first:
    draw_suggestions()
if comparison is not None:
    hidden = bool(COMPARE_BLIND.get()) and not COMPARE_VOTED.present()
    if comparison.running:
        draw_live()
    else:
        draw_columns(comparison, hidden)
        if COMPARE_BLIND.get():
            voter = owner.label if owner.signed_in else ""
            draw_vote(comparison, votes, COMPARE_LAST_PROMPT.get(""), tag.strip(), voter)

draw_leaderboard(board_votes)
draw_saved(saved, comparison.record_id if comparison is not None else None)
