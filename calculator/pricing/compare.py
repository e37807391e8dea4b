"""A scenario compared across the three ways to buy: monthly costs, the cheapest, and break-even.

Each option becomes a function of monthly volume (turns per month) over numpy arrays; the exact
figures, the charts and the break-even search all come from those same functions. GPU options
are step functions, so two options can cross more than once: every crossing is reported, and
the volume above which an option stays cheapest.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field

from calculator.catalog.catalogs import Catalogs, load_catalogs
from calculator.catalog.prices import DedicatedOffer, GpuVmOffer
from calculator.errors import InputError, Problem
from calculator.pricing.billing import (
    dedicated_monthly_array,
    dedicated_option,
    self_hosted_monthly_array,
    self_hosted_option,
)
from calculator.pricing.option import OptionCost
from calculator.pricing.resolve import OPTION_LABELS, OwnedSide, ResolvedScenario, resolve
from calculator.pricing.serverless import serverless_monthly_array, serverless_option, storage_monthly
from calculator.pricing.turn import TurnComparison, TurnShape, compare_turn
from calculator.scenario.model import Scenario

if TYPE_CHECKING:  # imported where used: only an estimated option needs the calibration cases
    from calculator.capacity.calibration import EstimateError

__all__ = [
    "Catalogs",
    "Comparison",
    "CostRange",
    "Crossing",
    "CrossingRange",
    "EstimateRange",
    "OPTION_LABELS",
    "break_even_by_prefix_share",
    "compare",
    "cost_curves",
    "crossing_runs",
    "crossings",
    "curves",
    "estimate_range",
    "is_estimated",
    "load_catalogs",
    "owned_options",
    "without_unpriceable",
]

Arr = npt.NDArray[np.float64]
CostFn = Callable[[Arr], Arr]
VOLUME_RANGE = (1e3, 1e10)


class Crossing(BaseModel):
    model_config = ConfigDict(frozen=True)

    a: str
    b: str
    turns_per_month: float
    cheaper_above: str
    """Which of the two is cheaper just above this volume."""


class CostRange(BaseModel):
    """An estimated option's monthly cost over the roofline's hold-out error band."""

    model_config = ConfigDict(frozen=True)

    option: str
    low: Decimal
    high: Decimal
    currency: str


class CrossingRange(BaseModel):
    """Where two options swap places, over the error band: the lowest and highest such volume."""

    model_config = ConfigDict(frozen=True)

    a: str
    b: str
    low_turns_per_month: float
    high_turns_per_month: float


class EstimateRange(BaseModel):
    """The comparison redone with every roofline-estimated option's capacity at both ends of the estimate's
    leave-one-source-out error band for its family (:mod:`calculator.capacity.error_bands`)."""

    model_config = ConfigDict(frozen=True)

    costs: tuple[CostRange, ...]
    crossings: tuple[CrossingRange, ...]
    cheapest: tuple[str, ...]
    """Every option that is cheapest somewhere in the band (the point estimate's first)."""
    low_factor: float
    high_factor: float
    provenance: str

    @property
    def cheapest_changes(self) -> bool:
        return len(self.cheapest) > 1


class Comparison(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    scenario: Scenario
    as_of: dt.date
    turn: TurnComparison | None
    options: tuple[OptionCost, ...]
    cheapest: str | None
    crossings: tuple[Crossing, ...]
    stays_cheapest: tuple[str, float] | None
    """(option, volume): above this monthly volume the option is cheapest all the way to 10^10 turns."""
    warnings: tuple[Problem, ...]
    resolved: Any = Field(default=None, exclude=True, repr=False)
    """The :class:`ResolvedScenario` priced here, so charts and the PDF read the same setup."""
    estimate_range: EstimateRange | None = None
    """When an owned option is sized by the roofline estimate: its cost and the break-evens over the
    estimate's error band (None when every option rests on a measurement)."""

    def option(self, name: str) -> OptionCost | None:
        return next((o for o in self.options if o.option == name), None)

    @property
    def resolution(self) -> ResolvedScenario:
        assert isinstance(self.resolved, ResolvedScenario)
        return self.resolved


def without_unpriceable(scenario: Scenario, cat: Catalogs) -> tuple[Scenario, list[tuple[str, InputError]]]:
    """The scenario less the options that cannot be priced as set, and why each was left out.

    An offer with no price version on the price date, or a GPU setup that cannot hold the model, is
    an answer about that option, not a reason to refuse the others.
    """
    res = resolve(scenario, cat, drop_unpriceable=True)
    return res.scenario, list(res.dropped)


def _owned_cost(res: ResolvedScenario, side: OwnedSide) -> OptionCost:
    """The exact monthly bill of one owned option under the scenario's traffic."""
    s = res.scenario
    profile = s.evidence.load_profile
    if isinstance(side.offer, GpuVmOffer):
        cost = self_hosted_option(
            side.sheet, side.offer, res.as_of, side.record, s.self_hosting, s.traffic, side.capacity, s.currency, s.fx,
            profile,
        )  # fmt: skip
    else:
        cost = dedicated_option(
            side.sheet, side.offer, res.as_of, side.record, s.self_hosting, s.traffic, side.capacity, s.currency, s.fx,
            profile,
        )  # fmt: skip
    return cost.model_copy(update={"model": side.model})


def owned_options(res: ResolvedScenario) -> dict[str, OptionCost]:
    """The dedicated endpoint and self-hosted GPUs the scenario chose, billed for its month."""
    return {side.kind: _owned_cost(res, side) for side in (res.dedicated, res.self_hosted) if side is not None}


def curves(res: ResolvedScenario) -> dict[str, CostFn]:
    """Monthly cost of each chosen option as a function of turns per month (numpy arrays)."""
    s = res.scenario
    as_of, currency, fx, hosting, traffic = res.as_of, s.currency, s.fx, s.self_hosting, s.traffic
    profile = s.evidence.load_profile
    found: dict[str, CostFn] = {}
    if res.serverless and s.serverless:
        side, choice = res.serverless, s.serverless
        storage = storage_monthly(
            side.offer, side.version, side.shape, choice.distinct_prefixes, choice.prefix_hold_hours
        )
        storage_f = float(storage or 0)
        factor = fx.factor(side.sheet.currency, currency)
        found["serverless"] = lambda v: serverless_monthly_array(side.offer, as_of, side.shape, v, factor, storage_f)
    if res.dedicated:
        d = res.dedicated
        assert isinstance(d.offer, DedicatedOffer)
        d_offer, d_cap, d_factor = d.offer, d.capacity.requests_per_s, fx.factor(d.sheet.currency, currency)
        found["dedicated"] = lambda v: dedicated_monthly_array(
            d_offer, as_of, d.replica_gpus, hosting, traffic, d_cap, v, d_factor, profile
        )
    if res.self_hosted:
        g = res.self_hosted
        assert isinstance(g.offer, GpuVmOffer)
        g_offer, g_cap, g_factor = g.offer, g.capacity.requests_per_s, fx.factor(g.sheet.currency, currency)
        people = float(hosting.engineer_monthly_cost) * hosting.engineer_share
        found["self_hosted"] = lambda v: self_hosted_monthly_array(
            g_offer, as_of, g.replica_gpus, hosting, traffic, g_cap, v, g_factor, people, profile
        )
    return found


def cost_curves(scenario: Scenario, cat: Catalogs, shape: TurnShape | None = None) -> dict[str, CostFn]:
    """:func:`curves` for a scenario (with another turn shape, if given), resolved here."""
    if shape is not None:
        scenario = scenario.model_copy(update={"workload": shape})
    return curves(resolve(scenario, cat))


def crossings(
    curves: dict[str, CostFn], lo: float = VOLUME_RANGE[0], hi: float = VOLUME_RANGE[1], points: int = 4001
) -> tuple[list[Crossing], tuple[str, float] | None]:
    """Every volume where two options swap places, and where the last winner starts to stay cheapest."""
    names = list(curves)
    grid = np.geomspace(lo, hi, points)
    values = {n: curves[n](grid) for n in names}
    found: list[Crossing] = []

    def refine(fn: Callable[[np.ndarray], np.ndarray], left: float, right: float) -> float:
        # fn(left) is False, fn(right) is True. Each round prices 257 volumes between them in one array
        # call (as cheap as two single volumes: the curves are numpy) and keeps the first step from False
        # to True, so four rounds reach a relative 1e-9 where a bisection took ~22 pairs of calls.
        while right / left - 1 >= 1e-9:
            inner = np.geomspace(left, right, 257)
            inner[0], inner[-1] = left, right
            ok = fn(inner)
            ok[0], ok[-1] = False, True
            j = int(np.argmax(ok[1:] & ~ok[:-1]))
            if inner[j + 1] >= right and inner[j] <= left:
                break  # no float strictly between: the bracket cannot shrink further
            left, right = float(inner[j]), float(inner[j + 1])
        return right

    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            diff = values[a] - values[b]
            sign = np.sign(diff)
            # a tie exactly on a grid point belongs to the side before it, so the swap is still seen
            nonzero = np.where(sign != 0, np.arange(len(sign)), 0)
            sign = sign[np.maximum.accumulate(nonzero)]
            for k in np.nonzero(sign[1:] * sign[:-1] < 0)[0]:
                a_cheaper_after = bool(diff[k + 1] < 0)

                def past(v: np.ndarray, a: str = a, b: str = b, s: bool = a_cheaper_after) -> np.ndarray:
                    d = curves[a](v) - curves[b](v)
                    return np.asarray(((d < 0) == s) & (d != 0))

                volume = refine(past, float(grid[k]), float(grid[k + 1]))
                found.append(Crossing(a=a, b=b, turns_per_month=volume, cheaper_above=a if a_cheaper_after else b))
    found.sort(key=lambda c: c.turns_per_month)
    stays: tuple[str, float] | None = None
    if names:
        stack = np.vstack([values[n] for n in names])
        best = np.argmin(stack, axis=0)
        winner = names[int(best[-1])]
        changes = np.nonzero(best != best[-1])[0]
        if len(changes) == 0:
            stays = (winner, lo)
        else:
            last = [c.turns_per_month for c in found if c.cheaper_above == winner]
            stays = (winner, max(last) if last else float(grid[changes[-1] + 1]))
    return found, stays


def crossing_runs(crossings: Sequence[Crossing]) -> list[tuple[Crossing, ...]]:
    """The break-even volumes (in volume order, as :func:`crossings` gives them) with each pair of options'
    crossings together, at the place of its first: a pair whose replica steps make it swap places again and
    again (the API against GPUs billed per replica, two GPU options a few replicas apart) is one run, which
    the front ends say once, by its range and which of the two stays cheaper above it."""
    by_pair: dict[tuple[str, str], list[Crossing]] = {}
    for c in crossings:
        by_pair.setdefault((c.a, c.b), []).append(c)
    runs: list[tuple[Crossing, ...]] = []
    for c in crossings:
        run = by_pair.pop((c.a, c.b), None)
        if run is not None:
            runs.append(tuple(run))
    return runs


def is_estimated(side: OwnedSide) -> bool:
    """Whether the side is sized by the roofline alone (no measurement behind it)."""
    return side.record.engine == "roofline estimate"


def _with_capacity_factor(res: ResolvedScenario, factor: float) -> ResolvedScenario:
    # an estimate ``factor`` times the truth means the replica really serves capacity / factor
    def scaled(side: OwnedSide | None) -> OwnedSide | None:
        if side is None or not is_estimated(side):
            return side
        capacity = side.capacity.model_copy(update={"requests_per_s": side.capacity.requests_per_s / factor})
        return dataclasses.replace(side, capacity=capacity)

    return dataclasses.replace(res, dedicated=scaled(res.dedicated), self_hosted=scaled(res.self_hosted))


def _stored_band(res: ResolvedScenario, side: OwnedSide) -> EstimateError:
    """The roofline's leave-one-source-out band for the estimated side's family (dense or mixture-of-experts, its
    GPU's architecture; the estimate prices vLLM), read from the file ``make data`` writes."""
    from calculator.capacity.error_bands import Family, load_error_bands  # here: only an estimate reads the bands

    spec = res.catalogs.models.find(side.record.model) if side.record.model else None
    moe = spec.is_moe if spec is not None else False
    return load_error_bands().band("roofline", Family.of(moe, side.record.gpu or "", "vllm"))


def estimate_range(
    res: ResolvedScenario, point: Comparison, error: EstimateError | None = None
) -> EstimateRange | None:
    """The estimated options' monthly costs and the break-even volumes at both ends of the error band.

    Each end prices the month again with the estimated replicas' capacity divided by the band's factor
    (1 + the signed hold-out error), so replica steps and spares are counted as the point estimate counts
    them; measured options stay as they are."""
    owned = [side for side in (res.dedicated, res.self_hosted) if side is not None and is_estimated(side)]
    if not owned:
        return None
    band = error or _stored_band(res, owned[0])
    ends = [_with_capacity_factor(res, f) for f in (band.low_factor, band.high_factor)]
    priced = [owned_options(end) for end in ends]
    costs = []
    for side in owned:
        values = [p[side.kind].monthly for p in priced]
        base = point.option(side.kind)
        if base is not None:
            values.append(base.monthly)
        costs.append(CostRange(option=side.kind, low=min(values), high=max(values), currency=res.scenario.currency))
    spans: dict[tuple[str, str], list[float]] = {}
    for found in [list(point.crossings)] + [crossings(curves(end))[0] for end in ends]:
        for c in found:
            spans.setdefault((c.a, c.b), []).append(c.turns_per_month)
    cheapest = [point.cheapest] if point.cheapest else []
    for p in priced:
        monthly = {o.option: o.monthly for o in point.options} | {k: v.monthly for k, v in p.items()}
        if monthly:
            name = min(monthly, key=lambda k: monthly[k])
            if name not in cheapest:
                cheapest.append(name)
    return EstimateRange(
        costs=tuple(costs),
        crossings=tuple(
            CrossingRange(a=a, b=b, low_turns_per_month=min(v), high_turns_per_month=max(v))
            for (a, b), v in spans.items()
        ),
        cheapest=tuple(cheapest),
        low_factor=band.low_factor,
        high_factor=band.high_factor,
        provenance=band.provenance,
    )


def compare(
    scenario: Scenario | ResolvedScenario, cat: Catalogs | None = None, *, error: EstimateError | None = None
) -> Comparison:
    """Price every chosen option for the scenario's month, then find break-even volumes."""
    if isinstance(scenario, ResolvedScenario):
        res = scenario
    else:
        if cat is None:
            raise TypeError("compare(scenario, catalogs): give the catalogues, or a resolved scenario")
        if not (scenario.serverless or scenario.dedicated or scenario.gpu_vm):
            raise InputError(
                "scenario", "choose at least one option: serverless, dedicated or gpu_vm", code="no_option"
            )
        res = resolve(scenario, cat)
    s = res.scenario
    options: list[OptionCost] = []
    turn = None
    if res.serverless and s.serverless:
        side = res.serverless
        turn = compare_turn(side.sheet, side.offer, res.as_of, side.shape)
        options.append(
            serverless_option(
                side.sheet,
                side.offer,
                res.as_of,
                side.shape,
                s.traffic,
                s.currency,
                s.fx,
                s.serverless.distinct_prefixes,
                s.serverless.prefix_hold_hours,
            )  # fmt: skip
        )
    options.extend(owned_options(res).values())
    cheapest = min(options, key=lambda o: o.monthly).option if options else None
    found, stays = crossings(curves(res))
    point = Comparison(
        scenario=s,
        as_of=res.as_of,
        turn=turn,
        options=tuple(options),
        cheapest=cheapest,
        crossings=tuple(found),
        stays_cheapest=stays,
        warnings=res.warnings,
        resolved=res,
    )
    band = estimate_range(res, point, error)
    return point if band is None else point.model_copy(update={"estimate_range": band})


def break_even_by_prefix_share(
    scenario: Scenario, cat: Catalogs, shares: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 0.9, 0.95)
) -> list[tuple[float, list[Crossing], tuple[str, float] | None]]:
    """How the crossings move with the prefix share (the seeds' deciding number)."""
    rows = []
    for share in shares:
        shape = scenario.workload.model_copy(update={"prefix_share": Decimal(str(share))})
        found, stays = crossings(cost_curves(scenario, cat, shape))
        rows.append((share, found, stays))
    return rows
