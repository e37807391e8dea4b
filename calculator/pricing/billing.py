"""The bill for owned capacity: self-hosted GPU VMs and dedicated endpoints, from a schedule of replicas.

This is the only module that turns replicas into GPU hours. Every path that prices owned GPUs
(``compare``, the break-even sweep, the load profile, the hybrid plan, growth, the charts) builds a
:class:`Schedule` and calls the functions here, so they cannot disagree about a bill.

A schedule says how many engine replicas serve in each period of an active day (for one monthly
volume, or for a whole array of them at once), how long each period is, and on how many days a
month the traffic arrives:

    always on    the busiest period's replicas, all day, every day of the month
    autoscaled   each instance "slot" is billed for every run of periods it is up, plus the start-up
                 time, rounded up to the offer's billing granularity; a floor of ``min_replicas``
                 stays up, also on days without traffic
    dedicated    the provider's billing units that hold the busiest period's replicas, always on,
                 at least its minimum replicas and minimum billed hours

The counts are whole numbers (instance-seconds a day are integers), so the exact figure (Decimal,
to the cent) and the numpy sweep are the same counts priced two ways.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from decimal import Decimal

import numpy as np
import numpy.typing as npt

from calculator.capacity.sizing import ReplicaCapacity
from calculator.catalog.measurements import ThroughputRecord
from calculator.catalog.prices import DedicatedOffer, DedicatedPriceVersion, GpuVmOffer, PriceSheet
from calculator.pricing.option import OptionCost, as_decimal, cents
from calculator.pricing.turn import PriceRef, price_ref
from calculator.scenario.inputs import (
    DAYS_PER_MONTH,
    DAYS_PER_MONTH_EXACT,
    HOURS_PER_MONTH,
    Fx,
    SelfHosting,
    Traffic,
)
from calculator.scenario.load import LoadProfile

__all__ = [
    "DAYS_PER_MONTH",
    "HOURS_PER_MONTH",
    "EndpointCounts",
    "Schedule",
    "VmCounts",
    "billed_hours",
    "billed_seconds",
    "dedicated_cost",
    "dedicated_option",
    "dedicated_monthly_array",
    "endpoint_counts",
    "engine_replicas",
    "hourly_price_per_replica",
    "self_hosted_cost",
    "self_hosted_monthly_array",
    "self_hosted_option",
    "demand_schedule",
    "profile_replicas",
    "profile_schedule",
    "traffic_schedule",
    "unit_hour_price",
    "vm_counts",
]

Arr = npt.NDArray[np.float64]
SECONDS_PER_DAY = 86400


# --- the schedule ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Schedule:
    """Engine replicas serving in each period of an active day, for one or many monthly volumes."""

    serving: Arr
    """(volumes, periods): replicas serving in each period, spares not counted (whole numbers)."""
    hours: tuple[float, ...]
    """Length of each period in hours; they add up to 24."""
    active_days: Decimal = DAYS_PER_MONTH_EXACT
    """Days a month the traffic arrives; on the others only the autoscaling floor runs."""
    always_on: bool = True
    """Billed at the busiest period's count all month, instead of following the schedule."""

    def __post_init__(self) -> None:
        serving = np.atleast_2d(np.asarray(self.serving, dtype=np.float64))
        if serving.shape[1] != len(self.hours):
            raise ValueError(f"{serving.shape[1]} periods of replicas for {len(self.hours)} period lengths")
        object.__setattr__(self, "serving", serving)

    @property
    def peak(self) -> Arr:
        """Replicas serving in the busiest period, per volume."""
        return np.asarray(self.serving.max(axis=1), dtype=np.float64)


def engine_replicas(traffic: Traffic, volume: float | Arr, capacity_rps: float, utilisation: float) -> Arr:
    """Replicas needed at the peak: ceil(peak rate / (capacity x target utilisation))."""
    peak = np.asarray(traffic.peak_rps(np.asarray(volume, dtype=np.float64)))
    return np.ceil(np.round(peak / (capacity_rps * utilisation), 9))


def traffic_schedule(
    traffic: Traffic, volume: float | Arr, capacity_rps: float, utilisation: float, autoscale: bool
) -> Schedule:
    """The scenario's traffic model as a schedule: the peak's replicas over the active hours, none after."""
    replicas = np.atleast_1d(engine_replicas(traffic, volume, capacity_rps, utilisation))
    active = traffic.active_hours_per_day
    if active >= 24 or not autoscale:
        # always on bills the peak all day, so the quiet hours need no period of their own
        return Schedule(replicas[:, None], (24.0,), always_on=not autoscale)
    serving = np.column_stack([replicas, np.zeros_like(replicas)])
    return Schedule(serving, (active, 24.0 - active), always_on=not autoscale)


