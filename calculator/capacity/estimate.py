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
the calibration checks against published measurements. Latency percentiles come from the discrete-event
simulation of continuous batching on the same step costs (:mod:`calculator.capacity.simulation`): a closed loop
at the concurrency, and under latency targets the bisection over the Poisson rate for the highest one that
meets them.

Two estimators can answer. The ``roofline`` answers every setup the catalogues describe; the ``profiled`` one
(AIConfigurator's tables, :mod:`calculator.capacity.profiled`) only NVIDIA GPUs, engines and architectures it
profiled. Under it the throughput at a concurrency is the tables' own figure, and the simulation runs on the
roofline's step costs rescaled so that a decode step and a lone prompt's prefill take what the tables say: the
tables give means, the simulation the spread around them. ``auto`` takes the profiled estimator only for a
family (dense or mixture-of-experts x GPU architecture x engine) where it beat the roofline on published
points neither was fitted to (:mod:`calculator.capacity.error_bands`), and the answer names the estimator and
carries that estimator's error band for the family, from its leave-one-source-out residuals.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from calculator.capacity.batch import MEMORY_ENGINE, Engine, batch_cap
from calculator.capacity.error_bands import ErrorBands, Family, load_error_bands
from calculator.capacity.memory import FitResult, default_kv_dtype, fit
from calculator.capacity.roofline import DEFAULT_ASSUMPTIONS, RooflineAssumptions, replica_speed
from calculator.capacity.simulation import (
    DEFAULT_REQUESTS,
    MAX_REQUESTS,
    Percentile,
    Percentiles,
    SimulationResult,
    StepCosts,
    max_rate_under_target,
    simulate_closed,
    step_costs,
)
from calculator.catalog.gpus import GpuSpec
from calculator.catalog.models import ModelSpec
from calculator.errors import InputError

__all__ = [
    "ESTIMATORS",
    "PERCENTILES",
    "EstimatorChoice",
    "ErrorBand",
    "OtherEstimate",
    "SetupEstimate",
    "estimate_setup",
]

PERCENTILES: tuple[Percentile, ...] = ("p50", "p90", "p95", "p99")
EstimatorChoice = Literal["auto", "roofline", "profiled"]
ESTIMATORS: tuple[EstimatorChoice, ...] = ("auto", "roofline", "profiled")


class ErrorBand(BaseModel):
    """Where the engine's measured output tokens/s lies for 8 in 10 published cases, given this estimate: the
    estimate divided by one plus the 90th and the 10th percentile of the estimator's signed error."""

    model_config = ConfigDict(frozen=True)

    low: float
    high: float
    provenance: str


class OtherEstimate(BaseModel):
    """What the estimator that did not answer says of the same setup and load, shown beside the answer."""

    model_config = ConfigDict(frozen=True)

    estimator: Literal["roofline", "profiled"]
    output_tokens_per_s: float
    """All replicas together."""
    error_band: ErrorBand


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
    estimator_reason: str = ""
    """Why this estimator answered (the choice ``auto`` made, or the one asked for)."""
    other: OtherEstimate | None = None
    """The other estimator's figure for the same load, where it could answer."""


def _band(output_tokens_per_s: float, bands: ErrorBands, estimator: Literal["roofline", "profiled"],
          family: Family) -> ErrorBand:  # fmt: skip
    error = bands.band(estimator, family)
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
    expert_parallel: int | None = None,
    estimator: EstimatorChoice = "auto",
    bands: ErrorBands | None = None,
) -> SetupEstimate:
    """One setup at one load (see the module's docstring for the three loads and the two estimators).
    ``expert_parallel``: GPUs the routed experts are spread over (default: all of the replica's under
    data-parallel attention, else tensor-parallel experts)."""
    roofline = _roofline_setup(
        model, gpu, gpus, precision, input_tokens, output_tokens, replicas=replicas, kv_dtype=kv_dtype,
        engine=engine, attention=attention, cached_share=cached_share, concurrency=concurrency, offline=offline,
        ttft_ms=ttft_ms, tpot_ms=tpot_ms, percentile=percentile, max_batch=max_batch, assumptions=assumptions,
    )  # fmt: skip
    bands = bands or load_error_bands()
    family = Family.of(model.is_moe, gpu.id, engine)
    answer = roofline.answer.model_copy(
        update={"error_band": _band(roofline.answer.output_tokens_per_s, bands, "roofline", family)}
    )
    if estimator == "roofline":
        return answer.model_copy(update={"estimator_reason": "asked for (--estimator roofline)"})
    from calculator.capacity import profiled

    ep = expert_parallel or (gpus if attention == "dp" and model.is_moe else 1)
    if estimator == "auto":
        verdict = bands.choose(family)
        if verdict.estimator == "roofline":
            return answer.model_copy(update={"estimator_reason": f"auto, {verdict.family}: {verdict.reason}"})
        why = f"auto, {verdict.family}: {verdict.reason}"
    else:
        why = "asked for (--estimator profiled)"
    missing = None if profiled.available() else f"the optional extra '{profiled.EXTRA}' is not installed"
    if missing is None:
        cover = profiled.covers(model, gpu, gpus, precision, roofline.kv, engine, attention, ep)
        missing = None if cover is None else cover.reason
    if missing is not None:
        if estimator == "profiled":
            raise InputError("estimator", f"the profiled estimator cannot answer this setup: {missing}",
                             "--estimator roofline answers every setup the catalogues describe")  # fmt: skip
        return answer.model_copy(
            update={"estimator_reason": f"{why}; but the profiled estimator cannot answer: {missing}"}
        )
    found = _profiled_setup(roofline, ep)
    if isinstance(found, str):
        if estimator == "profiled":
            raise InputError("estimator", f"the profiled estimator cannot answer this setup: {found}",
                             "--estimator roofline answers every setup the catalogues describe")  # fmt: skip
        return answer.model_copy(
            update={"estimator_reason": f"{why}; but the profiled estimator cannot answer: {found}"}
        )
    other = OtherEstimate(estimator="roofline", output_tokens_per_s=answer.output_tokens_per_s,
                          error_band=answer.error_band)  # fmt: skip
    return found.model_copy(
        update={
            "error_band": _band(found.output_tokens_per_s, bands, "profiled", family),
            "estimator_reason": why,
            "other": other,
        }
    )


