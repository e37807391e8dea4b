"""Capacity is a saturation point: the load levels of one run read as one curve.

A benchmark run steps its offered load up (a request rate, or a number of requests kept in flight) and
records what the replica served at each level. One level alone is not the replica's capacity: a level
that served what it was offered (rate 4 offered, 4.04 served) says only "at least this much", and sizing
GPUs from it overstates how many are needed. The capacity of a setup is read from the whole series:

- with a latency target, the highest served throughput among the levels that meet it;
- without one, the saturation point: the first level (by offered load) where the replica stopped keeping
  up. For a request-rate run, where it served clearly less than offered (below 95%) and no busier level
  served more at a latency within 2x of its own (past that point the queue, not the replica, absorbs the
  extra load, and latency climbs). For a fixed-concurrency run, where more requests in flight stopped
  buying at least 10% more throughput. An "as fast as possible" run (every request offered at once) is
  saturated by construction.

A level chosen this way is labelled ``saturated`` (the replica was at its limit there) or ``at_least``
(it kept up with what it was offered, so the capacity is this or more: a lower bound).

Why the latency check for rate runs: a short run's served rate is its completed requests over its
duration, and the duration includes the last requests' own latency. vLLM's 300-prompt run at 10 req/s
served 8.37 (84%) with a 53 ms TTFT, and the same setup then served 22 at 30 req/s with a TTFT under
80 ms: the 16% shortfall at rate 10 was the run's end, not the replica's limit.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from calculator.capacity.sizing import Bound, best_under_target
from calculator.catalog.measurements import ThroughputRecord, comparable
from calculator.errors import InputError
from calculator.scenario.inputs import LatencyTarget

__all__ = [
    "KEPT_UP",
    "Bound",
    "SeriesCapacity",
    "describe",
    "level_bound",
    "offered_load",
    "read_series",
    "same_series",
    "series_of",
    "served_output_tokens_per_s",
    "three_figures",
]

LoadKind = Literal["rate", "concurrency", "unstated"]

KEPT_UP = 0.95
"""A rate level served what it was offered when it served at least 95% of it (tools round; runs start and end)."""
STILL_RISING = 1.10
"""More requests in flight still buy throughput when the next level served at least 10% more."""
MORE = 1.05
"""A busier rate level served more when it served at least 5% more."""
LATENCY_CLIMB = 2.0
"""A latency (TTFT, inter-token or end-to-end, median) more than twice another level's has climbed: queueing."""


def served_output_tokens_per_s(r: ThroughputRecord) -> float:
    """Output tokens/s of the replica: as measured, else requests/s x mean output length."""
    return r.output_tokens_per_s or r.requests_per_s * r.output_tokens


def offered_load(r: ThroughputRecord) -> tuple[LoadKind, float]:
    """What the run offered: its request rate, else its requests in flight. A tool's file with neither is an
    "as fast as possible" run (the importers leave the rate empty for an infinite one); a record typed in or
    written by hand with neither does not say what it was offered ("unstated")."""
    if r.request_rate is not None:
        return "rate", r.request_rate
    if r.concurrency is not None:
        return "concurrency", r.concurrency
    return ("rate", math.inf) if r.tool else ("unstated", math.inf)


def same_series(a: ThroughputRecord, b: ThroughputRecord) -> bool:
    """Whether two records are load levels of one run: the same engine, version and tool, a comparable setup
    and traffic shape (:func:`~calculator.catalog.measurements.comparable`), and the same kind of offered load.

    Published records from different pages are different runs; imported files are not compared by source,
    since AIPerf and genai-perf write one file per level.
    """
    if (a.engine, a.engine_version, a.tool) != (b.engine, b.engine_version, b.tool):
        return False
    kind = offered_load(a)[0]
    if kind == "unstated" or offered_load(b)[0] != kind:
        return False  # levels whose offered load is not stated cannot be placed on a curve
    if a.source.url and b.source.url and a.source.url != b.source.url:
        return False
    return comparable(a, b)[0]