def profile_replicas(profile: LoadProfile, volume: float | Arr, capacity_rps: float, utilisation: float) -> Arr:
    """(volumes, 24): engine replicas each hour of an active day needs for its peak under ``profile``.

    ceil(hour peak / (capacity x target utilisation)); the peak of every hour is linear in the volume.
    """
    volume = np.atleast_1d(np.asarray(volume, dtype=np.float64))
    peak = volume[:, None] * profile.hourly_peak_rps(1.0)[None, :]
    return np.asarray(np.ceil(np.round(peak / (capacity_rps * utilisation), 9)), dtype=np.float64)


def profile_schedule(profile: LoadProfile, serving: Arr, always_on: bool) -> Schedule:
    """Replicas serving in each hour of an active day (volumes, 24), on the profile's active days."""
    active_days = DAYS_PER_MONTH_EXACT * Decimal(repr(profile.days_per_week)) / 7
    return Schedule(np.atleast_2d(np.asarray(serving, dtype=np.float64)), (1.0,) * 24, active_days, always_on)


def demand_schedule(
    traffic: Traffic,
    profile: LoadProfile | None,
    volume: float | Arr,
    capacity_rps: float,
    utilisation: float,
    autoscale: bool,
) -> Schedule:
    """The replicas a month's demand needs: hour by hour under the scenario's load profile, else its traffic model."""
    if profile is None:
        return traffic_schedule(traffic, volume, capacity_rps, utilisation, autoscale)
    serving = profile_replicas(profile, volume, capacity_rps, utilisation)
    if not autoscale:
        return Schedule(serving.max(axis=1)[:, None], (24.0,), always_on=True)
    return profile_schedule(profile, serving, always_on=False)


# --- billing granularity --------------------------------------------------------------------------


def billed_seconds(hours: float, offer: GpuVmOffer) -> int:
    """One period of use as billed: at least the minimum, rounded up to the billing unit (whole seconds)."""
    seconds = max(hours * 3600, offer.min_billed_seconds)
    return math.ceil(round(seconds / offer.billing_seconds, 9)) * offer.billing_seconds


def billed_hours(hours: float, offer: GpuVmOffer) -> float:
    return billed_seconds(hours, offer) / 3600


def _run_seconds(up: tuple[bool, ...], hours: tuple[float, ...], startup_hours: float, offer: GpuVmOffer) -> int:
    """Billed seconds a day of one instance slot that is up in the periods ``up``.

    A run of periods is one billed use (start-up added, rounded to the billing unit, at most a day);
    the day is cyclic, so a run over midnight counts once. A slot up all day is billed 24 h.
    """
    if all(up):
        return SECONDS_PER_DAY
    if not any(up):
        return 0
    start = up.index(False)  # begin the day at a period that is down, so no run is cut in two
    total, run = 0, 0.0
    for k in range(1, len(up) + 1):
        p = (start + k) % len(up)
        if up[p]:
            run += hours[p]
        elif run:
            total += min(billed_seconds(run + startup_hours, offer), SECONDS_PER_DAY)
            run = 0.0
    if run:
        total += min(billed_seconds(run + startup_hours, offer), SECONDS_PER_DAY)
    return total


def _up_seconds(up: npt.NDArray[np.bool_], hours: tuple[float, ...], startup_hours: float, offer: GpuVmOffer) -> Arr:
    """:func:`_run_seconds` for each row of ``up`` (volumes, periods).

    Rows share few distinct patterns (a sweep's volumes mostly differ in how many slots, not when),
    so each pattern is billed once and looked up by its bit code.
    """
    n = up.shape[1]
    codes = up.astype(np.int64) @ (np.int64(1) << np.arange(n, dtype=np.int64))
    if n <= 16:
        present = np.flatnonzero(np.bincount(codes, minlength=1 << n))
        table = np.zeros(1 << n)
        inverse = codes
    else:
        present, inverse = np.unique(codes, return_inverse=True)
        table = np.zeros(len(present))
    for slot, code in enumerate(present):
        pattern = tuple(bool((int(code) >> k) & 1) for k in range(n))
        table[int(code) if n <= 16 else slot] = _run_seconds(pattern, hours, startup_hours, offer)
    return np.asarray(table[inverse], dtype=np.float64)


# --- self-hosted GPU VMs --------------------------------------------------------------------------


