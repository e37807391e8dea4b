"""Load over the day: 24 hourly weights, a within-hour burst, and what they do to GPU costs.

A profile says how a month's turns spread over the hours of a day (``weights``, any scale), on
how many days a week the traffic arrives (``days_per_week``: 5 for office use), and how bursty
an hour is inside (``burst``: the busiest moment's rate over the hour's mean). From it follow

    peak-to-average  = max hourly rate / mean hourly rate  x  burst    (over an active day)
    replicas in hour h = ceil(hour h's mean rate x burst / (capacity x target utilisation))

Owned GPUs are then billed per hour of the day: always on, the busiest hour's count all month;
autoscaled, each instance "slot" is billed for every run of hours it is up, plus the start-up
time, rounded up to the offer's billing granularity (per-second billing makes scaling down real).
The always-on count and the dedicated endpoint reuse the core functions in ``deploy.py`` with
the equivalent peak-to-average, so a flat profile gives exactly the replicas of
``Traffic(peak_to_average=1)``.

A trace (CSV with a ``TIMESTAMP`` column, JSON Lines with ``timestamp``) gives the within-hour
shape from request counts in 1-minute buckets; only a trace that covers at least a whole day can
give a daily shape. One hour of data (the Azure traces) cannot, and the profile says so.
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, field_validator

from calculator.catalog.measurements import ThroughputRecord
from calculator.catalog.prices import DedicatedOffer, GpuVmOffer, PriceSheet
from calculator.errors import InputError
from calculator.pricing.billing import (
    DAYS_PER_MONTH,
    HOURS_PER_MONTH,
    OptionCost,
    SelfHosting,
    Traffic,
    as_decimal,
    billed_hours,
    cents,
)
from calculator.pricing.compare import Catalogs, compare, owned_capacity
from calculator.scenario.model import Scenario

__all__ = [
    "HOURS",
    "PRESETS",
    "LoadProfile",
    "OwnedSetup",
    "ProfileCosts",
    "TraceShape",
    "billed_gpu_hours",
    "hourly_replicas",
    "load_profile",
    "owned_setup",
    "preset_profile",
    "profile_costs",
    "profile_from_traffic",
    "profile_from_trace",
    "ramp_shape",
    "read_timestamps",
    "trace_shape",
]

Arr = npt.NDArray[np.float64]
HOURS = 24
SECONDS_PER_DAY = 24 * 3600
_TOL = 1e-9


def ramp_shape(burst: float, points: int = 3600) -> tuple[float, ...]:
    """A within-hour rate shape (multipliers of the hour's mean, mean 1, max ``burst``), assumed linear.

    The rate rises evenly from ``2 - burst`` to ``burst`` over the hour (mean 1); above a burst of
    2 it is zero for part of the hour and rises from 0 to ``burst`` over the remaining ``2 / burst``
    of it. Used only to split an hour's traffic between owned capacity and overflow when no trace
    gives the measured shape; sizing uses the burst itself.
    """
    if burst < 1:
        raise InputError("--burst", f"{burst:g} is below 1; the busiest moment is at least the hour's mean")
    t = (np.arange(points) + 0.5) / points
    if burst <= 2:
        x = (2 - burst) + (2 * burst - 2) * t
    else:
        on = 2 / burst
        x = np.clip((t - (1 - on)) / on, 0, 1) * burst
    x = np.minimum(x / x.mean(), burst)
    return tuple(float(v) for v in x)


class LoadProfile(BaseModel):
    """How a month's turns spread over the day, and how bursty an hour is."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    name: str
    weights: tuple[float, ...]
    """24 relative weights, hour 0 (00:00-01:00) to hour 23; any scale."""
    burst: float = Field(default=1.0, ge=1)
    """Within-hour peak-to-average: the busiest moment's rate over the hour's mean rate."""
    days_per_week: float = Field(default=7.0, gt=0, le=7)
    """Days a week the traffic arrives (5 for office use); the other days carry no load."""
    within_hour: tuple[float, ...] | None = None
    """Measured rate multipliers inside an hour (e.g. per minute, mean 1); None = a linear ramp to ``burst``."""
    source: str = ""
    """Where the profile comes from (preset, scenario, trace file)."""
    notes: tuple[str, ...] = ()

    @field_validator("weights")
    @classmethod
    def _weights(cls, v: tuple[float, ...]) -> tuple[float, ...]:
        if len(v) != HOURS:
            raise ValueError(f"give 24 hourly weights, not {len(v)}")
        if any(not math.isfinite(w) or w < 0 for w in v):
            raise ValueError("hourly weights must be 0 or more")
        if sum(v) <= 0:
            raise ValueError("at least one hourly weight must be above 0")
        return v

    @field_validator("within_hour")
    @classmethod
    def _within(cls, v: tuple[float, ...] | None) -> tuple[float, ...] | None:
        if v is None:
            return v
        arr = np.asarray(v, dtype=np.float64)
        if len(arr) == 0 or (arr < 0).any() or arr.sum() <= 0:
            raise ValueError("within-hour multipliers must be 0 or more, with a positive mean")
        return tuple(float(x) for x in arr / arr.mean())

    # --- shape ---------------------------------------------------------------------------------

    @property
    def shares(self) -> Arr:
        """Share of a day's turns in each hour (sums to 1)."""
        w = np.asarray(self.weights, dtype=np.float64)
        return np.asarray(w / w.sum(), dtype=np.float64)

    @property
    def hourly_factors(self) -> Arr:
        """Each hour's mean rate over the day's mean rate (mean 1)."""
        w = np.asarray(self.weights, dtype=np.float64)
        return np.asarray(w / w.mean(), dtype=np.float64)

    @property
    def daily_peak_to_average(self) -> float:
        """Busiest hour's rate over the day's mean, times the within-hour burst (on an active day)."""
        return float(self.hourly_factors.max()) * self.burst

    @property
    def active_days_per_month(self) -> float:
        return DAYS_PER_MONTH * self.days_per_week / 7

    @property
    def peak_to_average(self) -> float:
        """Peak rate over the month's mean rate (round the clock, quiet days included)."""
        return self.daily_peak_to_average * 7 / self.days_per_week

    def shape(self) -> Arr:
        """Within-hour multipliers used to split an hour between owned capacity and overflow."""
        if self.within_hour is not None:
            return np.minimum(np.asarray(self.within_hour, dtype=np.float64), self.burst)
        return np.asarray(ramp_shape(self.burst), dtype=np.float64)

    def with_burst(self, burst: float) -> LoadProfile:
        """The same daily shape with a burst the user sets (a measured within-hour shape is dropped)."""
        if burst < 1:
            raise InputError("--burst", f"{burst:g} is below 1; the busiest moment is at least the hour's mean")
        return self.model_copy(update={"burst": float(burst), "within_hour": None})

    # --- rates ---------------------------------------------------------------------------------

    def _mean_rate(self, turns_per_month: float) -> float:
        """Mean request rate over an active day (req/s)."""
        return float(turns_per_month) / (self.active_days_per_month * SECONDS_PER_DAY)

    def hourly_rps(self, turns_per_month: float) -> Arr:
        """Mean request rate in each hour of an active day (req/s)."""
        return self._mean_rate(turns_per_month) * self.hourly_factors

    def hourly_peak_rps(self, turns_per_month: float) -> Arr:
        """Busiest-moment request rate in each hour (req/s): the hour's mean rate x burst."""
        # same order of operations as Traffic.peak_rps, so the busiest hour matches it bit for bit
        seconds = DAYS_PER_MONTH * 24 * 3600
        return np.asarray(
            float(turns_per_month) / seconds * (self.hourly_factors * self.burst * 7 / self.days_per_week)
        )

    def equivalent_traffic(self, turns_per_month: int) -> Traffic:
        """The core's traffic model with the same peak: round the clock, peak-to-average of this profile."""
        return Traffic(turns_per_month=turns_per_month, peak_to_average=self.peak_to_average, active_hours_per_day=24)

    def overflow_share(self, hour_rps: float, capacity_rps: float) -> float:
        """Share of an hour's requests above ``capacity_rps`` when its mean rate is ``hour_rps``."""
        if hour_rps <= 0:
            return 0.0
        ratio = capacity_rps / hour_rps
        if ratio >= self.burst * (1 - _TOL):
            return 0.0
        x = self.shape()
        return float(np.maximum(x - ratio, 0).mean())

    def table(self, turns_per_month: float) -> pd.DataFrame:
        """Per hour: weight, share of the day, mean and peak request rate."""
        return pd.DataFrame(
            {
                "hour": np.arange(HOURS),
                "weight": np.asarray(self.weights, dtype=np.float64),
                "share": self.shares,
                "load_rps": self.hourly_rps(turns_per_month),
                "peak_rps": self.hourly_peak_rps(turns_per_month),
            }
        )


# --- presets ---------------------------------------------------------------------------------------

_BUSINESS = (
    # 00-06 night: batch jobs and the odd late user
    *(0.04,) * 7,
    0.25,  # 07
    0.7,  # 08
    1.0,  # 09
    1.0,  # 10
    1.0,  # 11
    0.75,  # 12 lunch
    0.95,  # 13
    1.0,  # 14
    1.0,  # 15
    0.9,  # 16
    0.55,  # 17
    0.25,  # 18
    0.12,  # 19
    0.08,  # 20
    0.06,  # 21
    0.05,  # 22
    0.04,  # 23
)
_EVENINGS = (
    0.45,  # 00
    0.28,  # 01
    0.18,  # 02
    0.13,  # 03
    0.11,  # 04
    0.13,  # 05
    0.22,  # 06
    0.35,  # 07
    0.45,  # 08
    0.5,  # 09
    0.55,  # 10
    0.6,  # 11
    0.7,  # 12
    0.65,  # 13
    0.6,  # 14
    0.6,  # 15
    0.65,  # 16
    0.75,  # 17
    0.9,  # 18
    1.0,  # 19
    1.0,  # 20
    0.95,  # 21
    0.8,  # 22
    0.62,  # 23
)
PRESETS: dict[str, tuple[tuple[float, ...], float, str]] = {
    "flat": ((1.0,) * HOURS, 7.0, "the same load every hour of every day"),
    "business_hours": (
        _BUSINESS,
        5.0,
        "weekday office hours (09:00-17:00 in one time zone, lunch dip), near zero at night and at weekends",
    ),
    "consumer_evenings": (_EVENINGS, 7.0, "a consumer app: quiet before dawn, busiest 19:00-21:00, every day"),
}
"""name -> (24 weights, days per week, description). Illustrative shapes, not measurements."""


def preset_profile(name: str, burst: float = 1.0) -> LoadProfile:
    key = name.lower().replace("-", "_")
    if key not in PRESETS:
        raise InputError("--profile", f"unknown profile {name!r}; choose {', '.join(PRESETS)} or a trace file")
    weights, days, text = PRESETS[key]
    return LoadProfile(
        name=key,
        weights=weights,
        burst=burst,
        days_per_week=days,
        source=f"preset: {text}",
        notes=("an illustrative shape, not a measurement: derive one from your own request log",),
    )


def profile_from_traffic(traffic: Traffic, start_hour: int = 8) -> LoadProfile:
    """The scenario's own traffic model as a profile: flat over the active hours, burst = peak-to-average.

    With whole active hours this reproduces ``compare``'s replica counts and autoscaled GPU hours.
    """
    active = traffic.active_hours_per_day
    weights = [0.0] * HOURS
    full = int(active)
    for i in range(full):
        weights[(start_hour + i) % HOURS] = 1.0
    if active > full:
        weights[(start_hour + full) % HOURS] = active - full
    return LoadProfile(
        name="scenario",
        weights=tuple(weights),
        burst=traffic.peak_to_average,
        source=(
            f"the scenario's traffic: {active:g} active hour(s) a day from {start_hour:02d}:00, "
            f"peak-to-average {traffic.peak_to_average:g} within them"
        ),
    )


# --- traces ----------------------------------------------------------------------------------------


def read_timestamps(path: Path, unit: Literal["auto", "s", "ms"] = "auto") -> tuple[Arr, bool]:
    """Request arrival times in seconds (sorted) and whether they are clock times (not offsets).

    CSV: a column named ``timestamp`` (any case): date-times, or numbers in ``unit`` (auto: seconds).
    JSON Lines: a ``timestamp`` key per line: date-time strings, or numbers (auto: milliseconds, as
    Mooncake traces write them).
    """
    if not path.is_file():
        raise InputError("--profile", f"{path}: no such file")
    suffixes = "".join(path.suffixes).lower()
    raw: pd.Series
    if suffixes.endswith((".jsonl", ".jsonl.gz", ".json")):
        values: list[object] = []
        with gzip.open(path, "rt", encoding="utf-8") if suffixes.endswith(".gz") else path.open(encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputError("--profile", f"{path}:{n}: not JSON ({exc.msg})") from None
                if not isinstance(row, dict) or "timestamp" not in row:
                    raise InputError("--profile", f"{path}:{n}: no 'timestamp' key")
                values.append(row["timestamp"])
        raw = pd.Series(values)
        numeric_unit = "ms" if unit == "auto" else unit
    else:
        try:
            frame = pd.read_csv(path)
        except (ValueError, OSError) as exc:
            raise InputError("--profile", f"{path}: not a readable CSV ({exc})") from None
        cols = {str(c).strip().lower(): c for c in frame.columns}
        if "timestamp" not in cols:
            raise InputError(
                "--profile", f"{path}: no TIMESTAMP column (columns: {', '.join(map(str, frame.columns))})"
            )
        raw = frame[cols["timestamp"]]
        numeric_unit = "s" if unit == "auto" else unit
    raw = raw.dropna()
    if len(raw) < 2:
        raise InputError("--profile", f"{path}: fewer than 2 timestamps")
    numeric = pd.to_numeric(raw, errors="coerce")
    if numeric.notna().all():
        seconds = numeric.to_numpy(dtype=np.float64) * (0.001 if numeric_unit == "ms" else 1.0)
        clock = False
    else:
        try:
            times = pd.to_datetime(raw, format="mixed")
        except (ValueError, TypeError) as exc:
            raise InputError("--profile", f"{path}: timestamps are neither numbers nor date-times ({exc})") from None
        if times.dt.tz is not None:
            times = times.dt.tz_convert("UTC").dt.tz_localize(None)
        seconds = np.asarray((times - pd.Timestamp(0)).dt.total_seconds(), dtype=np.float64)
        clock = True
    return np.asarray(np.sort(seconds), dtype=np.float64), clock


@dataclass(frozen=True)
class TraceShape:
    """What a request log's timestamps say about load: always the within-hour burst, a daily shape only
    when the log covers at least a whole day."""

    path: str
    requests: int
    span_hours: float
    bucket_seconds: int
    mean_rps: float
    bucket_multipliers: tuple[float, ...]
    """Requests per bucket over the mean per bucket (the within-hour shape)."""
    burst: float
    """Busiest bucket over the mean bucket (>= 1)."""
    hourly_weights: tuple[float, ...] | None
    """Mean requests per hour of the day, when the log covers at least 24 hours; else None."""
    clock_times: bool
    notes: tuple[str, ...]

    @property
    def covers_a_day(self) -> bool:
        return self.hourly_weights is not None


def _buckets(seconds: Arr, start: float, end: float, width: float) -> Arr:
    n = int(math.floor((end - start) / width + _TOL))
    if n < 1:
        return np.zeros(0)
    idx = np.floor((seconds - start) / width).astype(np.int64)
    idx = idx[(idx >= 0) & (idx < n)]
    return np.bincount(idx, minlength=n).astype(np.float64)


def trace_shape(path: Path, bucket_seconds: int = 60, unit: Literal["auto", "s", "ms"] = "auto") -> TraceShape:
    """Within-hour shape (peak-to-average over ``bucket_seconds`` buckets) and, from a day or more, a daily one."""
    if bucket_seconds < 1:
        raise InputError("--bucket-seconds", "give 1 second or more")
    seconds, clock = read_timestamps(path, unit)
    start, end = float(seconds[0]), float(seconds[-1])
    span = end - start
    if span < 2 * bucket_seconds:
        raise InputError(
            "--profile", f"{path}: the timestamps span {span:.0f} s; need at least two {bucket_seconds} s buckets"
        )
    notes: list[str] = []
    hours = span / 3600
    if span < SECONDS_PER_DAY:
        counts = _buckets(seconds, start, end, bucket_seconds)
        multipliers = counts / counts.mean()
        hourly = None
        notes.append(
            f"the log covers {hours:.2f} hour(s), less than a day: it gives the within-hour burst only, "
            "not a daily shape; the daily shape comes from the chosen preset (flat unless you pick one)"
        )
    else:
        # whole clock hours inside the log, by hour of the day
        first_hour = math.ceil(start / 3600 - _TOL)
        last_hour = math.floor(end / 3600 + _TOL)
        hour_idx = np.floor(seconds / 3600).astype(np.int64)
        inside = (hour_idx >= first_hour) & (hour_idx < last_hour)
        per_clock_hour = np.bincount(hour_idx[inside] - first_hour, minlength=last_hour - first_hour).astype(np.float64)
        hour_of_day = (np.arange(first_hour, last_hour) % HOURS).astype(np.int64)
        totals = np.bincount(hour_of_day, weights=per_clock_hour, minlength=HOURS)
        covered = np.bincount(hour_of_day, minlength=HOURS).astype(np.float64)
        hourly = tuple(float(t / c) if c else 0.0 for t, c in zip(totals, covered, strict=True))
        if covered.min() == 0:
            notes.append("some hours of the day are not covered by a whole hour of the log: their weight is 0")
        # within-hour shape from the busy clock hours (those with at least half the busiest hour's requests)
        busy = np.nonzero(per_clock_hour >= 0.5 * per_clock_hour.max())[0]
        pooled: list[Arr] = []
        for h in busy:
            h0 = float((first_hour + h) * 3600)
            counts = _buckets(seconds, h0, h0 + 3600, bucket_seconds)
            if counts.sum() > 0:
                pooled.append(counts / counts.mean())
        multipliers = np.concatenate(pooled)
        notes.append(
            f"daily shape from {hours / 24:.1f} day(s) of log; within-hour burst from the {len(busy)} busiest "
            "clock hour(s)" + ("" if clock else "; hours are counted from the log's start, not clock time")
        )
    burst = float(multipliers.max())
    return TraceShape(
        path=str(path),
        requests=len(seconds),
        span_hours=hours,
        bucket_seconds=bucket_seconds,
        mean_rps=len(seconds) / span,
        bucket_multipliers=tuple(float(x) for x in multipliers),
        burst=burst,
        hourly_weights=hourly,
        clock_times=clock,
        notes=tuple(notes),
    )


def profile_from_trace(
    path: Path,
    daily: LoadProfile | None = None,
    bucket_seconds: int = 60,
    unit: Literal["auto", "s", "ms"] = "auto",
) -> LoadProfile:
    """A profile from a request log: its measured within-hour shape, and its daily shape when it covers a day.

    A shorter log keeps the daily shape of ``daily`` (flat by default) and says so in the notes.
    """
    shape = trace_shape(path, bucket_seconds, unit)
    base = daily or preset_profile("flat")
    weights = shape.hourly_weights if shape.hourly_weights is not None else base.weights
    days = 7.0 if shape.hourly_weights is not None else base.days_per_week
    where = f"{shape.requests:,} requests over {shape.span_hours:.2f} h"
    source = f"trace {Path(shape.path).name}: {where}, burst {shape.burst:.2f} over {bucket_seconds} s buckets"
    if shape.hourly_weights is None:
        source += f"; daily shape from {base.name}"
    try:
        return LoadProfile(
            name=Path(shape.path).name if shape.hourly_weights is not None else f"{base.name}+{Path(shape.path).name}",
            weights=weights,
            burst=max(1.0, shape.burst),
            days_per_week=days,
            within_hour=shape.bucket_multipliers,
            source=source,
            notes=shape.notes,
        )
    except ValueError as exc:
        raise InputError("--profile", f"{path}: {exc}") from None


def load_profile(spec: str, burst: float | None = None, daily: str = "flat") -> LoadProfile:
    """A preset name or a trace file; ``burst`` overrides the profile's (or the trace's measured) burst."""
    key = spec.lower().replace("-", "_")
    if key in PRESETS:
        profile = preset_profile(key)
    else:
        path = Path(spec)
        if not path.exists():
            raise InputError("--profile", f"{spec!r} is neither a preset ({', '.join(PRESETS)}) nor a file")
        profile = profile_from_trace(path, preset_profile(daily))
    return profile.with_burst(burst) if burst is not None else profile


# --- owned GPUs per hour of the day ------------------------------------------------------------------


def hourly_replicas(profile: LoadProfile, turns_per_month: float, capacity_rps: float, utilisation: float) -> Arr:
    """Engine replicas each hour needs for its peak: ceil(hour peak / (capacity x utilisation))."""
    peak = profile.hourly_peak_rps(turns_per_month)
    return np.ceil(np.round(peak / (capacity_rps * utilisation), 9))


def _runs(up: npt.NDArray[np.bool_]) -> list[int]:
    """Lengths of the runs of True in a cyclic day (a run over midnight counts once)."""
    if up.all() or not up.any():
        return []
    start = int(np.argmin(up))  # an hour that is down: the day rotated to begin there
    rolled = np.roll(up, -start)
    lengths, n = [], 0
    for v in rolled:
        if v:
            n += 1
        elif n:
            lengths.append(n)
            n = 0
    if n:
        lengths.append(n)
    return lengths


def billed_gpu_hours(
    offer: GpuVmOffer,
    replica_gpus: int,
    hosting: SelfHosting,
    serving: Arr,
    always_on: bool,
    profile: LoadProfile,
) -> tuple[Arr, float]:
    """(instances up in each hour, billed GPU hours per month) for serving replicas per hour of the day.

    Spare replicas are added in hours that serve. Always on: the busiest hour's instances all month
    (730 h). Autoscaled: a floor of ``min_replicas`` stays up; every other instance is billed per run
    of hours it is up plus the start-up time, rounded to the billing granularity; on days without
    traffic (``days_per_week`` < 7) only the floor runs.
    """
    gpi = offer.gpus_per_instance
    serving = np.asarray(serving, dtype=np.float64)
    needed = np.where(serving > 0, serving + hosting.spare_replicas, 0)
    instances = np.ceil(np.round(needed * replica_gpus / gpi, 9))
    peak = float(instances.max())
    if always_on:
        return np.full(HOURS, peak), peak * gpi * HOURS_PER_MONTH
    floor = min(peak, float(math.ceil(hosting.min_replicas * replica_gpus / gpi)))
    instances = np.maximum(instances, floor)
    startup = hosting.startup_minutes / 60
    per_day = 0.0
    for slot in range(1, int(peak) + 1):
        up = instances >= slot
        if up.all():
            per_day += 24
        else:
            per_day += sum(min(billed_hours(n + startup, offer), 24.0) for n in _runs(up))
    idle_days = DAYS_PER_MONTH - profile.active_days_per_month
    hours = (per_day * profile.active_days_per_month + floor * 24 * idle_days) * gpi
    return instances, hours


# --- the options under a profile ------------------------------------------------------------------------


@dataclass(frozen=True)
class OwnedSetup:
    """What an owned option is sized and priced from (adapter over compare's resolution)."""

    sheet: PriceSheet
    offer: GpuVmOffer | DedicatedOffer
    record: ThroughputRecord
    capacity_rps: float
    capacity_note: str


def owned_setup(scenario: Scenario, cat: Catalogs, kind: Literal["self_hosted", "dedicated"]) -> OwnedSetup | None:
    """The offer, record and per-replica capacity compare uses for ``kind`` (None when not chosen)."""
    found = owned_capacity(scenario, cat, kind)
    if found is None:
        return None
    sheet, offer, record, capacity = found
    return OwnedSetup(sheet, offer, record, capacity.requests_per_s, capacity.note)


class ProfileCosts(BaseModel):
    """The three ways to buy under a load profile; self-hosting both always on and autoscaled."""

    model_config = ConfigDict(frozen=True)

    profile: LoadProfile
    turns_per_month: int
    currency: str
    serverless: OptionCost | None
    dedicated: OptionCost | None
    self_hosted_always_on: OptionCost | None
    self_hosted_autoscaled: OptionCost | None
    replicas_per_hour: tuple[int, ...] | None
    """Engine replicas each hour of an active day needs for its peak (self-hosted GPU's capacity)."""
    instances_per_hour: tuple[int, ...] | None
    """Instances up in each hour when autoscaled (spares and the floor included)."""
    autoscale: bool
    """Which self-hosted variant the scenario (or the caller) chose."""
    warnings: tuple[str, ...] = ()

    @property
    def self_hosted(self) -> OptionCost | None:
        return self.self_hosted_autoscaled if self.autoscale else self.self_hosted_always_on

    def options(self) -> dict[str, OptionCost]:
        found = {"serverless": self.serverless, "dedicated": self.dedicated, "self_hosted": self.self_hosted}
        return {k: v for k, v in found.items() if v is not None}

    def frame(self) -> pd.DataFrame:
        """Per hour: load, peak, replicas needed and instances up (autoscaled) - the data for a chart."""
        table = self.profile.table(self.turns_per_month)
        if self.replicas_per_hour is not None:
            table["replicas"] = list(self.replicas_per_hour)
        if self.instances_per_hour is not None:
            table["instances_autoscaled"] = list(self.instances_per_hour)
        return table


def _self_hosted_cost(
    scenario: Scenario,
    setup: OwnedSetup,
    serving: Arr,
    always_on: bool,
    profile: LoadProfile,
    turns: int,
) -> tuple[OptionCost, Arr]:
    """Exact monthly cost of owned GPU VMs serving ``serving`` replicas per hour (Decimal, to the cent)."""
    offer = setup.offer
    assert isinstance(offer, GpuVmOffer)
    hosting, fx, currency = scenario.self_hosting, scenario.fx, scenario.currency
    rg = setup.record.replica_gpus
    instances, gpu_hours = billed_gpu_hours(offer, rg, hosting, serving, always_on, profile)
    price = offer.version_at(scenario.price_date).per_gpu_hour
    owned = bool(serving.max() > 0)
    build_hours = hosting.model_changes_per_month * hosting.build_minutes_per_change / 60 * rg if owned else 0.0
    people = hosting.engineer_monthly_cost * as_decimal(hosting.engineer_share) if owned else Decimal(0)
    src = setup.sheet.currency
    breakdown = {
        "gpu_hours": cents(fx.convert(as_decimal(gpu_hours) * price, src, currency)),
        "engine_builds": cents(fx.convert(as_decimal(build_hours) * price, src, currency)),
        "engineer": cents(people),
    }
    monthly = sum(breakdown.values(), Decimal(0))
    peak_inst = int(instances.max())
    peak_serving = int(serving.max())
    replica_hours = gpu_hours / rg
    mode = (
        "always on at the busiest hour's count"
        if always_on
        else (
            f"autoscaled per hour of the day: {hosting.min_replicas} replica(s) floor, billed per {offer.billing}, "
            f"{hosting.startup_minutes:g} min start-up per scale-up"
        )
    )
    notes = (
        setup.capacity_note,
        f"{peak_serving} replica(s) at the busiest hour + {hosting.spare_replicas} spare, {rg} GPU(s) each, "
        f"{peak_inst} instance(s) of {offer.gpus_per_instance}; {mode}",
    )
    cost = OptionCost(
        option="self_hosted",
        provider=setup.sheet.provider,
        offer=offer.id,
        model=setup.record.model,
        currency=currency,
        monthly=monthly,
        cost_per_1000_turns=monthly / turns * 1000 if turns else None,
        breakdown=breakdown,
        replicas=peak_serving + hosting.spare_replicas if owned else 0,
        gpus=peak_inst * offer.gpus_per_instance,
        instances=peak_inst,
        gpu_hours=gpu_hours,
        utilisation=(turns / 3600) / (setup.capacity_rps * replica_hours) if replica_hours > 0 else None,
        prices=(),
        notes=notes,
    )
    return cost, instances


def profile_costs(
    scenario: Scenario,
    cat: Catalogs,
    profile: LoadProfile,
    autoscale: bool | None = None,
    turns_per_month: int | None = None,
) -> ProfileCosts:
    """Price the scenario's options under ``profile``.

    Serverless is unchanged (per turn). The dedicated endpoint and always-on self-hosting are the core's
    exact options with the profile's peak-to-average (always on, sized for the busiest moment).
    Autoscaled self-hosting bills each hour of the day's replicas with the offer's granularity.
    """
    turns = scenario.traffic.turns_per_month if turns_per_month is None else turns_per_month
    traffic = profile.equivalent_traffic(turns)
    always = scenario.model_copy(
        update={"traffic": traffic, "self_hosting": scenario.self_hosting.model_copy(update={"autoscale": False})}
    )
    base = compare(always, cat)
    serverless, dedicated, always_on = base.option("serverless"), base.option("dedicated"), base.option("self_hosted")
    setup = owned_setup(scenario, cat, "self_hosted")
    autoscaled = None
    replicas = instances = None
    if setup is not None:
        reps = hourly_replicas(profile, turns, setup.capacity_rps, scenario.self_hosting.target_utilisation)
        # an active day with no load in an hour still serves nothing; the busiest hour needs at least 1
        reps[int(np.argmax(reps))] = max(1.0, float(reps.max()))
        autoscaled, inst = _self_hosted_cost(scenario, setup, reps, False, profile, turns)
        assert always_on is not None
        autoscaled = autoscaled.model_copy(update={"prices": always_on.prices, "capacity": always_on.capacity})
        replicas = tuple(int(r) for r in reps)
        instances = tuple(int(i) for i in inst)
    return ProfileCosts(
        profile=profile,
        turns_per_month=turns,
        currency=scenario.currency,
        serverless=serverless,
        dedicated=dedicated,
        self_hosted_always_on=always_on,
        self_hosted_autoscaled=autoscaled,
        replicas_per_hour=replicas,
        instances_per_hour=instances,
        autoscale=scenario.self_hosting.autoscale if autoscale is None else autoscale,
        warnings=base.warnings,
    )


def weights_text(weights: Sequence[float]) -> str:
    """A one-line bar of the 24 hourly weights (for the command line)."""
    bars = " .:-=+*#%@"
    top = max(weights) or 1.0
    return "".join(bars[min(len(bars) - 1, int(round(w / top * (len(bars) - 1))))] for w in weights)
