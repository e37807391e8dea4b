"""The currency a turn pair is shown in, apart from the charts so the command line shows it without them."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from calculator.pricing.turn import TurnComparison
    from calculator.scenario.model import Scenario

__all__ = ["turn_currency"]


def turn_currency(turn: TurnComparison, scenario: Scenario | None = None) -> tuple[str, Callable[[Decimal], Decimal]]:
    """The currency a turn pair is shown in and the conversion into it: the scenario's at its exchange rate,
    or without a scenario the sheet's own. A turn is priced in its sheet's currency; shown beside the
    scenario's monthly totals it must be in theirs."""
    if scenario is None:
        return turn.price.currency, lambda amount: amount
    src, dst, fx = turn.price.currency, scenario.currency, scenario.fx
    return dst, lambda amount: fx.convert(amount, src, dst)