@dataclass(frozen=True)
class VmCounts:
    """Instances of a GPU VM offer a schedule keeps up, and the instance-seconds they are billed."""

    serving: Arr
    """(volumes, periods): engine replicas serving in each period (the busiest at least one), no spares."""
    instances: Arr
    """(volumes, periods): instances up in each period (spares and the floor included)."""
    peak_instances: Arr
    active_day_seconds: Arr
    """Billed instance-seconds on a day with traffic (whole numbers)."""
    idle_day_seconds: Arr
    """Billed instance-seconds on a day without traffic (the floor only; always on: all of them)."""
    gpus_per_instance: int
    active_days: Decimal

    @property
    def serving_peak(self) -> Arr:
        return np.asarray(self.serving.max(axis=1), dtype=np.float64)

    def gpu_hours(self) -> Arr:
        """Billed GPU hours a month, per volume (float, for sweeps and display)."""
        active = float(self.active_days)
        seconds = self.active_day_seconds * active + self.idle_day_seconds * (DAYS_PER_MONTH - active)
        return np.asarray(seconds * self.gpus_per_instance / 3600, dtype=np.float64)

    def gpu_hours_exact(self, i: int = 0) -> Decimal:
        """Billed GPU hours a month for volume ``i``, exact: whole seconds times days in Decimal."""
        idle_days = DAYS_PER_MONTH_EXACT - self.active_days
        seconds = Decimal(int(self.active_day_seconds[i])) * self.active_days + (
            Decimal(int(self.idle_day_seconds[i])) * idle_days
        )
        return seconds * self.gpus_per_instance / 3600


def vm_counts(offer: GpuVmOffer, replica_gpus: int, hosting: SelfHosting, schedule: Schedule) -> VmCounts:
    """Instances and billed instance-seconds for engine replicas of ``replica_gpus`` GPUs on ``offer``.

    The busiest period always serves at least one replica; spare replicas are added in every period
    that serves; replicas are packed into whole instances of ``gpus_per_instance`` GPUs.
    """
    gpi = offer.gpus_per_instance
    serving = schedule.serving
    if serving.shape[1] == 1:
        serving = np.maximum(serving, 1)
    else:
        serving = serving.copy()
        busiest = np.argmax(serving, axis=1)
        rows = np.arange(serving.shape[0])
        serving[rows, busiest] = np.maximum(serving[rows, busiest], 1)
    needed = np.where(serving > 0, serving + hosting.spare_replicas, 0)
    instances = np.ceil(np.round(needed * replica_gpus / gpi, 9))
    peak = instances.max(axis=1)
    if schedule.always_on:
        full = np.repeat(peak[:, None], instances.shape[1], axis=1)
        day = peak * SECONDS_PER_DAY
        return VmCounts(serving, full, peak, day, day, gpi, schedule.active_days)
    floor = np.minimum(peak, math.ceil(hosting.min_replicas * replica_gpus / gpi))
    instances = np.maximum(instances, floor[:, None])
    startup = hosting.startup_minutes / 60
    # Slots between two adjacent levels of the sorted counts are up in the same periods, so each
    # distinct level is billed once, times the slots it stands for (not once per slot).
    levels = np.sort(instances, axis=1)
    below = np.concatenate([np.zeros((levels.shape[0], 1)), levels[:, :-1]], axis=1)
    day = np.zeros(levels.shape[0])
    for j in range(levels.shape[1]):
        band = levels[:, j] - below[:, j]
        if not band.any():
            continue
        up = instances >= levels[:, j : j + 1]
        day += band * _up_seconds(up, schedule.hours, startup, offer)
    return VmCounts(serving, instances, peak, day, floor * SECONDS_PER_DAY, gpi, schedule.active_days)


def _builds_hours(hosting: SelfHosting, replica_gpus: int) -> float:
    """GPU hours a month spent building engines for model changes (TensorRT-LLM's ahead-of-time build)."""
    return hosting.model_changes_per_month * hosting.build_minutes_per_change / 60 * replica_gpus


def self_hosted_monthly_array(
    offer: GpuVmOffer,
    as_of: dt.date,
    replica_gpus: int,
    hosting: SelfHosting,
    traffic: Traffic,
    capacity_rps: float,
    volume: Arr,
    fx_factor: float,
    people_monthly: float,
    profile: LoadProfile | None = None,
) -> Arr:
    """Monthly cost over an array of volumes: GPU hours + engine builds, plus the engineer's share."""
    schedule = demand_schedule(traffic, profile, volume, capacity_rps, hosting.target_utilisation, hosting.autoscale)
    gpu_hours = vm_counts(offer, replica_gpus, hosting, schedule).gpu_hours()
    price = float(offer.version_at(as_of).per_gpu_hour)
    return (gpu_hours + _builds_hours(hosting, replica_gpus)) * price * fx_factor + people_monthly


