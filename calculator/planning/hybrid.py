"""Hybrid plan: owned capacity for a percentile of the day's hours, the overflow to a serverless API.

Owned capacity (self-hosted GPU VMs, or a dedicated endpoint) is sized for the P-th percentile hour
of the load profile: sort the 24 hours by the replicas their peak needs; P covers
``k = ceil(P / 100 x 24)`` of them fully, so the owned replica count is the k-th smallest
(P = 0: nothing owned, all serverless; P = 100: the busiest hour, no overflow). In every hour the
traffic above owned capacity (replicas x capacity x target utilisation) goes to the serverless
offer; the share of an hour above capacity follows from the within-hour shape (measured from a
trace, or a linear ramp up to the burst).

    monthly = owned (GPU hours + builds + engineer share, or endpoint hours) + overflow turns x cost per turn

:func:`hybrid_plan` prices one percentile or searches 0..100 for the cheapest, beside the three pure
options under the same profile; :meth:`HybridPlan.frame` is the data for a chart (per hour: load,
owned capacity, overflow).
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Literal

import numpy as np
import numpy.typing as npt
import pandas as pd
from pydantic import BaseModel, ConfigDict

from calculator.catalog.catalogs import Catalogs
from calculator.errors import InputError, Problem
from calculator.planning.load_profile import (
    HOURS,
    LoadProfile,
    ProfileCosts,
    costs_under_profile,
    hourly_replicas,
    owned_under_profile,
    resolve_for_profile,
)
from calculator.pricing.cheapest import with_cheapest_offers
from calculator.pricing.option import OptionCost, cents
from calculator.pricing.resolve import OwnedSide, ResolvedScenario
from calculator.scenario.model import Scenario

__all__ = ["HybridHour", "HybridPlan", "HybridResult", "hybrid_plan", "owned_replicas_at"]

Owned = Literal["self_hosted", "dedicated"]


class HybridHour(BaseModel):
    model_config = ConfigDict(frozen=True)

    hour: int
    load_rps: float
    """Mean request rate in the hour (active day)."""
    peak_rps: float
    """Busiest-moment rate in the hour (mean x burst)."""
    needed_replicas: int
    """Replicas the hour's peak needs if owned alone."""
    owned_replicas: int
    """Serving replicas up in the hour (spares not counted)."""
    owned_capacity_rps: float
    """Requests per second they take at the target utilisation."""
    overflow_rps: float
    """Mean rate sent to the serverless API in the hour."""
    served_rps: float
    """Mean rate the owned replicas serve."""


class HybridPlan(BaseModel):
    model_config = ConfigDict(frozen=True)

    percentile: float
    owned_option: Owned
    owned_replicas: int
    """Serving replicas sized for the percentile hour (0: all serverless)."""
    autoscale: bool
    owned: OptionCost | None
    owned_monthly: Decimal
    overflow_turns: int
    overflow_share: float
    """Share of the month's turns sent to the serverless API."""
    overflow_monthly: Decimal
    monthly: Decimal
    currency: str
    hours: tuple[HybridHour, ...]

    def frame(self) -> pd.DataFrame:
        """Per hour: load, owned capacity, overflow - the data a chart needs."""
        return pd.DataFrame([h.model_dump() for h in self.hours])


class HybridResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    scenario: str
    currency: str
    turns_per_month: int
    profile: LoadProfile
    owned_option: Owned
    plan: HybridPlan
    """At the percentile asked for, or the best one when none was asked."""
    best: HybridPlan
    best_percentiles: tuple[float, float]
    """The range of percentiles that all give the best (lowest) monthly cost."""
    curve: tuple[tuple[float, Decimal], ...]
    """(percentile, monthly) for 0..100."""
    pure: ProfileCosts
    notes: tuple[str, ...]
    warnings: tuple[Problem, ...] = ()

    def pure_monthly(self) -> dict[str, Decimal]:
        return {k: v.monthly for k, v in self.pure.options().items()}

    def curve_frame(self) -> pd.DataFrame:
        return pd.DataFrame({"percentile": [p for p, _ in self.curve], "monthly": [float(m) for _, m in self.curve]})


def owned_replicas_at(replicas_per_hour: npt.NDArray[np.float64], percentile: float) -> int:
    """Replicas that cover ``percentile`` % of the hours fully: the k-th smallest hour, k = ceil(P/100 x 24)."""
    if not 0 <= percentile <= 100:
        raise InputError("hybrid.percentile", f"{percentile:g} is outside 0..100")
    k = math.ceil(round(percentile / 100 * HOURS, 9))
    if k == 0:
        return 0
    return int(np.sort(np.asarray(replicas_per_hour))[k - 1])


