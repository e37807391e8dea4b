"""Load over the day: 24 hourly weights, on how many days a week, and how bursty an hour is.

A profile says how a month's turns spread over the hours of a day (``weights``, any scale), on
how many days a week the traffic arrives (``days_per_week``: 5 for office use), and how bursty
an hour is inside (``burst``: the busiest moment's rate over the hour's mean). From it follow

    peak-to-average  = max hourly rate / mean hourly rate  x  burst    (over an active day)
    replicas in hour h = ceil(hour h's mean rate x burst / (capacity x target utilisation))

It is part of the scenario (the user's evidence of when traffic arrives), so it lives below the
layers that size and bill from it; ``calculator.planning.load_profile`` reads traces into one and
prices the options under it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Annotated

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

from calculator.catalog.field_docs import FIELD_DOCS
from calculator.catalog.limits import DAYS_PER_WEEK, PEAK_TO_AVERAGE
from calculator.errors import InputError
from calculator.scenario.inputs import DAYS_PER_MONTH, Traffic

if TYPE_CHECKING:  # pandas is imported by table() alone: a scenario is read without it
    import pandas as pd

__all__ = ["HOURS", "PRESETS", "LoadProfile", "check_burst", "preset_profile", "profile_from_traffic", "ramp_shape"]

Arr = npt.NDArray[np.float64]
HOURS = 24
SECONDS_PER_DAY = 24 * 3600
_TOL = 1e-9


def check_burst(burst: float) -> None:
    """A within-hour burst is the busiest moment's rate over the hour's mean: a peak-to-average ratio."""
    PEAK_TO_AVERAGE.check(burst, "load_profile.burst")


def ramp_shape(burst: float, points: int = 3600) -> tuple[float, ...]:
    """A within-hour rate shape (multipliers of the hour's mean, mean 1, max ``burst``), assumed linear.

    The rate rises evenly from ``2 - burst`` to ``burst`` over the hour (mean 1); above a burst of
    2 it is zero for part of the hour and rises from 0 to ``burst`` over the remaining ``2 / burst``
    of it. Used only to split an hour's traffic between owned capacity and overflow when no trace
    gives the measured shape; sizing uses the burst itself.
    """
    check_burst(burst)
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

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=FIELD_DOCS, allow_inf_nan=False)

    name: str = Field(max_length=200)
    weights: tuple[float, ...]
    """24 relative weights, hour 0 (00:00-01:00) to hour 23; any scale."""
    burst: Annotated[float, PEAK_TO_AVERAGE] = 1.0
    """Within-hour peak-to-average: the busiest moment's rate over the hour's mean rate."""
    days_per_week: Annotated[float, DAYS_PER_WEEK] = 7.0
    """Days a week the traffic arrives (5 for office use); the other days carry no load."""
    within_hour: tuple[float, ...] | None = Field(default=None, max_length=SECONDS_PER_DAY)
    """Measured rate multipliers inside an hour (e.g. per minute, mean 1); None = a linear ramp to ``burst``.
    At most one a second of a day (a trace shorter than a day gives its whole span)."""
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

    @model_validator(mode="after")
    def _peak_within_a_month(self) -> LoadProfile:
        # The month's peak over its mean, from the busiest hour, the burst and the quiet days: bounded like
        # every other peak-to-average (the same bound as the scenario's traffic), with a rounding margin.
        if self.peak_to_average > PEAK_TO_AVERAGE.high * (1 + _TOL):
            text = (
                f"this profile's busiest moment is {self.peak_to_average:.3g} times the month's mean rate "
                f"(busiest hour x burst {self.burst:g} x 7 / {self.days_per_week:g} days a week): "
                f"{PEAK_TO_AVERAGE.why} (allowed: up to {PEAK_TO_AVERAGE.high:,.0f})"
            )
            raise PydanticCustomError("limit", "{text}", {"text": text})
        return self

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
        check_burst(burst)
        try:
            return LoadProfile.model_validate({**self.model_dump(), "burst": float(burst), "within_hour": None})
        except ValidationError as exc:  # the burst pushes the month's peak past its bound
            raise InputError("load_profile.burst", exc.errors(include_url=False)[0]["msg"]) from None

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
        import pandas as pd

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
        raise InputError("load_profile", f"unknown profile {name!r}; choose {', '.join(PRESETS)} or a trace file")
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