def series_of(record: ThroughputRecord, records: Iterable[ThroughputRecord]) -> tuple[ThroughputRecord, ...]:
    """``record`` and the levels of its run among ``records``, by rising offered load (then served rate).

    ``record`` stands for a record of the same id in ``records`` (a copy with its model's parameters filled in).
    """
    levels = [record] + [r for r in records if r.id != record.id and same_series(r, record)]
    return tuple(sorted(levels, key=lambda r: (offered_load(r)[1], r.requests_per_s)))


def _latencies(r: ThroughputRecord) -> dict[str, float]:
    found = {}
    for name, lat in (("TTFT", r.ttft_ms), ("inter-token latency", r.itl_ms), ("end-to-end latency", r.e2e_ms)):
        value = lat.p50 if lat.p50 is not None else lat.mean
        if value is not None:
            found[name] = value
    return found


def _climbed(busier: ThroughputRecord, level: ThroughputRecord) -> bool:
    """Whether ``busier``'s latency climbed past twice ``level``'s on a figure both state (yes when none shared:
    a higher rate with no latency to show it held is not evidence that the replica kept up)."""
    mine, theirs = _latencies(level), _latencies(busier)
    shared = [k for k in mine if k in theirs and mine[k] > 0]
    return not shared or any(theirs[k] > LATENCY_CLIMB * mine[k] for k in shared)


def three_figures(x: float) -> str:
    """Three significant figures, never in exponent form: a small model's 1,346 req/s, not 1.35e+03."""
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.3g}"


_g = three_figures


def level_bound(record: ThroughputRecord, series: Sequence[ThroughputRecord]) -> tuple[Bound, str]:
    """Whether the replica was at its limit at ``record``'s level of ``series``, and why, in words."""
    kind, load = offered_load(record)
    served = record.requests_per_s
    if kind == "unstated":
        return "unknown", (
            f"{record.id} does not say what load it was offered, so whether the replica was at its limit there "
            "is not known"
        )
    busier = [r for r in series if r.id != record.id and offered_load(r)[1] > load]
    if kind == "rate":
        if math.isinf(load):
            return "saturated", f"{record.id} was offered every request at once and served {_g(served)} req/s"
        if served >= KEPT_UP * load:
            return "at_least", f"{record.id} served what it was offered ({_g(served)} of {_g(load)} req/s)"
        held = [r for r in busier if r.requests_per_s >= MORE * served and not _climbed(r, record)]
        if held:
            return "at_least", (
                f"{record.id} served {_g(served)} of the {_g(load)} req/s offered, but {held[0].id} served "
                f"{_g(held[0].requests_per_s)} at a latency within {LATENCY_CLIMB:g}x: the shortfall is the run's "
                "start and end, not the replica's limit"
            )
        return "saturated", f"{record.id} was offered {_g(load)} req/s and served {_g(served)}"
    if busier:
        rising = [r for r in busier if r.requests_per_s >= STILL_RISING * served]
        if rising:
            return "at_least", (
                f"{record.id} served {_g(served)} req/s at {_g(load)} in flight, and {rising[0].id} served "
                f"{_g(rising[0].requests_per_s)} with more in flight"
            )
        top = max(offered_load(r)[1] for r in busier)
        return "saturated", (
            f"{record.id} served {_g(served)} req/s at {_g(load)} in flight, and up to {_g(top)} in flight served "
            f"less than {STILL_RISING - 1:.0%} more"
        )
    lighter = [r for r in series if r.id != record.id and offered_load(r)[1] < load]
    if lighter:
        before = max(lighter, key=lambda r: r.requests_per_s)
        if served < STILL_RISING * before.requests_per_s:
            return "saturated", (
                f"{record.id} served {_g(served)} req/s at {_g(load)} in flight, less than {STILL_RISING - 1:.0%} "
                f"more than {before.id} ({_g(before.requests_per_s)})"
            )
    return "at_least", f"{record.id} served {_g(served)} req/s at {_g(load)} in flight, the most tried"


