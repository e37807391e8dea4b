"""One setup, estimated: what an engine would measure for a model on GPUs when nobody has measured it.

A setup is a model on ``gpus`` GPUs per replica (``replicas`` of them), a precision and KV dtype, an engine, an
attention layout, and a request shape. The estimate answers one of three loads:

- ``concurrency``: that many requests always in flight (a benchmark's ``--max-concurrency``);
- ``offline``: as many in flight as the engine schedules and the KV cache holds (a throughput benchmark);
- latency targets: the highest Poisson load whose TTFT and time per output token (TPOT) meet them at a
  percentile, and the batch that load runs at.

The batch is never a hidden default: it is what the load puts in flight, capped by what fits in the KV cache
and by the engine's own scheduler limit (:func:`calculator.capacity.batch.batch_cap`), and ``max_batch`` only
when the user sets it. Throughput at a fixed concurrency is the roofline's request time (prefill of the
uncached tokens plus the request's share of the decode steps, :mod:`calculator.capacity.roofline`), the figure
the calibration checks against published measurements, so the error band (the estimator's published-
measurement error, :func:`calculator.capacity.calibration.estimate_error`) applies to it. Latency percentiles
come from the discrete-event simulation of continuous batching on the same step costs
(:mod:`calculator.capacity.simulation`): a closed loop at the concurrency, and under latency targets the
bisection over the Poisson rate for the highest one that meets them.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict

from calculator.capacity.batch import MEMORY_ENGINE, Engine, batch_cap
from calculator.capacity.calibration import estimate_error
from calculator.capacity.memory import FitResult, default_kv_dtype, fit
from calculator.capacity.roofline import DEFAULT_ASSUMPTIONS, RooflineAssumptions, replica_speed
from calculator.capacity.simulation import (
    DEFAULT_REQUESTS,
    MAX_REQUESTS,
    Percentile,
    Percentiles,
    SimulationResult,
    max_rate_under_target,
    simulate_closed,
    step_costs,
)
from calculator.catalog.gpus import GpuSpec
from calculator.catalog.models import ModelSpec
from calculator.errors import InputError

__all__ = ["PERCENTILES", "ErrorBand", "SetupEstimate", "estimate_setup"]

PERCENTILES: tuple[Percentile, ...] = ("p50", "p90", "p95", "p99")


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
    cap, why = batch_cap(gpu, room, engine, max_batch, ranks=gpus if attention == "dp" else 1)
    uncached = input_tokens * (1 - cached_share)
    out = max(output_tokens, 1.0)
    notes: list[str] = []
    costs = step_costs(
        model, gpu, precision, gpus, max_batch=max(cap, 1), max_context=input_tokens + out,
        min_context=max(input_tokens, 1.0), kv_dtype=kv, assumptions=a, attention=attention,
    )  # fmt: skip
    kv_tokens = float(room.max_cached_tokens) if room.max_cached_tokens else None
    if concurrency is not None or offline:
        clients = concurrency if concurrency is not None else cap
        batch = min(clients, cap)
        if clients > cap:
            notes.append(f"{clients:,} requested in flight, {cap:,} run at once; the rest queue for a slot")
        s = replica_speed(model, gpu, precision, input_tokens, output_tokens, batch, gpus, kv, a, attention=attention)
        rate = batch / (batch * uncached / s.prefill_tokens_per_s + out * s.decode.step_ms / 1000)
        run = simulate_closed(
            costs, clients, input_tokens, out, cached_share=cached_share, max_batch=cap, kv_budget_tokens=kv_tokens,
            requests=min(max(DEFAULT_REQUESTS, 4 * clients), MAX_REQUESTS),
        )  # fmt: skip
        load = f"concurrency {clients:,}" if concurrency is not None else f"offline ({batch:,} in flight)"
        return _answer(s.decode.bound, batch, cap, why, rate, replicas, out, run, load, room, notes)
    found = max_rate_under_target(
        costs, input_tokens, out, percentile=percentile, ttft_ms=ttft_ms, tpot_ms=tpot_ms,
        cached_share=cached_share, max_batch=cap, kv_budget_tokens=kv_tokens,
    )  # fmt: skip
    if not found.meets:
        lone = found.result
        raise InputError(
            "latency",
            f"no load meets {_target_words(ttft_ms, tpot_ms, percentile)} on {gpus}x {gpu.id}: at a trickle of "
            f"requests the TTFT is {lone.ttft_ms.at(percentile):,.0f} ms and {lone.tpot_ms.at(percentile):.1f} ms "
            f"per output token ({percentile})",
            "a looser target, more GPUs per replica, or a faster GPU",
        )
    inflight = max(found.batch, 1.0)
    s = replica_speed(
        model, gpu, precision, input_tokens, output_tokens, max(1, math.ceil(inflight)), gpus, kv, a,
        attention=attention,
    )  # fmt: skip
    load = f"the highest load meeting {_target_words(ttft_ms, tpot_ms, percentile)}"
    return _answer(s.decode.bound, inflight, cap, why, found.rate, replicas, out, found.result, load, room, notes)


def _target_words(ttft_ms: float | None, tpot_ms: float | None, percentile: Percentile) -> str:
    parts = []
    if ttft_ms is not None:
        parts.append(f"TTFT {percentile} <= {ttft_ms:g} ms")
    if tpot_ms is not None:
        parts.append(f"TPOT {percentile} <= {tpot_ms:g} ms")
    return " and ".join(parts)


def _answer(
    bound: str,
    batch: float,
    cap: int,
    why: str,
    rate: float,
    replicas: int,
    out: float,
    run: SimulationResult,
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
        tokens_per_s_per_user=1000 / run.tpot_ms.p50 if run.tpot_ms.p50 > 0 else math.inf,
        ttft_ms=run.ttft_ms,
        tpot_ms=run.tpot_ms,
        bound="memory" if bound == "memory" else "compute",
        error_band=_band(total),
        fit=room,
        notes=tuple(notes),
    )
