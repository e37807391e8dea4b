"""The currency a turn pair or a cache-lifetime advice is shown in, apart from the charts so the command line
shows it without them."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from decimal import Decimal
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from calculator.pricing.ttl import TtlAdvice
    from calculator.pricing.turn import TurnComparison
    from calculator.scenario.model import Scenario

__all__ = ["ttl_advice_in", "turn_currency"]


def turn_currency(turn: TurnComparison, scenario: Scenario | None = None) -> tuple[str, Callable[[Decimal], Decimal]]:
    """The currency a turn pair is shown in and the conversion into it: the scenario's at its exchange rate,
    or without a scenario the sheet's own. A turn is priced in its sheet's currency; shown beside the
    scenario's monthly totals it must be in theirs."""
    if scenario is None:
        return turn.price.currency, lambda amount: amount
    src, dst, fx = turn.price.currency, scenario.currency, scenario.fx
    return dst, lambda amount: fx.convert(amount, src, dst)


def ttl_advice_in(advice: TtlAdvice, scenario: Scenario | None) -> tuple[str, TtlAdvice]:
    """The currency a cache-lifetime advice is shown in (the scenario's; without one, its sheet's) and the
    advice with every price and cost in it. Which lifetime is cheaper does not move: every amount is scaled
    alike."""
    src = advice.price.currency
    if scenario is None or scenario.currency == src:
        return src, advice
    dst, fx = scenario.currency, scenario.fx

    def price(amount: Decimal) -> Decimal:
        return fx.convert(amount, src, dst)

    factor = fx.factor(src, dst)
    outcomes = tuple(
        dataclasses.replace(
            o,
            write_price=price(o.write_price),
            read_price=price(o.read_price),
            cost_per_session=o.cost_per_session * factor,
            cost_per_month=o.cost_per_month * factor,
        )
        for o in advice.outcomes
    )
    return dst, dataclasses.replace(
        advice,
        input_price=price(advice.input_price),
        no_cache_cost_per_session=advice.no_cache_cost_per_session * factor,
        no_cache_cost_per_month=advice.no_cache_cost_per_month * factor,
        outcomes=outcomes,
    )