class SeriesCapacity(BaseModel):
    """A replica's capacity as read from its run's load levels, and how sure that reading is."""

    model_config = ConfigDict(frozen=True)

    record: ThroughputRecord
    """The level that is the capacity (the one GPUs are sized from)."""
    requests_per_s: float
    output_tokens_per_s: float
    bound: Bound
    """``saturated``: the replica was at its limit there; ``at_least``: it kept up, so this is a lower bound;
    ``unknown``: the record does not say what load it was offered (figures typed in)."""
    levels: tuple[str, ...]
    """The ids of the run's levels, by rising offered load."""
    sentence: str
    """The reading in words, for the page and the command line."""


def _target_words(target: LatencyTarget) -> str:
    parts = []
    if target.ttft_ms is not None:
        parts.append(f"TTFT at most {target.ttft_ms:g} ms")
    if target.tokens_per_s_per_user is not None:
        parts.append(f"at least {target.tokens_per_s_per_user:g} tokens/s per user")
    return f"{target.percentile} " + " and ".join(parts)


def describe(
    record: ThroughputRecord, series: Sequence[ThroughputRecord], target: LatencyTarget | None = None
) -> SeriesCapacity:
    """``record`` as the capacity of its ``series``, labelled saturated or at least, with the sentence saying so."""
    bound, why = level_bound(record, series)
    tokens = served_output_tokens_per_s(record)
    figures = f"{_g(record.requests_per_s)} req/s ({tokens:,.0f} output tokens/s)"
    n = len(series)
    if target is not None:
        how = f"the busiest of {n} load level(s) meeting the {_target_words(target)} target"
    elif n == 1:
        how = "its only load level"
    elif bound == "saturated":
        how = f"the saturation point of {n} load levels"
    else:
        how = f"the busiest of {n} load levels, none saturated"
    if bound == "unknown":
        head = f"Capacity {figures} as the record states it: {why}."
    elif bound == "saturated":
        head = f"Capacity {figures}, {how}: {why}."
        beyond = [r for r in series if r.requests_per_s > record.requests_per_s]
        if target is None and beyond and offered_load(record)[0] == "rate":
            # a busier level served more only as its queue grew: a target that tolerates its latency can use it
            top = max(beyond, key=lambda r: r.requests_per_s)
            head += (
                f" Busier levels served up to {_g(top.requests_per_s)} req/s ({top.id}) at more than "
                f"{LATENCY_CLIMB:g}x the latency: set a latency target to size from them."
            )
    elif n == 1:
        head = (
            f"At least {figures}, a lower bound, not the capacity: {why}, and it is {how} "
            "(measure busier levels of the same setup to find where it saturates)."
        )
    else:
        head = f"At least {figures}, a lower bound, {how}: {why}."
    return SeriesCapacity(
        record=record,
        requests_per_s=record.requests_per_s,
        output_tokens_per_s=tokens,
        bound=bound,
        levels=tuple(r.id for r in series),
        sentence=head,
    )


def read_series(series: Sequence[ThroughputRecord], target: LatencyTarget | None = None) -> SeriesCapacity:
    """The capacity of a run: the busiest level meeting ``target``, or without one its saturation point (the
    first level, by offered load, at its limit; the busiest level, at least, when none was).

    Raises InputError (``self_hosting.latency_target``) when no level meets the target, each level's reason listed.
    """
    if not series:
        raise InputError("self_hosting.record", "no load level to read a capacity from")
    if target is not None:
        best, reasons = best_under_target(list(series), target)
        if best is None:
            raise InputError(
                "self_hosting.latency_target",
                f"no load level of {series[0].label} meets it: " + "; ".join(reasons),
            )
        return describe(best, series, target)
    for level in series:
        if level_bound(level, series)[0] == "saturated":
            return describe(level, series)
    return describe(max(series, key=lambda r: r.requests_per_s), series)
