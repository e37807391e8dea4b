"""A scenario compared across the three ways to buy: monthly costs, the cheapest, and break-even.

Each option becomes a function of monthly volume (turns per month) over numpy arrays; the exact
figures, the charts and the break-even search all come from those same functions. GPU options
are step functions, so two options can cross more than once: every crossing is reported, and
the volume above which an option stays cheapest.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict

from calculator.capacity.sizing import (
    ReplicaCapacity,
    best_under_target,
    check_usable,
    estimate_record,
    replica_capacity,
)
from calculator.catalog.gpus import GpuCatalog, load_gpu_specs
from calculator.catalog.measurements import RecordCatalog, ThroughputRecord, comparable, load_records
from calculator.catalog.models import ModelCatalog, load_model_specs
from calculator.catalog.prices import (
    DedicatedOffer,
    GpuVmOffer,
    PriceCatalog,
    PriceSheet,
    ServerlessOffer,
    canonical_model,
)
from calculator.errors import InputError
from calculator.pricing.billing import (
    OptionCost,
    dedicated_monthly_array,
    dedicated_option,
    self_hosted_monthly_array,
    self_hosted_option,
    serverless_monthly_array,
    serverless_option,
    storage_monthly,
)
from calculator.pricing.turn import TurnComparison, TurnShape, compare_turn
from calculator.scenario.inputs import LatencyTarget
from calculator.scenario.model import Scenario

__all__ = [
    "Catalogs",
    "Comparison",
    "Crossing",
    "OPTION_LABELS",
    "compare",
    "cost_curves",
    "crossings",
    "load_catalogs",
    "owned_capacity",
    "without_unpriceable",
]

Arr = npt.NDArray[np.float64]
CostFn = Callable[[Arr], Arr]
OPTION_LABELS = {"serverless": "Serverless API", "dedicated": "Dedicated endpoint", "self_hosted": "Self-hosted GPUs"}
VOLUME_RANGE = (1e3, 1e10)


@dataclass(frozen=True)
class Catalogs:
    prices: PriceCatalog
    gpus: GpuCatalog
    records: RecordCatalog
    models: ModelCatalog = field(default_factory=load_model_specs)


def load_catalogs(
    sheets_dir: Path | None = None,
    gpus_dir: Path | None = None,
    records_dir: Path | None = None,
    models_dir: Path | None = None,
) -> Catalogs:
    from calculator.catalog.prices import load_price_sheets

    return Catalogs(
        load_price_sheets(sheets_dir), load_gpu_specs(gpus_dir), load_records(records_dir), load_model_specs(models_dir)
    )


class Crossing(BaseModel):
    model_config = ConfigDict(frozen=True)

    a: str
    b: str
    turns_per_month: float
    cheaper_above: str
    """Which of the two is cheaper just above this volume."""


class Comparison(BaseModel):
    model_config = ConfigDict(frozen=True)

    scenario: Scenario
    as_of: dt.date
    turn: TurnComparison | None
    options: tuple[OptionCost, ...]
    cheapest: str | None
    crossings: tuple[Crossing, ...]
    stays_cheapest: tuple[str, float] | None
    """(option, volume): above this monthly volume the option is cheapest all the way to 10^10 turns."""
    warnings: tuple[str, ...]

    def option(self, name: str) -> OptionCost | None:
        return next((o for o in self.options if o.option == name), None)


@dataclass(frozen=True)
class _Resolved:
    serverless: tuple[PriceSheet, ServerlessOffer] | None
    dedicated: tuple[PriceSheet, DedicatedOffer] | None
    gpu_vm: tuple[PriceSheet, GpuVmOffer] | None
    record: ThroughputRecord | None


def _resolve(scenario: Scenario, cat: Catalogs) -> _Resolved:
    serverless = dedicated = gpu_vm = None
    if scenario.serverless:
        serverless = cat.prices.serverless(scenario.serverless.provider, scenario.serverless.model)
    if scenario.dedicated:
        sheet, offer = cat.prices.offer(scenario.dedicated.provider, scenario.dedicated.offer, "dedicated")
        assert isinstance(offer, DedicatedOffer)
        dedicated = (sheet, offer)
    if scenario.gpu_vm:
        sheet, offer = cat.prices.offer(scenario.gpu_vm.provider, scenario.gpu_vm.offer, "gpu_vm")
        assert isinstance(offer, GpuVmOffer)
        gpu_vm = (sheet, offer)
    hosting = scenario.self_hosting
    record = None
    if (dedicated or gpu_vm) and hosting.estimate is None:
        record = cat.records.get(hosting.record)
        if hosting.latency_target is not None:
            record = _busiest_meeting_target(cat, record, hosting.latency_target)
    return _Resolved(serverless, dedicated, gpu_vm, record)


def _busiest_meeting_target(cat: Catalogs, record: ThroughputRecord, target: LatencyTarget) -> ThroughputRecord:
    """Among the load levels of the record's own setup and engine, the busiest that meets the target."""
    levels = [r for r in cat.records.records if r.engine == record.engine and comparable(r, record)[0]]
    best, reasons = best_under_target(levels or [record], target)
    if best is None:
        raise InputError(
            "self_hosting.latency_target",
            f"no load level of {record.label} meets it: " + "; ".join(reasons),
        )
    return best