def _plan(
    res: ResolvedScenario,
    profile: LoadProfile,
    setup: OwnedSide,
    pure: ProfileCosts,
    needed: npt.NDArray[np.float64],
    percentile: float,
    owned_kind: Owned,
    autoscale: bool,
) -> HybridPlan:
    scenario = res.scenario
    turns = pure.turns_per_month
    util = scenario.self_hosting.target_utilisation
    owned_n = owned_replicas_at(needed, percentile)
    load = profile.hourly_rps(turns)
    peak = profile.hourly_peak_rps(turns)
    scale_down = autoscale and owned_kind == "self_hosted"
    serving = np.minimum(needed, owned_n) if scale_down else np.full(HOURS, float(owned_n))
    hours: list[HybridHour] = []
    overflow_day = 0.0
    for h in range(HOURS):
        capacity = float(serving[h]) * setup.capacity.requests_per_s * util
        share = 0.0 if needed[h] <= serving[h] else profile.overflow_share(float(load[h]), capacity)
        overflow_day += float(load[h]) * 3600 * share
        hours.append(
            HybridHour(
                hour=h,
                load_rps=float(load[h]),
                peak_rps=float(peak[h]),
                needed_replicas=int(needed[h]),
                owned_replicas=int(serving[h]),
                owned_capacity_rps=capacity,
                overflow_rps=float(load[h]) * share,
                served_rps=float(load[h]) * (1 - share),
            )
        )
    overflow_turns = turns if owned_n == 0 else min(turns, round(overflow_day * profile.active_days_per_month))
    # the owned part
    owned: OptionCost | None
    if owned_n == 0:
        owned = None
    else:
        # an endpoint is always on at the owned size; self-hosted GPUs follow the hours when autoscaled
        owned, _ = owned_under_profile(res, setup, profile, serving, not scale_down, turns - overflow_turns)
    owned_monthly = owned.monthly if owned else Decimal(0)
    # the overflow, priced per turn on the serverless offer
    serverless = pure.serverless
    if overflow_turns == 0:
        overflow_monthly = Decimal(0)
    elif serverless is None:
        raise InputError(
            "scenario",
            "a hybrid plan needs a serverless offer for the overflow (serverless:)",
            code="hybrid_needs_serverless",
        )
    elif overflow_turns == turns:
        overflow_monthly = serverless.monthly
    else:
        assert serverless.cost_per_1000_turns is not None
        storage = serverless.breakdown.get("cache_storage", Decimal(0))
        overflow_monthly = cents(serverless.cost_per_1000_turns * overflow_turns / 1000 + storage)
    return HybridPlan(
        percentile=percentile,
        owned_option=owned_kind,
        owned_replicas=owned_n,
        autoscale=scale_down,
        owned=owned,
        owned_monthly=owned_monthly,
        overflow_turns=overflow_turns,
        overflow_share=overflow_turns / turns if turns else 0.0,
        overflow_monthly=overflow_monthly,
        monthly=owned_monthly + overflow_monthly,
        currency=scenario.currency,
        hours=tuple(hours),
    )


def hybrid_plan(
    scenario: Scenario,
    cat: Catalogs,
    profile: LoadProfile,
    percentile: float | None = None,
    owned: Owned = "self_hosted",
    autoscale: bool | None = None,
    turns_per_month: int | None = None,
) -> HybridResult:
    """Owned capacity for a percentile hour plus serverless overflow; searches 0..100 for the cheapest.

    ``percentile`` None: the plan shown is the best. ``autoscale`` None: the scenario's choice
    (self-hosted only; a dedicated endpoint is always on).
    """
    scenario = with_cheapest_offers(scenario, cat)[0]  # 'cheapest' picked for the scenario as given, then held
    if scenario.serverless is None:
        raise InputError(
            "scenario",
            "a hybrid plan needs a serverless offer for the overflow (serverless:)",
            code="hybrid_needs_serverless",
        )
    if percentile is not None and not 0 <= percentile <= 100:
        raise InputError("hybrid.percentile", f"{percentile:g} is outside 0..100")
    res = resolve_for_profile(scenario, cat, profile, turns_per_month)
    setup = res.owned(owned)
    if setup is None:
        what = "gpu_vm" if owned == "self_hosted" else "dedicated"
        raise InputError(
            "scenario",
            f"a hybrid plan owning {owned.replace('_', '-')} capacity needs a {what}: offer",
            code=f"hybrid_needs_{owned}",
        )
    scale = scenario.self_hosting.autoscale if autoscale is None else autoscale
    turns = res.scenario.traffic.turns_per_month
    pure = costs_under_profile(res, profile, scale, turns)
    needed = hourly_replicas(profile, turns, setup.capacity.requests_per_s, scenario.self_hosting.target_utilisation)
    cache: dict[int, HybridPlan] = {}
    curve: list[tuple[float, Decimal]] = []
    plans: dict[float, HybridPlan] = {}
    for p in range(101):
        n = owned_replicas_at(needed, p)
        if n not in cache:
            cache[n] = _plan(res, profile, setup, pure, needed, float(p), owned, scale)
        plans[float(p)] = cache[n].model_copy(update={"percentile": float(p)})
        curve.append((float(p), cache[n].monthly))
    low = min(m for _, m in curve)
    ties = [p for p, m in curve if m == low]
    best = plans[ties[0]]
    chosen = best if percentile is None else _plan(res, profile, setup, pure, needed, percentile, owned, scale)
    notes = [
        f"profile {profile.name}: {profile.source}; peak-to-average {profile.peak_to_average:.2f} "
        f"(busiest hour {float(profile.hourly_factors.max()):.2f}x the day's mean, burst {profile.burst:.2f})",
        "owned capacity is sized for the percentile hour's peak; traffic above it in any hour goes to "
        "the serverless offer (the share above capacity from the within-hour shape: "
        + ("measured" if profile.within_hour is not None else "a linear ramp to the burst, an assumption")
        + ")",
    ]
    if owned == "dedicated":
        notes.append("the dedicated endpoint is always on (billed 730 h a month) at the owned size")
    elif scale:
        notes.append("owned GPUs scale down to the hour's need below the owned size (autoscaled)")
    notes.extend(profile.notes)
    return HybridResult(
        scenario=scenario.name,
        currency=scenario.currency,
        turns_per_month=turns,
        profile=profile,
        owned_option=owned,
        plan=chosen,
        best=best,
        best_percentiles=(ties[0], ties[-1]),
        curve=tuple(curve),
        pure=pure,
        notes=tuple(notes),
        warnings=pure.warnings,
    )
