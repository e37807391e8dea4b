"""One setup, estimated: what an engine would measure for a model on GPUs when nobody has measured it.

A setup is a model on ``gpus`` GPUs per replica (``replicas`` of them), a precision and KV dtype, an engine, an
attention layout, and a request shape. The estimate answers one of three loads:

- ``concurrency``: that many requests always in flight (a benchmark's ``--max-concurrency``);
- ``offline``: as many in flight as the engine schedules and the KV cache holds (a throughput benchmark);
- latency targets: the highest Poisson load whose TTFT and time per output token (TPOT) meet them at a
  percentile, and the batch that load runs at.

The batch is never a hidden default: it is what the load puts in flight, capped by what fits in the KV cache
and by the engine's own scheduler limit (vLLM's ``max_num_seqs``), and ``max_batch`` only when the user sets
it. Speeds come from the roofline (:mod:`calculator.capacity.roofline`); the error band is the roofline's
published-measurement error (:func:`calculator.capacity.calibration.estimate_error`) applied to the answer.

Latency under a Poisson load (:func:`latency_at`): a request's TTFT is its own prefill, the decode steps its
chunks ride, and two waits whose tails are exponential: for a free slot (Erlang C: the chance of waiting, then
an exponential tail at the rate slots free up) and behind other prompts' prefill (single-server, a wait with
probability rho and the M/D/1 mean). Percentiles add the two waits' percentiles, which errs long. TPOT is the
decode step at the mean number of sequences in flight (Little's law), stretched by the share of time the
replica spends on other prompts' prefill. At a fixed concurrency with fixed lengths every request sees the
same steady state, so its percentiles are equal.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict

from calculator.capacity.batch import MEMORY_ENGINE, Engine, batch_cap
from calculator.capacity.calibration import estimate_error
from calculator.capacity.memory import FitResult, default_kv_dtype, fit
from calculator.capacity.roofline import DEFAULT_ASSUMPTIONS, ReplicaSpeed, RooflineAssumptions, replica_speed
from calculator.capacity.ttft import TTFT_OVERHEAD_MS, chunk_tokens_for, erlang_c_wait_s
from calculator.catalog.gpus import GpuSpec
from calculator.catalog.models import ModelSpec
from calculator.errors import InputError

__all__ = [
    "PERCENTILES",
    "ErrorBand",
    "Percentile",
    "Percentiles",
    "SetupEstimate",
    "estimate_setup",
    "latency_at",
]

Percentile = Literal["p50", "p90", "p95", "p99"]
PERCENTILES: tuple[Percentile, ...] = ("p50", "p90", "p95", "p99")
_LEVEL = {"p50": 0.50, "p90": 0.90, "p95": 0.95, "p99": 0.99}
_SEARCH_STEPS = 48
"""Bisection steps over the load: the rate is then known to 1 part in 2^48, far below any other error."""


class Percentiles(BaseModel):
    """A latency at the four percentiles benchmark tools print, in milliseconds."""

    model_config = ConfigDict(frozen=True)

    p50: float
    p90: float
    p95: float
    p99: float

    def at(self, percentile: Percentile) -> float:
        value: float = getattr(self, percentile)
        return value


class ErrorBand(BaseModel):
    """Where the engine's measured output tokens/s lies for 8 in 10 published cases, given this estimate: the
    estimate divided by one plus the 90th and the 10th percentile of the estimator's signed error."""

    model_config = ConfigDict(frozen=True)

    low: float
    high: float
    provenance: str