def _capacity(
    cat: Catalogs, scenario: Scenario, res: _Resolved, shape: TurnShape, gpu_id: str
) -> tuple[ThroughputRecord, ReplicaCapacity]:
    """The record an option is sized from (measured, or estimated for its GPU) and its capacity."""
    setup = scenario.self_hosting.estimate
    if setup is not None:
        shape = shape.scaled(scenario.token_factor(setup.model))
        record = estimate_record(
            setup,
            cat.models.get(setup.model),
            cat.gpus.get(gpu_id),
            float(shape.input_tokens),
            float(shape.prefix_share),
            float(shape.hit_rate),
            float(shape.output_tokens),
        )
    else:
        assert res.record is not None
        record = res.record
        shape = shape.scaled(scenario.token_factor(record.model))
    check_usable(record)
    assert record.gpu is not None
    capacity = replica_capacity(
        record,
        cat.gpus.get(record.gpu),
        float(shape.input_tokens),
        float(shape.prefix_share),
        float(shape.hit_rate),
        float(shape.output_tokens),
        target_gpu=cat.gpus.get(gpu_id),
        model=cat.models.find(record.model) if record.model else None,
    )
    if setup is not None:
        capacity = capacity.model_copy(update={"note": f"{record.notes} (roofline, not a measurement)"})
    elif scenario.self_hosting.latency_target is not None:
        target = scenario.self_hosting.latency_target
        capacity = capacity.model_copy(
            update={"note": f"busiest load level meeting the {target.percentile} target: {record.id}; {capacity.note}"}
        )
    return record, capacity


def owned_capacity(
    scenario: Scenario, cat: Catalogs, kind: str
) -> tuple[PriceSheet, DedicatedOffer | GpuVmOffer, ThroughputRecord, ReplicaCapacity] | None:
    """The GPU offer of ``kind`` ('dedicated' or 'self_hosted'), its sizing record and per-replica capacity."""
    res = _resolve(scenario, cat)
    pair = res.gpu_vm if kind == "self_hosted" else res.dedicated
    if pair is None:
        return None
    sheet, offer = pair
    record, capacity = _capacity(cat, scenario, res, scenario.workload, offer.gpu)
    return sheet, offer, record, capacity


