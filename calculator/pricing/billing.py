"""The three ways to buy inference, per month: serverless, a dedicated endpoint, self-hosted GPU VMs.

Each option has one array function of monthly volume (turns per month) that charts, sweeps and
break-even search use, and one exact function for a single volume that reuses the same counts
(replicas, instances, billed hours) and prices them in Decimal, rounded to the cent at the end.

    serverless   turns x cost of the reused turn (+ cache storage, where charged)
    dedicated    replicas for the peak x GPUs x 730 h x price, at least the provider's minimum
    self-hosted  GPU hours in whole instances at the billing granularity (always on for the peak,
                 or autoscaled over the active hours above a floor), spare replicas, a share of a
                 platform engineer, and one-time engine builds per model change
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import ROUND_HALF_UP, Decimal
from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict

from calculator.capacity.sizing import ReplicaCapacity
from calculator.catalog.measurements import ThroughputRecord
from calculator.catalog.prices import (
    DedicatedOffer,
    GpuVmOffer,
    PriceSheet,
    ServerlessOffer,
    ServerlessPriceVersion,
)
from calculator.pricing.turn import PriceRef, cacheable_prefix, price_ref, price_turn
from calculator.scenario.inputs import (
    DAYS_PER_MONTH,
    DAYS_PER_MONTH_EXACT,
    HOURS_PER_MONTH,
    Fx,
    SelfHosting,
    Traffic,
    TurnShape,
)

__all__ = [
    "DAYS_PER_MONTH",
    "HOURS_PER_MONTH",
    "Fx",
    "OptionCost",
    "SelfHosting",
    "Traffic",
    "as_decimal",
    "billed_hours",
    "billed_seconds",
    "cents",
    "parts_adding_up",
    "dedicated_units",
    "self_hosted_gpu_hours",
    "storage_monthly",
]

Arr = npt.NDArray[np.float64]
CENT = Decimal("0.01")


def cents(value: Decimal) -> Decimal:
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


def parts_adding_up(parts: dict[str, Decimal], total: Decimal) -> dict[str, Decimal]:
    """Each part to the cent so that they add up to ``total`` exactly (largest remainder first).

    Rounding each part on its own can leave the breakdown a cent or two off the total a user sees.
    """
    floored = {k: v.quantize(CENT, rounding="ROUND_FLOOR") for k, v in parts.items()}
    missing = int((total - sum(floored.values(), Decimal(0))) / CENT)
    by_remainder = sorted(parts, key=lambda k: parts[k] - floored[k], reverse=True)
    for key in by_remainder[: max(missing, 0)]:
        floored[key] += CENT
    return floored


def as_decimal(x: float) -> Decimal:
    """A count or an hour figure from the float path, as Decimal without binary noise."""
    return Decimal(repr(round(float(x), 9)))


class OptionCost(BaseModel):
    """One way to buy, priced for one month."""

    model_config = ConfigDict(frozen=True)

    option: Literal["serverless", "dedicated", "self_hosted"]
    provider: str
    offer: str
    model: str | None
    currency: str
    monthly: Decimal
    cost_per_1000_turns: Decimal | None
    breakdown: dict[str, Decimal]
    replicas: int | None = None
    gpus: int | None = None
    instances: int | None = None
    gpu_hours: float | None = None
    utilisation: float | None = None
    """Average load over provisioned capacity across the month."""
    capacity: ReplicaCapacity | None = None
    prices: tuple[PriceRef, ...]
    notes: tuple[str, ...] = ()


# --- the count functions, shared by the exact path and the sweeps ------------------------------


def engine_replicas(traffic: Traffic, volume: float | Arr, capacity_rps: float, utilisation: float) -> Arr:
    """Replicas needed at the peak: ceil(peak rate / (capacity x target utilisation))."""
    peak = np.asarray(traffic.peak_rps(np.asarray(volume, dtype=np.float64)))
    return np.ceil(np.round(peak / (capacity_rps * utilisation), 9))


def dedicated_units(offer: DedicatedOffer, record: ThroughputRecord, replicas: Arr) -> tuple[Arr, float]:
    """Billing units (replicas as the provider counts them, each of ``gpus_per_replica`` GPUs) and GPUs per unit.

    The engine replicas' GPUs are packed into the provider's replicas whether it prices per replica-hour
    or per GPU-hour; its minimum counts its own replicas.
    """
    unit_gpus = float(offer.gpus_per_replica)
    units = np.ceil(np.round(replicas * record.replica_gpus / unit_gpus, 9))
    return np.maximum(units, offer.min_replicas), unit_gpus


def billed_seconds(hours: float, offer: GpuVmOffer) -> int:
    """One period of use as billed: at least the minimum, rounded up to the billing unit (whole seconds)."""
    seconds = max(hours * 3600, offer.min_billed_seconds)
    return math.ceil(round(seconds / offer.billing_seconds, 9)) * offer.billing_seconds


def billed_hours(hours: float, offer: GpuVmOffer) -> float:
    return billed_seconds(hours, offer) / 3600


def self_hosted_gpu_hours(
    offer: GpuVmOffer, record: ThroughputRecord, hosting: SelfHosting, traffic: Traffic, replicas: Arr
) -> tuple[Arr, Arr, Arr]:
    """(instances at peak, GPU hours per month, GPU seconds per day) for arrays of peak replica counts.

    The GPU seconds a day are whole numbers, so the exact path can price a month of them to the cent.
    """
    gpi = offer.gpus_per_instance
    total_replicas = np.maximum(replicas, 1) + hosting.spare_replicas
    instances = np.ceil(total_replicas * record.replica_gpus / gpi)
    if not hosting.autoscale or traffic.active_hours_per_day >= 24:
        per_day = instances * 86400
    else:
        floor = math.ceil(hosting.min_replicas * record.replica_gpus / gpi)
        floor_arr = np.minimum(instances, floor)
        window = billed_seconds(traffic.active_hours_per_day + hosting.startup_minutes / 60, offer)
        per_day = floor_arr * 86400 + (instances - floor_arr) * min(window, 86400)
    gpu_seconds: Arr = np.asarray(per_day * gpi, dtype=np.float64)
    return instances, gpu_seconds / 3600 * DAYS_PER_MONTH, gpu_seconds


def storage_monthly(
    offer: ServerlessOffer, version: ServerlessPriceVersion, shape: TurnShape, distinct_prefixes: int, hold_hours: float
) -> Decimal | None:
    """Monthly cache storage: distinct prefixes held x their tokens x hours x price per 1M per hour.

    Storage is shared by every turn that reads the prefix, so it is a monthly cost, not a per-turn one.
    None when the offer charges no storage.
    """
    price = version.prices_for_prompt(shape.input_tokens).cache_storage_per_hour
    if price is None:
        return None
    prefix_tokens = cacheable_prefix(offer, Decimal(shape.input_tokens), Decimal(shape.prefix_share))
    return price * prefix_tokens / Decimal(1_000_000) * distinct_prefixes * as_decimal(hold_hours)


# --- monthly cost over arrays of volume (charts, sweeps, break-even) ----------------------------


def serverless_monthly_array(
    offer: ServerlessOffer, as_of: dt.date, shape: TurnShape, volume: Arr, fx_factor: float, storage: float
) -> Arr:
    per_turn = float(price_turn(offer, offer.version_at(as_of), shape).cost_per_turn)
    return (np.asarray(volume, dtype=np.float64) * per_turn + storage) * fx_factor


def dedicated_monthly_array(
    offer: DedicatedOffer,
    as_of: dt.date,
    record: ThroughputRecord,
    hosting: SelfHosting,
    traffic: Traffic,
    capacity_rps: float,
    volume: Arr,
    fx_factor: float,
) -> Arr:
    replicas = engine_replicas(traffic, volume, capacity_rps, hosting.target_utilisation)
    version = offer.version_at(as_of)
    units, unit_gpus = dedicated_units(offer, record, replicas)
    unit_price = float(version.per_replica_hour or (version.per_gpu_hour or 0) * Decimal(unit_gpus))
    hours = np.maximum(units * HOURS_PER_MONTH, offer.min_billed_hours)
    return hours * unit_price * fx_factor


def self_hosted_monthly_array(
    offer: GpuVmOffer,
    as_of: dt.date,
    record: ThroughputRecord,
    hosting: SelfHosting,
    traffic: Traffic,
    capacity_rps: float,
    volume: Arr,
    fx_factor: float,
    people_monthly: float,
) -> Arr:
    replicas = engine_replicas(traffic, volume, capacity_rps, hosting.target_utilisation)
    _, gpu_hours, _ = self_hosted_gpu_hours(offer, record, hosting, traffic, replicas)
    price = float(offer.version_at(as_of).per_gpu_hour)
    builds = hosting.model_changes_per_month * hosting.build_minutes_per_change / 60 * record.replica_gpus
    return (gpu_hours + builds) * price * fx_factor + people_monthly


# --- exact monthly cost for one volume ---------------------------------------------------------


def serverless_option(
    sheet: PriceSheet,
    offer: ServerlessOffer,
    as_of: dt.date,
    shape: TurnShape,
    traffic: Traffic,
    currency: str,
    fx: Fx,
    distinct_prefixes: int = 0,
    prefix_hold_hours: float = HOURS_PER_MONTH,
) -> OptionCost:
    version = offer.version_at(as_of)
    turn = price_turn(offer, version, shape)
    tokens = turn.parts.total * traffic.turns_per_month
    breakdown = {
        "uncached_input": turn.parts.uncached_input * traffic.turns_per_month,
        "cache_write": turn.parts.cache_write * traffic.turns_per_month,
        "cached_input": turn.parts.cached_input * traffic.turns_per_month,
        "output": turn.parts.output * traffic.turns_per_month,
    }
    notes = []
    storage = storage_monthly(offer, version, shape, distinct_prefixes, prefix_hold_hours)
    if storage is not None and distinct_prefixes > 0:
        breakdown["cache_storage"] = storage
        notes.append(
            f"cache storage: {distinct_prefixes} distinct prefix(es) of "
            f"{float(shape.input_tokens * shape.prefix_share):.0f} tokens held {prefix_hold_hours:g} h a month"
        )
    elif storage is not None:
        notes.append("this offer charges cache storage per hour; set the distinct prefixes held to include it")
    storage = storage or Decimal(0)
    total = tokens + storage
    monthly = cents(fx.convert(total, sheet.currency, currency))
    converted = parts_adding_up({k: fx.convert(v, sheet.currency, currency) for k, v in breakdown.items()}, monthly)
    per_1000 = fx.convert(turn.parts.total * 1000, sheet.currency, currency)
    return OptionCost(
        option="serverless",
        provider=sheet.provider,
        offer=offer.id,
        model=offer.model,
        currency=currency,
        monthly=monthly,
        cost_per_1000_turns=per_1000,
        breakdown=converted,
        prices=(price_ref(sheet, offer, version),),
        notes=tuple(notes),
    )


def _hourly_ref(sheet: PriceSheet, offer: DedicatedOffer | GpuVmOffer, as_of: dt.date) -> PriceRef:
    version = offer.version_at(as_of)
    return PriceRef(
        provider=sheet.provider,
        kind=offer.kind,
        offer=offer.id,
        model=getattr(offer, "model", None),
        gpu=offer.gpu,
        currency=sheet.currency,
        effective=version.effective,
        source=version.source.url or version.source.document or "",
        read=version.source.read,
        note=version.note,
    )


def _avg_utilisation(traffic: Traffic, capacity_rps: float, replica_hours: float) -> float | None:
    if replica_hours <= 0:
        return None
    served = traffic.turns_per_month / 3600  # request-hours of work at capacity 1 req/s
    return served / (capacity_rps * replica_hours)


def dedicated_option(
    sheet: PriceSheet,
    offer: DedicatedOffer,
    as_of: dt.date,
    record: ThroughputRecord,
    hosting: SelfHosting,
    traffic: Traffic,
    capacity: ReplicaCapacity,
    currency: str,
    fx: Fx,
) -> OptionCost:
    volume = np.array([float(traffic.turns_per_month)])
    replicas = engine_replicas(traffic, volume, capacity.requests_per_s, hosting.target_utilisation)
    version = offer.version_at(as_of)
    units, unit_gpus = dedicated_units(offer, record, replicas)
    n_units = int(units[0])
    unit_price = version.per_replica_hour or (version.per_gpu_hour or Decimal(0)) * as_decimal(unit_gpus)
    hours = max(as_decimal(n_units * HOURS_PER_MONTH), Decimal(offer.min_billed_hours))
    cost = cents(fx.convert(hours * unit_price, sheet.currency, currency))
    engine_replica_hours = n_units * unit_gpus / record.replica_gpus * HOURS_PER_MONTH
    notes = [capacity.note]
    if offer.min_replicas and n_units == offer.min_replicas and int(replicas[0]) < offer.min_replicas:
        notes.append(f"the provider's minimum of {offer.min_replicas} replica(s) sets the size")
    return OptionCost(
        option="dedicated",
        provider=sheet.provider,
        offer=offer.id,
        model=offer.model or record.model,
        currency=currency,
        monthly=cost,
        cost_per_1000_turns=cost / traffic.turns_per_month * 1000 if traffic.turns_per_month else None,
        breakdown={"gpu_hours": cost},
        replicas=int(n_units * unit_gpus // record.replica_gpus),
        gpus=int(n_units * unit_gpus),
        gpu_hours=float(n_units * unit_gpus * HOURS_PER_MONTH),
        utilisation=_avg_utilisation(traffic, capacity.requests_per_s, engine_replica_hours),
        capacity=capacity,
        prices=(_hourly_ref(sheet, offer, as_of),),
        notes=tuple(notes),
    )


def self_hosted_option(
    sheet: PriceSheet,
    offer: GpuVmOffer,
    as_of: dt.date,
    record: ThroughputRecord,
    hosting: SelfHosting,
    traffic: Traffic,
    capacity: ReplicaCapacity,
    currency: str,
    fx: Fx,
) -> OptionCost:
    volume = np.array([float(traffic.turns_per_month)])
    replicas = engine_replicas(traffic, volume, capacity.requests_per_s, hosting.target_utilisation)
    instances, gpu_hours, gpu_seconds = self_hosted_gpu_hours(offer, record, hosting, traffic, replicas)
    price = offer.version_at(as_of).per_gpu_hour
    # whole GPU seconds a day times 365/12 days, in Decimal: a month of autoscaled hours is exact to
    # the cent, not cut at a float's ninth decimal
    gpu_cost = Decimal(int(gpu_seconds[0])) / 3600 * DAYS_PER_MONTH_EXACT * price
    build_hours = as_decimal(
        hosting.model_changes_per_month * hosting.build_minutes_per_change / 60 * record.replica_gpus
    )
    builds = build_hours * price
    people = hosting.engineer_monthly_cost * as_decimal(hosting.engineer_share)
    breakdown = {
        "gpu_hours": cents(fx.convert(gpu_cost, sheet.currency, currency)),
        "engine_builds": cents(fx.convert(builds, sheet.currency, currency)),
        "engineer": cents(people),
    }
    monthly = sum(breakdown.values(), Decimal(0))
    n_instances = int(instances[0])
    replica_hours = float(gpu_hours[0]) / record.replica_gpus
    peak_replicas = int(np.maximum(replicas, 1)[0])
    notes = [capacity.note]
    notes.append(
        f"{peak_replicas} replica(s) for the peak + {hosting.spare_replicas} spare, "
        f"{record.replica_gpus} GPU(s) each, in {n_instances} instance(s) of {offer.gpus_per_instance}"
    )
    if hosting.autoscale:
        notes.append(
            f"autoscaled: {hosting.min_replicas} replica(s) overnight, billed per {offer.billing}, "
            f"{hosting.startup_minutes:g} min start-up per scale-up"
        )
    return OptionCost(
        option="self_hosted",
        provider=sheet.provider,
        offer=offer.id,
        model=record.model,
        currency=currency,
        monthly=monthly,
        cost_per_1000_turns=monthly / traffic.turns_per_month * 1000 if traffic.turns_per_month else None,
        breakdown=breakdown,
        replicas=peak_replicas + hosting.spare_replicas,
        gpus=n_instances * offer.gpus_per_instance,
        instances=n_instances,
        gpu_hours=float(gpu_hours[0]),
        utilisation=_avg_utilisation(traffic, capacity.requests_per_s, replica_hours),
        capacity=capacity,
        prices=(_hourly_ref(sheet, offer, as_of),),
        notes=tuple(notes),
    )
