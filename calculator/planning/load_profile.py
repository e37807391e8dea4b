"""Load over the day and what it does to GPU costs: traces read into profiles, options priced under one.

The profile itself (24 hourly weights, days a week, burst) is part of the scenario
(:mod:`calculator.scenario.load`). Here owned GPUs are billed per hour of the day through the one
billing module (:mod:`calculator.pricing.billing`): always on, the busiest hour's count all month;
autoscaled, each instance "slot" is billed for every run of hours it is up, plus the start-up time,
rounded up to the offer's billing granularity (per-second billing makes scaling down real). The
always-on count and the dedicated endpoint are ``compare``'s own options with the equivalent
peak-to-average, so a flat profile gives exactly the replicas of ``Traffic(peak_to_average=1)``.

A trace (CSV with a ``TIMESTAMP`` column, JSON Lines with ``timestamp``) gives the within-hour
shape from request counts in 1-minute buckets; only a trace that covers at least a whole day can
give a daily shape. One hour of data (the Azure traces) cannot, and the profile says so.
"""

from __future__ import annotations

import csv
import math
import re
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd
from pydantic import BaseModel, ConfigDict

from calculator.catalog.catalogs import Catalogs
from calculator.catalog.datafile import DataFileError
from calculator.catalog.prices import DedicatedOffer
from calculator.catalog.textfile import Malformed, is_utf8, json_lines, text_lines
from calculator.errors import InputError, Problem
from calculator.pricing.billing import (
    VmCounts,
    dedicated_cost,
    profile_replicas,
    profile_schedule,
    self_hosted_cost,
    vm_counts,
)
from calculator.pricing.cheapest import with_cheapest_offers
from calculator.pricing.compare import compare
from calculator.pricing.option import OptionCost
from calculator.pricing.resolve import OwnedSide, ResolvedScenario, resolve
from calculator.scenario.load import HOURS, PRESETS, LoadProfile, preset_profile, profile_from_traffic, ramp_shape
from calculator.scenario.model import Scenario

__all__ = [
    "HOURS",
    "PRESETS",
    "LoadProfile",
    "ProfileCosts",
    "TraceShape",
    "costs_under_profile",
    "hourly_replicas",
    "load_profile",
    "owned_under_profile",
    "profile_schedule",
    "resolve_for_profile",
    "preset_profile",
    "profile_costs",
    "profile_from_traffic",
    "profile_from_trace",
    "ramp_shape",
    "read_timestamps",
    "trace_shape",
]

Arr = npt.NDArray[np.float64]
SECONDS_PER_DAY = 24 * 3600
_TOL = 1e-9


# --- traces ----------------------------------------------------------------------------------------


_CHUNK = 65_536
MAX_SPAN_DAYS = 3660
"""Longest span of a trace's timestamps (ten years): beyond it the times are in another unit or wrong,
and hourly counts over it would only cost memory."""


def _number(value: object) -> float | None:
    """Seconds (or milliseconds) from a number or a numeric string: None when it is no number, and not
    finite when it is one beyond any float (a 400-digit integer, ``1e999``)."""
    if isinstance(value, float | int) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:
            return math.inf
    if isinstance(value, str):
        try:
            return float(value)  # float() ignores the spaces around a number
        except ValueError:
            return None
    return None


class _Stamps:
    """Arrival times in seconds, gathered as a trace streams in (8 bytes a request). Numbers or date-times,
    decided by the first value; a value of the other kind, or one that is no time, is a malformed line."""

    def __init__(self, unit: float, malformed: Malformed) -> None:
        self.unit = unit
        self.malformed = malformed
        self.seconds = array("d")
        self.clock: bool | None = None
        self.pending: list[tuple[int, str]] = []

    def add(self, line: int, value: object) -> None:
        if value is None or (isinstance(value, str) and not value.strip()):
            self.malformed.add(line, "no timestamp")
            return
        number = _number(value)
        if self.clock is None:
            self.clock = number is None
        if not self.clock:
            if number is None:
                self.malformed.add(line, f"{str(value)[:40]!r} is not a number, like the first timestamp")
            elif not math.isfinite(number):
                self.malformed.add(line, f"{str(value)[:40]!r} is not a finite number")
            else:
                self.seconds.append(number * self.unit)
        elif number is not None or not isinstance(value, str):
            self.malformed.add(line, f"{str(value)[:40]!r} is not a date-time, like the first timestamp")
        else:
            self.pending.append((line, value))
            if len(self.pending) >= _CHUNK:
                self.flush()

    def flush(self) -> None:
        """Parse the date-times gathered so far at once (pandas reads many formats, and fast in bulk)."""
        if not self.pending:
            return
        lines, texts = zip(*self.pending, strict=True)
        self.pending = []
        times = pd.to_datetime(pd.Series(texts, dtype=object), format="mixed", errors="coerce", utc=True)
        seconds = ((times - pd.Timestamp(0, tz="UTC")).dt.total_seconds()).to_numpy(dtype=np.float64)
        for line, text, value in zip(lines, texts, seconds, strict=True):
            if math.isnan(value):
                self.malformed.add(line, f"{text[:40]!r} is not a date-time (or not one that exists)")
            else:
                self.seconds.append(float(value))