class _Roofline:
    """The roofline's answer and what the profiled estimator needs to redo it."""

    def __init__(self, answer: SetupEstimate, model: ModelSpec, gpu: GpuSpec, gpus: int, precision: str, kv: str,
                 engine: Engine, attention: Literal["tp", "dp"], input_tokens: float, out: float,
                 cached_share: float, costs: StepCosts, cap: int, kv_tokens: float | None,
                 load: tuple[int | None, bool, float | None, float | None, Percentile]) -> None:  # fmt: skip
        self.answer, self.model, self.gpu, self.gpus, self.precision, self.kv = answer, model, gpu, gpus, precision, kv
        self.engine, self.attention, self.input_tokens, self.out = engine, attention, input_tokens, out
        self.cached_share, self.costs, self.cap, self.kv_tokens, self.load = cached_share, costs, cap, kv_tokens, load


def _roofline_setup(
    model: ModelSpec,
    gpu: GpuSpec,
    gpus: int,
    precision: str,
    input_tokens: float,
    output_tokens: float,
    *,
    replicas: int,
    kv_dtype: str | None,
    engine: Engine,
    attention: Literal["tp", "dp"],
    cached_share: float,
    concurrency: int | None,
    offline: bool,
    ttft_ms: float | None,
    tpot_ms: float | None,
    percentile: Percentile,
    max_batch: int | None,
    assumptions: RooflineAssumptions | None,
) -> _Roofline:
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
        answer = _answer(s.decode.bound, batch, cap, why, rate, replicas, out, run, load, room, notes)
        return _Roofline(answer, model, gpu, gpus, precision, kv, engine, attention, input_tokens, out, cached_share,
                         costs, cap, kv_tokens, (concurrency, offline, ttft_ms, tpot_ms, percentile))  # fmt: skip
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
    answer = _answer(s.decode.bound, inflight, cap, why, found.rate, replicas, out, found.result, load, room, notes)
    return _Roofline(answer, model, gpu, gpus, precision, kv, engine, attention, input_tokens, out, cached_share,
                     costs, cap, kv_tokens, (concurrency, offline, ttft_ms, tpot_ms, percentile))  # fmt: skip


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
        error_band=ErrorBand(low=total, high=total, provenance="set by estimate_setup"),
        fit=room,
        notes=tuple(notes),
    )