def without_unpriceable(scenario: Scenario, cat: Catalogs) -> tuple[Scenario, list[tuple[str, InputError]]]:
    """The scenario less the options that cannot be priced as set, and why each was left out.

    An offer with no price version on the price date, or a GPU setup that cannot hold the model, is
    an answer about that option, not a reason to refuse the others.
    """
    dropped: list[tuple[str, InputError]] = []
    for option in ("serverless", "dedicated", "gpu_vm"):
        if getattr(scenario, option) is None:
            continue
        alone = scenario.model_copy(
            update={other: None for other in ("serverless", "dedicated", "gpu_vm") if other != option}
        )
        try:
            res = _resolve(alone, cat)
            pair = res.serverless or res.dedicated or res.gpu_vm
            assert pair is not None
            offer = pair[1]
            offer.version_at(alone.price_date)
            if option != "serverless":
                assert isinstance(offer, DedicatedOffer | GpuVmOffer)
                _capacity(cat, alone, res, alone.workload, offer.gpu)
        except InputError as exc:
            dropped.append((option, exc))
            scenario = scenario.model_copy(update={option: None})
    return scenario, dropped


def cost_curves(scenario: Scenario, cat: Catalogs, shape: TurnShape | None = None) -> dict[str, CostFn]:
    """Monthly cost of each chosen option as a function of turns per month (numpy arrays)."""
    shape = shape or scenario.workload
    res = _resolve(scenario, cat)
    as_of, currency, fx, hosting, traffic = (
        scenario.price_date,
        scenario.currency,
        scenario.fx,
        scenario.self_hosting,
        scenario.traffic,
    )
    curves: dict[str, CostFn] = {}
    if res.serverless and scenario.serverless:
        sheet, s_offer = res.serverless
        choice = scenario.serverless
        s_shape = shape.scaled(scenario.token_factor(s_offer.model, s_offer.base_model))
        storage = storage_monthly(
            s_offer, s_offer.version_at(as_of), s_shape, choice.distinct_prefixes, choice.prefix_hold_hours
        )
        storage_f = float(storage or 0)
        factor = fx.factor(sheet.currency, currency)
        curves["serverless"] = lambda v: serverless_monthly_array(s_offer, as_of, s_shape, v, factor, storage_f)
    if res.dedicated:
        d_sheet, d_offer = res.dedicated
        record, capacity = _capacity(cat, scenario, res, shape, d_offer.gpu)
        cap = capacity.requests_per_s
        d_factor = fx.factor(d_sheet.currency, currency)
        curves["dedicated"] = lambda v: dedicated_monthly_array(
            d_offer, as_of, record, hosting, traffic, cap, v, d_factor
        )
    if res.gpu_vm:
        g_sheet, g_offer = res.gpu_vm
        record_g, capacity_g = _capacity(cat, scenario, res, shape, g_offer.gpu)
        cap_g = capacity_g.requests_per_s
        g_factor = fx.factor(g_sheet.currency, currency)
        people = float(hosting.engineer_monthly_cost) * hosting.engineer_share
        curves["self_hosted"] = lambda v: self_hosted_monthly_array(
            g_offer, as_of, record_g, hosting, traffic, cap_g, v, g_factor, people
        )
    return curves


def crossings(
    curves: dict[str, CostFn], lo: float = VOLUME_RANGE[0], hi: float = VOLUME_RANGE[1], points: int = 4001
) -> tuple[list[Crossing], tuple[str, float] | None]:
    """Every volume where two options swap places, and where the last winner starts to stay cheapest."""
    names = list(curves)
    grid = np.geomspace(lo, hi, points)
    values = {n: curves[n](grid) for n in names}
    found: list[Crossing] = []

    def refine(fn: Callable[[float], bool], left: float, right: float) -> float:
        # fn(left) is False, fn(right) is True; bisect in log space to a relative 1e-9
        for _ in range(80):
            mid = float(np.sqrt(left * right))
            if fn(mid):
                right = mid
            else:
                left = mid
            if right / left - 1 < 1e-9:
                break
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

                def past(v: float, a: str = a, b: str = b, s: bool = a_cheaper_after) -> bool:
                    d = float(curves[a](np.array([v]))[0] - curves[b](np.array([v]))[0])
                    return (d < 0) == s and d != 0

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