def self_hosted_cost(
    sheet: PriceSheet,
    offer: GpuVmOffer,
    as_of: dt.date,
    replica_gpus: int,
    hosting: SelfHosting,
    schedule: Schedule,
    capacity: ReplicaCapacity,
    turns: int,
    currency: str,
    fx: Fx,
    model: str | None,
    mode_note: str | None = None,
) -> OptionCost:
    """Exact monthly cost of self-hosting on ``offer`` for a one-volume schedule (Decimal, to the cent)."""
    counts = vm_counts(offer, replica_gpus, hosting, schedule)
    price = offer.version_at(as_of).per_gpu_hour
    gpu_hours = counts.gpu_hours_exact()
    builds = as_decimal(_builds_hours(hosting, replica_gpus)) * price
    people = hosting.engineer_monthly_cost * as_decimal(hosting.engineer_share)
    breakdown = {
        "gpu_hours": cents(fx.convert(gpu_hours * price, sheet.currency, currency)),
        "engine_builds": cents(fx.convert(builds, sheet.currency, currency)),
        "engineer": cents(people),
    }
    monthly = sum(breakdown.values(), Decimal(0))
    n_instances = int(counts.peak_instances[0])
    serving = int(counts.serving_peak[0])
    hours = float(gpu_hours)
    notes = [
        capacity.note,
        f"{serving} replica(s) for the peak + {hosting.spare_replicas} spare, "
        f"{replica_gpus} GPU(s) each, in {n_instances} instance(s) of {offer.gpus_per_instance}",
    ]
    if mode_note:
        notes.append(mode_note)
    elif not schedule.always_on:
        notes.append(
            f"autoscaled: {hosting.min_replicas} replica(s) outside the busy hours, billed per {offer.billing}, "
            f"{hosting.startup_minutes:g} min start-up per scale-up"
        )
    return OptionCost(
        option="self_hosted",
        provider=sheet.provider,
        offer=offer.id,
        model=model,
        currency=currency,
        monthly=monthly,
        cost_per_1000_turns=monthly / turns * 1000 if turns else None,
        breakdown=breakdown,
        replicas=serving + hosting.spare_replicas,
        gpus=n_instances * offer.gpus_per_instance,
        instances=n_instances,
        gpu_hours=hours,
        utilisation=_utilisation(turns, capacity.requests_per_s, hours / replica_gpus),
        capacity=capacity,
        prices=(hourly_ref(sheet, offer, as_of),),
        notes=tuple(notes),
        replica_gpus=replica_gpus,
    )


# --- dedicated endpoints --------------------------------------------------------------------------


@dataclass(frozen=True)
class EndpointCounts:
    """The provider's replicas (billing units) a dedicated endpoint needs, and the hours it bills."""

    units: Arr
    unit_gpus: int
    replica_gpus: int
    unit_hours: Arr
    """Billed unit-hours a month: always on, at least the provider's minimum billed hours."""

    @property
    def engine_replicas(self) -> Arr:
        """Engine replicas of the sizing setup the billed units hold."""
        return np.asarray(np.floor(np.round(self.units * self.unit_gpus / self.replica_gpus, 9)))


def endpoint_counts(offer: DedicatedOffer, replica_gpus: int, schedule: Schedule) -> EndpointCounts:
    """Billing units for the busiest period's engine replicas, packed into the provider's replicas.

    The engine replicas' GPUs are packed into the provider's replicas whether it prices per replica-hour
    or per GPU-hour; its minimum counts its own replicas. An endpoint is always on.
    """
    unit_gpus = offer.gpus_per_replica
    units = np.maximum(np.ceil(np.round(schedule.peak * replica_gpus / unit_gpus, 9)), offer.min_replicas)
    hours = np.maximum(units * HOURS_PER_MONTH, offer.min_billed_hours)
    return EndpointCounts(units, unit_gpus, replica_gpus, hours)


def unit_hour_price(version: DedicatedPriceVersion, unit_gpus: int) -> Decimal:
    """Price of one billing unit for an hour, whether the sheet prices replicas or GPUs."""
    if version.per_replica_hour is not None:
        return version.per_replica_hour
    return (version.per_gpu_hour or Decimal(0)) * unit_gpus


