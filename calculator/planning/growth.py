"""Growth: traffic compounding month by month, and what each way to buy costs along the way.

Month 1 carries the starting volume; month m carries ``start x (1 + g)^(m - 1)`` turns (whole turns).
Each option's monthly cost comes from the same array functions ``compare`` uses (``cost_curves``),
so at 0% growth every month reproduces the ``compare`` result, and the months in which the cheapest
option changes are where ``compare``'s crossings say (the first month whose volume is past the
crossing). Also: the first month each option is cheapest, the month from which one stays cheapest,
and the cumulative spend of each. :meth:`GrowthPlan.frame` is the data for one chart.
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import numpy.typing as npt
import pandas as pd
from pydantic import BaseModel, ConfigDict

from calculator.catalog.limits import TURNS_PER_MONTH
from calculator.errors import InputError
from calculator.pricing.cheapest import with_cheapest_offers
from calculator.pricing.compare import OPTION_LABELS, Catalogs, cost_curves, crossings
from calculator.pricing.option import cents
from calculator.scenario.model import Scenario

__all__ = ["MAX_MONTHS", "MIN_MONTHS", "CrossingMonth", "GrowthMonth", "GrowthPlan", "grow", "month_volumes"]

MIN_MONTHS, MAX_MONTHS = 12, 36


class GrowthMonth(BaseModel):
    model_config = ConfigDict(frozen=True)

    month: int
    turns_per_month: int
    monthly: dict[str, Decimal]
    cumulative: dict[str, Decimal]
    cheapest: str


class CrossingMonth(BaseModel):
    """A volume where two options swap places (compare's crossing) and the month traffic passes it."""

    model_config = ConfigDict(frozen=True)

    a: str
    b: str
    turns_per_month: float
    cheaper_after: str
    month: int
    """First month whose volume is past the crossing."""


class GrowthPlan(BaseModel):
    model_config = ConfigDict(frozen=True)

    scenario: str
    currency: str
    months: int
    growth_per_month: float
    start_turns_per_month: int
    rows: tuple[GrowthMonth, ...]
    becomes_cheapest: dict[str, int | None]
    """First month each option is the cheapest (None: never within the horizon)."""
    stays_cheapest: tuple[str, int] | None
    """(option, month): the option cheapest in the last month is cheapest from this month on."""
    crossings: tuple[CrossingMonth, ...]
    totals: dict[str, Decimal]
    """Cumulative spend over the horizon."""
    notes: tuple[str, ...]

    def frame(self) -> pd.DataFrame:
        """Long format for one chart: month, turns, option, monthly, cumulative, cheapest."""
        return pd.DataFrame(
            [
                {
                    "month": r.month,
                    "turns_per_month": r.turns_per_month,
                    "option": name,
                    "label": OPTION_LABELS.get(name, name),
                    "monthly": float(r.monthly[name]),
                    "cumulative": float(r.cumulative[name]),
                    "cheapest": r.cheapest == name,
                }
                for r in self.rows
                for name in r.monthly
            ]
        )


def month_volumes(start: int, growth_per_month: float, months: int) -> npt.NDArray[np.float64]:
    """Whole turns per month, month 1 = ``start``, compounding at ``growth_per_month``."""
    if not MIN_MONTHS <= months <= MAX_MONTHS:
        raise InputError("growth.months", f"{months} is outside {MIN_MONTHS}..{MAX_MONTHS}")
    if not -0.5 <= growth_per_month <= 1:
        raise InputError("growth.growth_per_month", f"{growth_per_month:g} is outside -0.5..1 (0.05 = 5% a month)")
    TURNS_PER_MONTH.check(start, "growth.start_turns_per_month")
    volumes = np.round(start * (1 + growth_per_month) ** np.arange(months))
    if volumes.max() > TURNS_PER_MONTH.high:  # every month is a month: the same bound as the scenario's
        raise InputError(
            "growth.growth_per_month",
            f"{start:,} turns growing {growth_per_month:+.1%} a month reach {volumes.max():,.0f} by month "
            f"{int(volumes.argmax()) + 1}, more than {TURNS_PER_MONTH.high:,} turns a month: {TURNS_PER_MONTH.why}",
            f"at most {TURNS_PER_MONTH.high:,} turns in any month",
        )
    return volumes


def _money(x: float) -> Decimal:
    return cents(Decimal(repr(float(x))))


def grow(
    scenario: Scenario,
    cat: Catalogs,
    months: int = 24,
    growth_per_month: float = 0.05,
    start_turns_per_month: int | None = None,
) -> GrowthPlan:
    """Per month, the cost of each option the scenario chose under compounding growth."""
    scenario = with_cheapest_offers(scenario, cat)[0]  # 'cheapest' picked for the scenario as given, then held
    if not (scenario.serverless or scenario.dedicated or scenario.gpu_vm):
        raise InputError("scenario", "choose at least one option: serverless, dedicated or gpu_vm", code="no_option")
    start = scenario.traffic.turns_per_month if start_turns_per_month is None else start_turns_per_month
    volumes = month_volumes(start, growth_per_month, months)
    curves = cost_curves(scenario, cat)
    names = list(curves)
    values = {n: np.asarray(curves[n](volumes.astype(np.float64))) for n in names}
    rows: list[GrowthMonth] = []
    running = dict.fromkeys(names, Decimal(0))
    winners: list[str] = []
    for i, v in enumerate(volumes):
        monthly = {n: _money(values[n][i]) for n in names}
        for n in names:
            running[n] += monthly[n]
        cheapest = min(names, key=lambda n: (monthly[n], names.index(n)))
        winners.append(cheapest)
        rows.append(
            GrowthMonth(
                month=i + 1, turns_per_month=int(v), monthly=monthly, cumulative=dict(running), cheapest=cheapest
            )
        )
    becomes = {n: next((i + 1 for i, w in enumerate(winners) if w == n), None) for n in names}
    last = winners[-1]
    k = len(winners)
    while k > 1 and winners[k - 2] == last:
        k -= 1
    stays = (last, k)
    found: list[CrossingMonth] = []
    lo, hi = float(volumes.min()), float(volumes.max())
    if hi > lo and len(names) > 1:
        # compare's own crossings (same grid and range), kept where the horizon's volumes pass them
        for c in crossings(curves)[0]:
            if not lo < c.turns_per_month <= hi:
                continue
            past = volumes >= c.turns_per_month if growth_per_month > 0 else volumes < c.turns_per_month
            idx = np.nonzero(past)[0]
            if len(idx):
                found.append(
                    CrossingMonth(
                        a=c.a,
                        b=c.b,
                        turns_per_month=c.turns_per_month,
                        cheaper_after=c.cheaper_above
                        if growth_per_month > 0
                        else (c.b if c.cheaper_above == c.a else c.a),
                        month=int(idx[0]) + 1,
                    )
                )
    notes = [
        f"month 1 = {start:,} turns, {growth_per_month:+.1%} a month compounded: month {months} = {int(volumes[-1]):,}",
        "GPU options are steps: each step is a replica (or instance) added when the peak needs it",
    ]
    if scenario.self_hosting.autoscale:
        notes.append("self-hosting autoscaled over the scenario's active hours")
    return GrowthPlan(
        scenario=scenario.name,
        currency=scenario.currency,
        months=months,
        growth_per_month=growth_per_month,
        start_turns_per_month=start,
        rows=tuple(rows),
        becomes_cheapest=becomes,
        stays_cheapest=stays,
        crossings=tuple(found),
        totals=dict(running),
        notes=tuple(notes),
    )