def _profiled_setup(r: _Roofline, expert_parallel: int) -> SetupEstimate | str:
    """The profiled estimator's answer for the roofline's setup and load, or why it cannot give one."""
    from calculator.capacity.profiled import NotCovered, profiled_estimate

    concurrency, offline, ttft_ms, tpot_ms, percentile = r.load
    base = r.answer
    context = r.input_tokens + r.out / 2

    def tables(batch: int) -> NotCovered | tuple[float, float, float, str]:
        got = profiled_estimate(r.model, r.gpu, r.gpus, r.precision, r.kv, r.engine, r.attention, expert_parallel,
                                r.input_tokens, r.out, batch)  # fmt: skip
        if isinstance(got, NotCovered):
            return got
        note = (
            f"profiled: AIConfigurator's {got.system} tables for {got.engine_version}, "
            f"{got.measured_share:.0%} of the step time from measured rows"
        )
        return got.output_tokens_per_s, got.tpot_ms, got.ttft_ms, note

    lone = tables(1)
    if isinstance(lone, NotCovered):
        return lone.reason
    prompt_s = float(r.costs.prefill_seconds_per_token(np.asarray([r.input_tokens]))[0]) * r.input_tokens
    prefill_scale = max(lone[2] / 1000, 1e-6) / max(prompt_s + r.costs.overhead_s, 1e-9)

    def rescaled(batch: int) -> NotCovered | tuple[StepCosts, tuple[float, float, float, str]]:
        at = tables(batch)
        if isinstance(at, NotCovered):
            return at
        decode_scale = (at[1] / 1000) / max(r.costs.decode_step_s(min(batch, r.costs.max_batch), context), 1e-9)
        return r.costs.scaled(decode_scale, prefill_scale), at

    notes = list(base.notes)
    if concurrency is not None or offline:
        clients = concurrency if concurrency is not None else r.cap
        got = rescaled(base.batch)
        if isinstance(got, NotCovered):
            return got.reason
        costs, (tokens_per_s, tpot, _, note) = got
        run = simulate_closed(
            costs, clients, r.input_tokens, r.out, cached_share=r.cached_share, max_batch=r.cap,
            kv_budget_tokens=r.kv_tokens, requests=min(max(DEFAULT_REQUESTS, 4 * clients), MAX_REQUESTS),
        )  # fmt: skip
        if r.cached_share > 0:
            # the tables price every prompt token; a cached share skips its prefill, as the rescaled steps do
            uncached = r.input_tokens * (1 - r.cached_share)
            spt = float(costs.prefill_seconds_per_token(np.asarray([r.input_tokens]))[0])
            step_s = tpot / 1000
            rate = base.batch / (base.batch * uncached * spt + r.out * step_s)
        else:
            rate = tokens_per_s / r.out
        answer = _answer(base.bound, base.batch, r.cap, base.batch_limit_reason, rate, base.replicas, r.out, run,
                         base.load, base.fit, [*notes, note])  # fmt: skip
        return answer.model_copy(update={"estimator": "profiled"})
    batch = base.batch
    found = None
    note = ""
    for _ in range(2):  # the decode scale depends on the batch the search lands on: once more at that batch
        got = rescaled(max(1, min(batch, r.cap)))
        if isinstance(got, NotCovered):
            return got.reason
        costs, (_, _, _, note) = got
        found = max_rate_under_target(
            costs, r.input_tokens, r.out, percentile=percentile, ttft_ms=ttft_ms, tpot_ms=tpot_ms,
            cached_share=r.cached_share, max_batch=r.cap, kv_budget_tokens=r.kv_tokens,
        )  # fmt: skip
        if not found.meets:
            lone_run = found.result
            return (
                f"no load meets {_target_words(ttft_ms, tpot_ms, percentile)} by the profiled tables: at a trickle "
                f"the TTFT is {lone_run.ttft_ms.at(percentile):,.0f} ms and {lone_run.tpot_ms.at(percentile):.1f} "
                f"ms per output token ({percentile})"
            )
        batch = max(1, math.ceil(found.batch))
    assert found is not None
    answer = _answer(base.bound, max(found.batch, 1.0), r.cap, base.batch_limit_reason, found.rate, base.replicas,
                     r.out, found.result, base.load, base.fit, [*notes, note])  # fmt: skip
    return answer.model_copy(update={"estimator": "profiled"})