def dedicated_monthly_array(
    offer: DedicatedOffer,
    as_of: dt.date,
    replica_gpus: int,
    hosting: SelfHosting,
    traffic: Traffic,
    capacity_rps: float,
    volume: Arr,
    fx_factor: float,
    profile: LoadProfile | None = None,
) -> Arr:
    schedule = demand_schedule(traffic, profile, volume, capacity_rps, hosting.target_utilisation, autoscale=False)
    counts = endpoint_counts(offer, replica_gpus, schedule)
    price = float(unit_hour_price(offer.version_at(as_of), counts.unit_gpus))
    return np.asarray(counts.unit_hours * price * fx_factor, dtype=np.float64)


def dedicated_cost(
    sheet: PriceSheet,
    offer: DedicatedOffer,
    as_of: dt.date,
    replica_gpus: int,
    schedule: Schedule,
    capacity: ReplicaCapacity,
    turns: int,
    currency: str,
    fx: Fx,
    model: str | None,
) -> OptionCost:
    """Exact monthly cost of a dedicated endpoint for a one-volume schedule (Decimal, to the cent)."""
    counts = endpoint_counts(offer, replica_gpus, schedule)
    n_units = int(counts.units[0])
    hours = max(as_decimal(n_units * HOURS_PER_MONTH), Decimal(offer.min_billed_hours))
    cost = cents(
        fx.convert(hours * unit_hour_price(offer.version_at(as_of), counts.unit_gpus), sheet.currency, currency)
    )
    engine = int(counts.engine_replicas[0])
    replica_hours = n_units * counts.unit_gpus / replica_gpus * HOURS_PER_MONTH
    notes = [capacity.note]
    needed_units = math.ceil(round(float(schedule.peak[0]) * replica_gpus / counts.unit_gpus, 9))
    if offer.min_replicas and needed_units < offer.min_replicas:
        notes.append(f"the provider's minimum of {offer.min_replicas} replica(s) sets the size")
    return OptionCost(
        option="dedicated",
        provider=sheet.provider,
        offer=offer.id,
        model=offer.model or model,
        currency=currency,
        monthly=cost,
        cost_per_1000_turns=cost / turns * 1000 if turns else None,
        breakdown={"gpu_hours": cost},
        replicas=engine,
        gpus=n_units * counts.unit_gpus,
        gpu_hours=float(n_units * counts.unit_gpus * HOURS_PER_MONTH),
        utilisation=_utilisation(turns, capacity.requests_per_s, replica_hours),
        capacity=capacity,
        prices=(hourly_ref(sheet, offer, as_of),),
        notes=tuple(notes),
        billing_units=n_units,
        replica_gpus=replica_gpus,
    )


# --- under the scenario's traffic model ------------------------------------------------------------


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
    profile: LoadProfile | None = None,
) -> OptionCost:
    """Self-hosted GPUs for the scenario's demand (its load profile, else its traffic model), for its month."""
    turns, util = float(traffic.turns_per_month), hosting.target_utilisation
    schedule = demand_schedule(traffic, profile, turns, capacity.requests_per_s, util, hosting.autoscale)
    return self_hosted_cost(
        sheet, offer, as_of, record.replica_gpus, hosting, schedule, capacity, traffic.turns_per_month, currency, fx,
        record.model,
    )  # fmt: skip


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
    profile: LoadProfile | None = None,
) -> OptionCost:
    """A dedicated endpoint for the scenario's demand (always on at the peak), billed for its month."""
    turns, util = float(traffic.turns_per_month), hosting.target_utilisation
    schedule = demand_schedule(traffic, profile, turns, capacity.requests_per_s, util, autoscale=False)
    return dedicated_cost(
        sheet, offer, as_of, record.replica_gpus, schedule, capacity, traffic.turns_per_month, currency, fx,
        record.model,
    )  # fmt: skip


# --- shared -----------------------------------------------------------------------------------------


def hourly_price_per_replica(offer: DedicatedOffer | GpuVmOffer, as_of: dt.date, replica_gpus: int) -> Decimal:
    """What one engine replica of ``replica_gpus`` GPUs costs an hour on ``offer`` (GPU hours only)."""
    if isinstance(offer, DedicatedOffer):
        return unit_hour_price(offer.version_at(as_of), offer.gpus_per_replica) / offer.gpus_per_replica * replica_gpus
    return offer.version_at(as_of).per_gpu_hour * replica_gpus


def hourly_ref(sheet: PriceSheet, offer: DedicatedOffer | GpuVmOffer, as_of: dt.date) -> PriceRef:
    return price_ref(sheet, offer, offer.version_at(as_of))


def _utilisation(turns: int, capacity_rps: float, replica_hours: float) -> float | None:
    """Average load over provisioned capacity across the month."""
    if replica_hours <= 0 or capacity_rps <= 0:
        return None
    return (turns / 3600) / (capacity_rps * replica_hours)
