"""With sign-in on, each person's limit counts their own spend, and an admin sees the team's total and
each person's spend against it on the Costs page (AppTest, with tests/ui/test_sign_in.py's patterns)."""

from __future__ import annotations

from typing import Any

from tests.budgets.scripted import MODEL
from tests.ui.test_sign_in import ANN, CAROL, _app
from yiem.budgets import Budget, BudgetStore
from yiem.identity import Owner
from yiem.store import ConversationStore, create_store_engine
from yiem.types import AssistantMessage, LlmUsage, TextContent, UsageCost, UserMessage

ADMIN = Owner(id="carol@example.com", label="Carol", is_admin=True, signed_in=True)


def _spend(db_url: str, owner: str, dollars: float) -> None:
    store = ConversationStore(create_store_engine(db_url), owner)
    found = store.create(title=f"{owner}'s chat")
    store.append_message(found.id, UserMessage.from_text("hello"))
    reply = AssistantMessage(
        content=[TextContent(text="ok")],
        provider=MODEL.provider,
        model=MODEL.id,
        usage=LlmUsage(input_tokens=5, output_tokens=1),
        cost=UsageCost(total=dollars),
    )
    store.append_message(found.id, reply, MODEL)


def _markdown(at: Any) -> str:
    return "\n".join(str(block.value) for block in at.markdown)


def _people(at: Any) -> list[dict[str, tuple[float, float]]]:
    """The per-person tables of the Budgets section, in the order of its limits."""
    frames = [df.value for df in at.dataframe if list(df.value.columns) == ["Person", "Spent", "Share"]]
    return [{p: (round(s, 6), round(share, 6)) for p, s, share in frame.values} for frame in frames]


def test_an_admin_sees_the_team_total_and_each_persons_spend_against_the_limits(db_url: str) -> None:
    _spend(db_url, "ann@example.com", 0.40)
    _spend(db_url, "bob@example.com", 0.10)
    limits = BudgetStore(create_store_engine(db_url))
    limits.set(ADMIN, Budget(scope="person", period="month", limit_usd=1.0))
    limits.set(ADMIN, Budget(scope="team", period="month", limit_usd=2.0))

    carol = _app(CAROL, admins=["carol@example.com"]).run()
    carol.switch_page("ui/pages/costs.py").run()
    assert not carol.exception, carol.exception
    # The team's limit first (its spend split by person), then each person's against their own limit.
    assert _people(carol) == [
        {"ann@example.com": (0.4, 0.8), "bob@example.com": (0.1, 0.2)},
        {"ann@example.com": (0.4, 0.4), "bob@example.com": (0.1, 0.1)},
    ]
    captions = [str(c.value) for c in carol.caption]
    assert captions.count("The team this month: $0.5000 spent by 2 people.") == 2
    assert "**The team's monthly limit**: $0.5000 of $2.00 (25%)" in _markdown(carol)

    ann = _app(ANN).run()
    ann.switch_page("ui/pages/costs.py").run()
    assert not ann.exception, ann.exception
    assert "**Each person's monthly limit (yours)**: $0.4000 of $1.00 (40%)" in _markdown(ann)
    assert _people(ann) == []  # no one else's spend
    assert not any("spent by 2 people" in str(c.value) for c in ann.caption)