class SetupEstimate(BaseModel):
    """What the engine would measure for one setup at one load: always an estimate, named as such."""

    model_config = ConfigDict(frozen=True)

    estimator: Literal["roofline", "profiled"]
    load: str
    """The load answered, in words: ``concurrency 64``, ``offline``, or the highest load meeting the targets."""
    replicas: int
    batch: int
    """Sequences in flight per replica (the mean under a Poisson load)."""
    batch_limit: int
    """The most one replica can hold at once: the KV cache, the engine's scheduler limit or ``max_batch``."""
    batch_limit_reason: str
    requests_per_s: float
    """All replicas together."""
    output_tokens_per_s: float
    """All replicas together."""
    tokens_per_s_per_user: float
    ttft_ms: Percentiles
    tpot_ms: Percentiles
    bound: Literal["memory", "compute"]
    """Which roof a decode step hits."""
    error_band: ErrorBand
    fit: FitResult
    notes: tuple[str, ...] = ()


def _speed(
    model: ModelSpec,
    gpu: GpuSpec,
    gpus: int,
    precision: str,
    kv_dtype: str,
    attention: Literal["tp", "dp"],
    input_tokens: float,
    output_tokens: float,
    batch: float,
    assumptions: RooflineAssumptions,
) -> ReplicaSpeed:
    held = max(1, math.ceil(batch))
    return replica_speed(
        model, gpu, precision, input_tokens, output_tokens, held, gpus, kv_dtype, assumptions, attention=attention
    )


def _exponential_tail(chance: float, rate: float, level: float) -> float:
    """The ``level`` quantile of a wait that is zero with probability ``1 - chance`` and else exponential at
    ``rate``: zero when the chance of waiting is below ``1 - level``."""
    if chance <= 1 - level:
        return 0.0
    if rate <= 0:
        return math.inf
    return math.log(chance / (1 - level)) / rate


def latency_at(
    speed_at: ReplicaSpeed,
    uncached_tokens: float,
    output_tokens: float,
    rate: float,
    slots: int,
    chunk_tokens: int,
    *,
    decoding: float,
    steady: bool = False,
) -> tuple[Percentiles, Percentiles]:
    """TTFT and TPOT percentiles (ms) of one replica receiving ``rate`` requests/s (Poisson) with ``slots``
    sequences at most, ``decoding`` of them in flight on average (``speed_at`` is the replica's speed at that
    batch). ``steady``: a closed loop at a fixed concurrency, where every request sees the same state."""
    prefill_s = uncached_tokens / speed_at.prefill_tokens_per_s
    step_s = speed_at.decode.step_ms / 1000
    rho = rate * prefill_s
    chunks = math.ceil(uncached_tokens / chunk_tokens) if uncached_tokens > 0 else 0
    others = min(max(decoding - 1, 0.0), 1.0)
    base_s = prefill_s + (chunks + 0.5) * step_s * others + TTFT_OVERHEAD_MS / 1000
    # decode shares the replica with other prompts' prefill; a closed loop's own prompt is not among them
    others_prefill = rho * (decoding - 1) / decoding if steady and decoding > 0 else rho
    stretch = 1 / (1 - others_prefill) if others_prefill < 1 else math.inf
    tpot_ms = step_s * stretch * 1000
    if steady:
        ttft = Percentiles(**dict.fromkeys(PERCENTILES, base_s * 1000))
        return ttft, Percentiles(**dict.fromkeys(PERCENTILES, tpot_ms))
    duration_s = prefill_s + output_tokens * step_s * stretch
    offered = rate * duration_s
    waits = {}
    for name in PERCENTILES:
        level = _LEVEL[name]
        if rho >= 1 or offered >= slots:
            waits[name] = math.inf
            continue
        # Erlang C: the chance all slots are busy, then slots free up at (slots - offered) / duration
        mean_slot = erlang_c_wait_s(slots, offered, duration_s)
        busy = mean_slot * (slots - offered) / duration_s if duration_s > 0 else 0.0
        slot_wait = _exponential_tail(busy, (slots - offered) / duration_s, level)
        # other prompts' prefill: queued with probability rho, the M/D/1 mean rho S / (2 (1 - rho)) given queued
        mean_queued = prefill_s / (2 * (1 - rho)) if rho > 0 else 0.0
        prefill_wait = _exponential_tail(rho, 1 / mean_queued, level) if mean_queued > 0 else 0.0
        waits[name] = slot_wait + prefill_wait
    ttft = Percentiles(**{name: (base_s + waits[name]) * 1000 for name in PERCENTILES})
    return ttft, Percentiles(**dict.fromkeys(PERCENTILES, tpot_ms))