def _model_warnings(res: _Resolved, options: list[OptionCost], scenario: Scenario) -> list[str]:
    warnings = []
    models = {o.option: o.model for o in options if o.model}
    canon = {k: canonical_model(v) for k, v in models.items()}
    if len(set(canon.values())) > 1:
        listing = "; ".join(f"{OPTION_LABELS[k]} runs {v}" for k, v in models.items())
        warnings.append(f"The options run different models ({listing}): quality differs too, not only cost.")
        scaled = {k: scenario.token_factor(v) for k, v in models.items() if scenario.token_factor(v) != 1}
        if scaled:
            listing = "; ".join(f"{OPTION_LABELS[k]} x{float(f):.2f}" for k, f in scaled.items())
            warnings.append(f"Token counts scaled for other tokenizers: {listing}.")
        else:
            warnings.append(
                "The same text is often 10 to 30% more or fewer tokens under another model's tokenizer; "
                "set token_factors in the scenario to count it."
            )
    if res.serverless and not res.serverless[1].open_weights and (res.dedicated or res.gpu_vm):
        warnings.append(
            f"{res.serverless[1].model} is a closed model: it cannot be self-hosted, so the GPU options "
            "price a different (open) model."
        )
    if res.serverless and scenario.workload.prefix_share > 0:
        version = res.serverless[1].version_at(scenario.price_date)
        if version.prices.cached_input is None:
            warnings.append(
                f"{res.serverless[1].model} on {res.serverless[0].name} bills cached input at the full input price: "
                "the repeated prompt start saves nothing on this API (it still saves prefill on your own GPUs)."
            )
    if scenario.workload.hit_rate == 1 and scenario.workload.prefix_share > 0:
        warnings.append(
            "Hit rate 1 is the best case, not a measured rate: caches evict and requests routed to a replica "
            "without the prefix miss."
        )
    return warnings


def compare(scenario: Scenario, cat: Catalogs) -> Comparison:
    """Price every chosen option for the scenario's month, then find break-even volumes."""
    if not (scenario.serverless or scenario.dedicated or scenario.gpu_vm):
        raise InputError("scenario", "choose at least one option: serverless, dedicated or gpu_vm")
    res = _resolve(scenario, cat)
    as_of, shape = scenario.price_date, scenario.workload
    options: list[OptionCost] = []
    turn = None
    if res.serverless and scenario.serverless:
        sheet, offer = res.serverless
        s_shape = shape.scaled(scenario.token_factor(offer.model, offer.base_model))
        turn = compare_turn(sheet, offer, as_of, s_shape)
        options.append(
            serverless_option(
                sheet,
                offer,
                as_of,
                s_shape,
                scenario.traffic,
                scenario.currency,
                scenario.fx,
                scenario.serverless.distinct_prefixes,
                scenario.serverless.prefix_hold_hours,
            )
        )
    if res.dedicated:
        d_sheet, d_offer = res.dedicated
        d_record, cap = _capacity(cat, scenario, res, shape, d_offer.gpu)
        options.append(
            dedicated_option(
                d_sheet,
                d_offer,
                as_of,
                d_record,
                scenario.self_hosting,
                scenario.traffic,
                cap,
                scenario.currency,
                scenario.fx,
            )
        )
    if res.gpu_vm:
        g_sheet, g_offer = res.gpu_vm
        g_record, cap = _capacity(cat, scenario, res, shape, g_offer.gpu)
        options.append(
            self_hosted_option(
                g_sheet,
                g_offer,
                as_of,
                g_record,
                scenario.self_hosting,
                scenario.traffic,
                cap,
                scenario.currency,
                scenario.fx,
            )
        )
    cheapest = min(options, key=lambda o: o.monthly).option if options else None
    found, stays = crossings(cost_curves(scenario, cat))
    return Comparison(
        scenario=scenario,
        as_of=as_of,
        turn=turn,
        options=tuple(options),
        cheapest=cheapest,
        crossings=tuple(found),
        stays_cheapest=stays,
        warnings=tuple(_model_warnings(res, options, scenario)),
    )


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
