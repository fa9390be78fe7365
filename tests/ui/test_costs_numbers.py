"""How the Costs page writes money and token counts: yiem.amounts' rules, a dash when missing."""

from ui.costs.numbers import dollars, percent, seconds, tokens


def test_dollars_round_halves_up_as_on_an_invoice() -> None:
    assert dollars(0.01125) == "$0.0113"  # float noise (0.011249999…) cut before rounding
    assert dollars(1.005) == "$1.01"
    assert dollars(1234.5) == "$1,234.50"
    assert dollars(None) == "—"


def test_tokens_fit_their_card_and_missing_figures_are_dashes() -> None:
    assert tokens(9_999) == "9,999"
    assert tokens(999_999) == "1.0M"
    assert tokens(1_260_000) == "1.3M"
    assert seconds(None) == percent(None) == "—"
    assert seconds(1750) == "1.75 s"
