"""The Costs page: what did this cost, where, and why. Figures come from yiem.costs (SQL).

It reads top to bottom: the URL and state, then the data, then the drawing (parts in ui/costs/).
"""

from __future__ import annotations

import time
from dataclasses import replace

import streamlit as st

from ui.bootstrap import owner, store_engine
from ui.costs.budgets import draw_budgets
from ui.costs.charts import draw_charts
from ui.costs.empty import draw_empty_store
from ui.costs.filters import choose_conversation, read_view
from ui.costs.headline import draw_headline
from ui.costs.tables import (
    draw_breakdown,
    draw_conversations_table,
    draw_models_table,
    draw_prices,
    draw_tool_calls,
)
from ui.state import costs_tab
from yiem import costs
from yiem.providers.catalog import ModelsFileError, get_model
from yiem.store import database_url

TOP_CONVERSATIONS = 15

st.title("Costs")

# The URL and state: the store, whose usage (each person their own; an admin may take the whole
# team's), and the filters (each bound to the URL, so a view can be shared).
url = database_url()
engine = store_engine(url)
person = owner()
team = person.signed_in and person.is_admin and st.toggle("The whole team", value=True, key="costs_team")
scope = None if team else person.id
stored = costs.data_range(engine, costs.UsageFilter(owner=scope))
if stored is None:
    draw_empty_store(engine, person.id)
    draw_budgets(engine, person)  # a limit can be set before anything is spent
    st.stop()
draw_budgets(engine, person)  # the spending limits and their burn-down, whatever the filters below
view = read_view(url, stored, now_ms=int(time.time() * 1000), owner=scope)
usage_filter = replace(view.base, conversation_id=view.conversation)

# The data: one dashboard query for the view; its top conversations are the conversation filter's choices.
data = costs.dashboard(engine, usage_filter, view.tz, top_filter=view.base)
choose_conversation(engine, view, data.top_conversations)
now = data.headline.current.totals
if now.requests == 0:
    st.info("No requests match these filters in this period. Widen the period or clear a filter.")
    st.stop()
model_rows = data.summary.breakdown("model")
tool_rows = costs.tool_costs(engine, usage_filter)  # charged to MCP tools and servers (usage.tool)
top = [r for r in data.top_conversations if view.conversation in (None, r.conversation_id)]
top = top[:TOP_CONVERSATIONS] if top else costs.top_conversations(engine, usage_filter, 1)
price_error: ModelsFileError | None = None
try:
    listed = [get_model(r.key.split("/", 1)[0], r.label) for r in model_rows]
except ModelsFileError as error:
    price_error, listed = error, []

# The drawing.
draw_headline(data.headline)
if data.estimated_requests:
    # Stopped replies: the provider never said what they used, so their tokens are estimated.
    st.caption(
        f"≈ {data.estimated_requests:,} of these requests were replies stopped mid-stream: their "
        "tokens and cost are estimates (the `estimated` column of the CSV)."
    )
draw_charts(data.summary, view.tz)
names = ["By model", "By provider", "By conversation", "By tool call", "By stop reason", "Prices"]
by_model, by_provider, by_conversation, by_tool, by_stop, prices, *by_person = st.tabs(
    [*names, "By person"] if team else names,
    default="By person" if team else None,
    key=costs_tab(team).name,
    on_change="rerun",
)
with by_model:
    draw_models_table(model_rows)
with by_provider:
    draw_breakdown(data.summary.breakdown("provider"), "Provider", "provider")
with by_conversation:
    draw_conversations_table(top, TOP_CONVERSATIONS)
with by_tool:
    draw_tool_calls(tool_rows)
with by_stop:
    draw_breakdown(data.summary.breakdown("stop_reason"), "Stop reason", "stop_reason")
with prices:
    if price_error is not None:
        st.error(f"The models file could not be read, so prices cannot be shown: {price_error}")
    draw_prices(listed)
for tab in by_person:  # the team's costs per person (an admin's view only)
    with tab:
        draw_breakdown(data.summary.breakdown("owner"), "Person", "owner")
st.download_button(
    f"Download the {now.requests:,} filtered requests (CSV)",
    lambda: "".join(costs.iter_csv(engine, usage_filter)),
    file_name="usage.csv",
    mime="text/csv",
    key="csv_rows",
    icon=":material/download:",
)