def _band(output_tokens_per_s: float) -> ErrorBand:
    error = estimate_error()
    # low_factor = 1 + the 10th percentile of the signed error (at most 0), high_factor = 1 + the 90th (at least 0)
    return ErrorBand(
        low=output_tokens_per_s / error.high_factor,
        high=output_tokens_per_s / error.low_factor,
        provenance=error.provenance,
    )


def estimate_setup(
    model: ModelSpec,
    gpu: GpuSpec,
    gpus: int,
    precision: str,
    input_tokens: float,
    output_tokens: float,
    *,
    replicas: int = 1,
    kv_dtype: str | None = None,
    engine: Engine = "vllm",
    attention: Literal["tp", "dp"] = "tp",
    cached_share: float = 0.0,
    concurrency: int | None = None,
    offline: bool = False,
    ttft_ms: float | None = None,
    tpot_ms: float | None = None,
    percentile: Percentile = "p95",
    max_batch: int | None = None,
    assumptions: RooflineAssumptions | None = None,
) -> SetupEstimate:
    """The roofline's answer for one setup at one load (see the module's docstring for the three loads)."""
    a = assumptions or DEFAULT_ASSUMPTIONS
    kv = (kv_dtype or default_kv_dtype(precision)).lower()
    loads = (concurrency is not None) + offline + (ttft_ms is not None or tpot_ms is not None)
    if loads != 1:
        raise InputError("load", "give exactly one load: a concurrency, offline, or latency targets (TTFT and/or TPOT)")
    if not 0 <= cached_share <= 1:
        raise InputError("cached_share", f"must be between 0 and 1, got {cached_share:g}")
    context = max(int(input_tokens + output_tokens), 1)
    room = fit(model, gpu, precision, context, gpus, kv, engine=MEMORY_ENGINE[engine], attention=attention)
    if not room.fits:
        raise InputError(
            "gpus",
            f"{model.id} at {precision.upper()} with a {kv.upper()} KV cache does not fit on {gpus}x {gpu.id} at "
            f"{context:,} tokens of context (short by {room.shortfall_gb:.1f} GB per GPU); would fit: "
            f"{'; or '.join(room.suggestions)}",
        )
    cap, why = batch_cap(gpu, room, engine, max_batch)
    uncached = input_tokens * (1 - cached_share)
    out = max(output_tokens, 1.0)
    chunk = chunk_tokens_for(gpu)
    notes: list[str] = []

    def speed(b: float) -> ReplicaSpeed:
        return _speed(model, gpu, gpus, precision, kv, attention, input_tokens, output_tokens, b, a)

    if concurrency is not None or offline:
        batch = min(concurrency, cap) if concurrency is not None else cap
        if concurrency is not None and concurrency > cap:
            notes.append(f"{concurrency:,} requested in flight, {cap:,} run at once; the rest queue")
        s = speed(batch)
        rate = batch / (batch * uncached / s.prefill_tokens_per_s + out * s.decode.step_ms / 1000)
        ttft, tpot = latency_at(s, uncached, out, rate, batch, chunk, decoding=batch, steady=True)
        load = f"concurrency {concurrency:,}" if concurrency is not None else f"offline ({batch:,} in flight)"
        if concurrency is not None and concurrency > cap:
            # N clients over B slots: each waits (N - B) / rate for a slot (Little's law on the closed loop)
            wait_ms = (concurrency - cap) / rate * 1000
            ttft = Percentiles(**{p: v + wait_ms for p, v in ttft.model_dump().items()})
        return _answer(s, batch, cap, why, rate, replicas, out, ttft, tpot, load, room, notes)
    best = _highest_load(speed, uncached, out, cap, chunk, ttft_ms, tpot_ms, percentile)
    if best is None:
        lone = speed(1)
        lone_ttft, lone_tpot = latency_at(lone, uncached, out, 0.0, cap, chunk, decoding=1, steady=True)
        raise InputError(
            "latency",
            f"no load meets {_target_words(ttft_ms, tpot_ms, percentile)} on {gpus}x {gpu.id}: one request alone "
            f"takes a TTFT of {lone_ttft.p50:,.0f} ms and {lone_tpot.p50:.1f} ms per output token",
            "a looser target, more GPUs per replica, or a faster GPU",
        )
    rate, s, inflight, ttft, tpot = best
    load = f"the highest load meeting {_target_words(ttft_ms, tpot_ms, percentile)}"
    return _answer(s, inflight, cap, why, rate, replicas, out, ttft, tpot, load, room, notes)