def _read_trace(
    path: Path | str | IO[bytes], unit: Literal["auto", "s", "ms"], name: str, max_chars: int | None
) -> tuple[Arr, bool, Malformed]:
    suffixes = re.sub(r"\.(gz|zst|zstd)$", "", "".join(Path(name).suffixes).lower())  # the kind under the packing
    malformed = Malformed(name)
    if suffixes.endswith((".jsonl", ".json")):
        stamps = _Stamps(0.001 if unit in ("auto", "ms") else 1.0, malformed)  # Mooncake writes milliseconds
        for number, row in json_lines(path, name, malformed, max_chars):
            if not isinstance(row, dict) or "timestamp" not in row:
                malformed.add(number, "no 'timestamp' key")
            else:
                stamps.add(number, row["timestamp"])
    else:
        stamps = _Stamps(0.001 if unit == "ms" else 1.0, malformed)
        column: int | None = None
        for number, line in text_lines(path, name, max_chars):
            if not line.strip():
                continue
            if not is_utf8(line):  # its cells would carry the undecodable bytes into a message
                if column is None:
                    raise InputError("load_profile", f"{name}:{number}: not UTF-8 text; save the file as UTF-8")
                malformed.add(number, "not UTF-8 text")
                continue
            try:
                row = next(csv.reader((line,)))
            except csv.Error as exc:
                malformed.add(number, f"not a CSV row ({exc})")
                continue
            if column is None:
                names = [cell.strip().lower() for cell in row]
                if "timestamp" not in names:
                    raise InputError("load_profile", f"{name}: no TIMESTAMP column (columns: {', '.join(row)[:200]})")
                column = names.index("timestamp")
            elif column < len(row):
                stamps.add(number, row[column])
            else:
                malformed.add(number, "no TIMESTAMP value")
    stamps.flush()
    seconds = np.sort(np.frombuffer(stamps.seconds, dtype=np.float64))
    if len(seconds) < 2:
        if malformed.count:
            more = f" (and {malformed.count - 1:,} more)" if malformed.count > 1 else ""
            raise InputError("load_profile", f"fewer than 2 timestamps; {malformed.lines[0]}{more}")
        raise InputError("load_profile", f"{name}: fewer than 2 timestamps")
    return seconds, bool(stamps.clock), malformed


def read_timestamps(
    path: Path | str | IO[bytes],
    unit: Literal["auto", "s", "ms"] = "auto",
    *,
    name: str | None = None,
    max_chars: int | None = None,
) -> tuple[Arr, bool]:
    """Request arrival times in seconds (sorted) and whether they are clock times (not offsets).

    CSV: a column named ``timestamp`` (any case): date-times, or numbers in ``unit`` (auto: seconds).
    JSON Lines: a ``timestamp`` key per line: date-time strings, or numbers (auto: milliseconds, as
    Mooncake traces write them). The file is read as every log is (:mod:`calculator.catalog.textfile`),
    as a stream; a line without a usable time is skipped and counted (:func:`trace_shape` notes how many).
    ``name`` (an upload's) decides the kind by its suffix; ``max_chars`` caps what is read.
    """
    seconds, clock, _ = _trace(path, unit, name or str(path), max_chars)
    return seconds, clock