def _target_words(ttft_ms: float | None, tpot_ms: float | None, percentile: Percentile) -> str:
    parts = []
    if ttft_ms is not None:
        parts.append(f"TTFT {percentile} <= {ttft_ms:g} ms")
    if tpot_ms is not None:
        parts.append(f"TPOT {percentile} <= {tpot_ms:g} ms")
    return " and ".join(parts)


def _highest_load(
    speed: Callable[[float], ReplicaSpeed],
    uncached: float,
    out: float,
    cap: int,
    chunk: int,
    ttft_ms: float | None,
    tpot_ms: float | None,
    percentile: Percentile,
) -> tuple[float, ReplicaSpeed, float, Percentiles, Percentiles] | None:
    """Bisection over the Poisson rate: the highest one whose percentiles meet the targets (latency only grows
    with the load), with the replica's speed at the mean number in flight it gives."""

    def at(rate: float) -> tuple[ReplicaSpeed, float, Percentiles, Percentiles]:
        inflight = 1.0
        s = speed(inflight)
        for _ in range(4):  # Little's law: in flight = rate x request time, which depends on the batch
            step_s = s.decode.step_ms / 1000
            inflight = min(max(rate * (uncached / s.prefill_tokens_per_s + out * step_s), 1.0), float(cap))
            s = speed(inflight)
        ttft, tpot = latency_at(s, uncached, out, rate, cap, chunk, decoding=inflight)
        return s, inflight, ttft, tpot

    def ok(ttft: Percentiles, tpot: Percentiles) -> bool:
        return (ttft_ms is None or ttft.at(percentile) <= ttft_ms) and (
            tpot_ms is None or tpot.at(percentile) <= tpot_ms
        )

    full = speed(cap)
    ceiling = cap / (cap * uncached / full.prefill_tokens_per_s + out * full.decode.step_ms / 1000)
    low, high = 0.0, ceiling
    if not ok(*at(low)[2:]):
        return None
    for _ in range(_SEARCH_STEPS):
        mid = (low + high) / 2
        if ok(*at(mid)[2:]):
            low = mid
        else:
            high = mid
    if low <= 0:
        return None
    s, inflight, ttft, tpot = at(low)
    return low, s, inflight, ttft, tpot


def _answer(
    s: ReplicaSpeed,
    batch: float,
    cap: int,
    why: str,
    rate: float,
    replicas: int,
    out: float,
    ttft: Percentiles,
    tpot: Percentiles,
    load: str,
    room: FitResult,
    notes: list[str],
) -> SetupEstimate:
    total = rate * out * replicas
    return SetupEstimate(
        estimator="roofline",
        load=load,
        replicas=replicas,
        batch=max(1, round(batch)),
        batch_limit=cap,
        batch_limit_reason=why,
        requests_per_s=rate * replicas,
        output_tokens_per_s=total,
        tokens_per_s_per_user=1000 / tpot.p50 if tpot.p50 > 0 else math.inf,
        ttft_ms=ttft,
        tpot_ms=tpot,
        bound="memory" if s.decode.bound == "memory" else "compute",
        error_band=_band(total),
        fit=room,
        notes=tuple(notes),
    )