def _trace(
    path: Path | str | IO[bytes], unit: Literal["auto", "s", "ms"], name: str, max_chars: int | None
) -> tuple[Arr, bool, Malformed]:
    """:func:`_read_trace`, its file errors said as the load profile's (the input they came in by)."""
    try:
        return _read_trace(path, unit, name, max_chars)
    except DataFileError as exc:
        raise InputError("load_profile", exc.lines[0]) from None


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


def _per_hour(seconds: Arr, first_hour: int, hours: int, width: int) -> Arr:
    """Requests per ``width``-second bucket of each clock hour from ``first_hour`` on: (hours, buckets);
    a last bucket cut short by the hour is left out, as a short bucket would read as a dip. One pass."""
    per_hour = int(3600 // width)
    hour = np.floor(seconds / 3600).astype(np.int64) - first_hour
    within = np.floor((seconds - (hour + first_hour) * 3600.0) / width).astype(np.int64)
    keep = (hour >= 0) & (hour < hours) & (within < per_hour)
    counts = np.bincount(hour[keep] * per_hour + within[keep], minlength=hours * per_hour)
    return counts.astype(np.float64).reshape(hours, per_hour)


def trace_shape(
    path: Path | str | IO[bytes],
    bucket_seconds: int = 60,
    unit: Literal["auto", "s", "ms"] = "auto",
    *,
    name: str | None = None,
    max_chars: int | None = None,
) -> TraceShape:
    """Within-hour shape (peak-to-average over ``bucket_seconds`` buckets) and, from a day or more, a daily one."""
    if bucket_seconds < 1:
        raise InputError("load_profile.bucket_seconds", "give 1 second or more")
    label = name or str(path)
    seconds, clock, malformed = _trace(path, unit, label, max_chars)
    start, end = float(seconds[0]), float(seconds[-1])
    span = end - start
    if span < 2 * bucket_seconds:
        raise InputError(
            "load_profile", f"{label}: the timestamps span {span:.0f} s; need at least two {bucket_seconds} s buckets"
        )
    if span > MAX_SPAN_DAYS * SECONDS_PER_DAY:
        raise InputError(
            "load_profile",
            f"{label}: the timestamps span {span / SECONDS_PER_DAY / 365.25:,.0f} years; a request log covers hours "
            "to months (are they in another unit? numbers count seconds in CSV and milliseconds in JSON Lines)",
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
        buckets = _per_hour(seconds, first_hour, last_hour - first_hour, bucket_seconds)[busy]
        buckets = buckets[buckets.sum(axis=1) > 0]
        multipliers = (buckets / buckets.mean(axis=1, keepdims=True)).ravel()
        notes.append(
            f"daily shape from {hours / 24:.1f} day(s) of log; within-hour burst from the {len(busy)} busiest "
            "clock hour(s)" + ("" if clock else "; hours are counted from the log's start, not clock time")
        )
    if malformed.count:
        notes.append(f"{malformed.count:,} line(s) of the log skipped, the first: {malformed.lines[0]}")
    burst = float(multipliers.max())
    return TraceShape(
        path=label,
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
    path: Path | str | IO[bytes],
    daily: LoadProfile | None = None,
    bucket_seconds: int = 60,
    unit: Literal["auto", "s", "ms"] = "auto",
    *,
    name: str | None = None,
    max_chars: int | None = None,
) -> LoadProfile:
    """A profile from a request log: its measured within-hour shape, and its daily shape when it covers a day.

    A shorter log keeps the daily shape of ``daily`` (flat by default) and says so in the notes.
    """
    shape = trace_shape(path, bucket_seconds, unit, name=name, max_chars=max_chars)
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
        raise InputError("load_profile", f"{shape.path}: {exc}") from None


def load_profile(spec: str, burst: float | None = None, daily: str = "flat") -> LoadProfile:
    """A preset name or a trace file; ``burst`` overrides the profile's (or the trace's measured) burst."""
    key = spec.lower().replace("-", "_")
    if key in PRESETS:
        profile = preset_profile(key)
    else:
        path = Path(spec)
        try:
            found = path.exists()
        except OSError:  # a name longer than the file system takes (or otherwise unusable) names no file
            found = False
        if not found:
            raise InputError("load_profile", f"{spec!r} is neither a preset ({', '.join(PRESETS)}) nor a file")
        profile = profile_from_trace(path, preset_profile(daily))
    return profile.with_burst(burst) if burst is not None else profile


# --- owned GPUs per hour of the day ------------------------------------------------------------------


def hourly_replicas(profile: LoadProfile, turns_per_month: float, capacity_rps: float, utilisation: float) -> Arr:
    """Engine replicas each hour of an active day needs for its peak (the billing module's rule)."""
    return np.asarray(profile_replicas(profile, turns_per_month, capacity_rps, utilisation)[0], dtype=np.float64)


# --- the options under a profile ------------------------------------------------------------------------


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
    warnings: tuple[Problem, ...] = ()

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


def owned_under_profile(
    res: ResolvedScenario, side: OwnedSide, profile: LoadProfile, serving: Arr, always_on: bool, turns: int
) -> tuple[OptionCost, VmCounts | None]:
    """The exact monthly bill of owned capacity serving ``serving`` replicas in each hour of the day."""
    s = res.scenario
    hosting = s.self_hosting
    schedule = profile_schedule(profile, serving, always_on)
    if isinstance(side.offer, DedicatedOffer):
        cost = dedicated_cost(
            side.sheet, side.offer, res.as_of, side.replica_gpus, schedule, side.capacity, turns, s.currency, s.fx,
            side.model,
        )  # fmt: skip
        return cost, None
    counts = vm_counts(side.offer, side.replica_gpus, hosting, schedule)
    mode = (
        "always on at the busiest hour's count"
        if always_on
        else (
            f"autoscaled per hour of the day: {hosting.min_replicas} replica(s) floor, billed per "
            f"{side.offer.billing}, {hosting.startup_minutes:g} min start-up per scale-up"
        )
    )
    cost = self_hosted_cost(
        side.sheet, side.offer, res.as_of, side.replica_gpus, hosting, schedule, side.capacity, turns, s.currency,
        s.fx, side.model, mode_note=mode,
    )  # fmt: skip
    return cost, counts


def costs_under_profile(
    res: ResolvedScenario, profile: LoadProfile, autoscale: bool, turns_per_month: int
) -> ProfileCosts:
    """Price a resolved scenario (with the profile's equivalent traffic) under ``profile``."""
    base = compare(res)
    serverless, dedicated, always_on = base.option("serverless"), base.option("dedicated"), base.option("self_hosted")
    side = res.self_hosted
    autoscaled = None
    replicas = instances = None
    if side is not None:
        util = res.scenario.self_hosting.target_utilisation
        reps = hourly_replicas(profile, turns_per_month, side.capacity.requests_per_s, util)
        autoscaled, counts = owned_under_profile(res, side, profile, reps, False, turns_per_month)
        assert counts is not None
        replicas = tuple(int(r) for r in counts.serving[0])
        instances = tuple(int(i) for i in counts.instances[0])
    return ProfileCosts(
        profile=profile,
        turns_per_month=turns_per_month,
        currency=res.scenario.currency,
        serverless=serverless,
        dedicated=dedicated,
        self_hosted_always_on=always_on,
        self_hosted_autoscaled=autoscaled,
        replicas_per_hour=replicas,
        instances_per_hour=instances,
        autoscale=autoscale,
        warnings=base.warnings,
    )


def resolve_for_profile(
    scenario: Scenario, cat: Catalogs, profile: LoadProfile, turns_per_month: int | None = None
) -> ResolvedScenario:
    """The scenario with the profile's equivalent traffic (always on), resolved once."""
    scenario = with_cheapest_offers(scenario, cat)[0]  # 'cheapest' picked for the scenario as given, then held
    turns = scenario.traffic.turns_per_month if turns_per_month is None else turns_per_month
    always = scenario.model_copy(
        update={
            "traffic": profile.equivalent_traffic(turns),
            "self_hosting": scenario.self_hosting.model_copy(update={"autoscale": False}),
        }
    )
    return resolve(always, cat)


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
    res = resolve_for_profile(scenario, cat, profile, turns_per_month)
    scale = scenario.self_hosting.autoscale if autoscale is None else autoscale
    return costs_under_profile(res, profile, scale, res.scenario.traffic.turns_per_month)


def weights_text(weights: Sequence[float]) -> str:
    """A one-line bar of the 24 hourly weights (for the command line)."""
    bars = " .:-=+*#%@"
    top = max(weights) or 1.0
    return "".join(bars[min(len(bars) - 1, int(round(w / top * (len(bars) - 1))))] for w in weights)
