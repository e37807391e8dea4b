"""From a measured throughput record to requests per second for *this* scenario's shape.

A benchmark's throughput already includes the time its requests spent in prefill, so a record
says how many requests of its own shape a replica sustains. Near that shape (within 25% on
uncached input and on output length) it applies directly. Otherwise a request's replica time is
split into prefill of its uncached tokens and decode of its output tokens::

    t_request = U / prefill_rate + O / decode_rate

Both rates come from the roofline (:mod:`calculator.capacity.roofline`) of the record's own setup
(GPU, precision, model, requests in flight), with the same :class:`RooflineAssumptions` as every
estimate, scaled by one factor so the record's own request takes exactly its measured time. For
the scenario's shape the roofline says how the decode speed moves (longer contexts read more KV
cache per step and fit fewer sequences); the prefill speed stays the record's. Prefix caching
shrinks U and leaves decode unchanged, which is the seeds' point: repeated prompt starts skip prefill.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict

from calculator.capacity.batch import batch_cap
from calculator.capacity.memo import by_identity
from calculator.capacity.memory import WEIGHT_BYTES, Attention, default_kv_dtype, fit
from calculator.capacity.roofline import (
    DEFAULT_ASSUMPTIONS,
    ReplicaSpeed,
    RooflineAssumptions,
    params_only_speed,
    replica_speed,
)
from calculator.catalog.gpus import GpuSpec
from calculator.catalog.limits import CONTEXT
from calculator.catalog.measurements import Latency, ThroughputRecord
from calculator.catalog.models import ModelSpec
from calculator.catalog.prices import Source
from calculator.errors import InputError
from calculator.scenario.inputs import EstimateSetup, LatencyTarget

__all__ = [
    "BYTES_PER_PARAM",
    "check_usable",
    "context_decode_factor",
    "Efficiency",
    "ReplicaCapacity",
    "converted_rate",
    "prefill_decode_ratio",
    "record_speed",
    "replica_capacity",
    "split_record",
]

Arr = npt.NDArray[np.float64]

BYTES_PER_PARAM = WEIGHT_BYTES
"""Kept importable: the one bytes-per-weight table is :data:`calculator.capacity.memory.WEIGHT_BYTES`."""
Efficiency = RooflineAssumptions
"""Kept importable: the efficiencies are the roofline's, :class:`calculator.capacity.roofline.RooflineAssumptions`."""
DIRECT_TOLERANCE = 0.25
"""A record applies as measured when the scenario's uncached input and output are within 25% of it."""
DEFAULT_IN_FLIGHT = 32.0


def _setup(record: ThroughputRecord) -> tuple[str, int, int]:
    """The record's precision, GPUs per replica and batch (its requests in flight)."""
    return (
        (record.precision or "bf16").lower(),
        record.replica_gpus,
        max(1, round(record.in_flight or DEFAULT_IN_FLIGHT)),
    )


@by_identity()
def record_speed(
    record: ThroughputRecord,
    gpu: GpuSpec,
    model: ModelSpec | None = None,
    assumptions: RooflineAssumptions | None = None,
    input_tokens: float | None = None,
    output_tokens: float | None = None,
    batch: int | None = None,
) -> ReplicaSpeed:
    """The roofline of the record's setup, at its own shape unless another is given.

    With the model's architecture: the full roofline (attention, KV cache, the experts a batch touches).
    Without it, only the record's parameter counts. What-ifs are left out: the measured time already
    holds whatever its engine did.
    """
    check_usable(record)
    assert record.params_active_b and record.params_total_b
    a = (assumptions or DEFAULT_ASSUMPTIONS).efficiencies_only()
    precision, gpus, in_flight = _setup(record)
    batch = batch or in_flight
    if model is None:
        return params_only_speed(record.params_total_b, record.params_active_b, gpu, precision, batch, gpus, a)
    i = record.input_tokens if input_tokens is None else input_tokens
    o = record.output_tokens if output_tokens is None else output_tokens
    return replica_speed(model, gpu, precision, i, o, batch, gpus, default_kv_dtype(precision), a)


def prefill_decode_ratio(
    record: ThroughputRecord,
    gpu: GpuSpec,
    assumptions: RooflineAssumptions | None = None,
    model: ModelSpec | None = None,
) -> float:
    """Roofline ratio of prefill to decode tokens/s for the record's own setup and shape."""
    return record_speed(record, gpu, model, assumptions).prefill_decode_ratio


def missing_for_sizing(record: ThroughputRecord) -> list[str]:
    """The record's fields that must be stated before it sizes GPUs: its conditions and the model's size."""
    return record.missing + [f for f in ("params_total_b", "params_active_b") if getattr(record, f) is None]


def check_usable(record: ThroughputRecord) -> None:
    """A record sizes GPUs only when it states its conditions and the model's size."""
    missing = missing_for_sizing(record)
    if missing:
        raise InputError(
            "record",
            f"throughput record {record.id!r} does not state {', '.join(missing)}; "
            "add them (the tool's file does not say them) before sizing GPUs with it",
        )


Bound = Literal["saturated", "at_least", "unknown"]
"""How a measured load level stands in its run: at the replica's limit, a lower bound (it kept up with what it
was offered), or not known (the record does not say what it was offered)."""


class ReplicaCapacity(BaseModel):
    """Requests per second one replica sustains for the scenario's shape, and how that was found."""

    model_config = ConfigDict(frozen=True)

    record_id: str
    requests_per_s: float
    method: Literal["direct", "converted"]
    prefill_decode_ratio: float
    gpu_scale: float = 1.0
    """Factor applied when the offer's GPU differs from the record's (memory bandwidth ratio)."""
    note: str
    bound: Bound | None = None
    """How the measured level stands in its run (:mod:`calculator.capacity.saturation`): at the replica's limit,
    a lower bound, or not known; None for a roofline estimate."""


def uncached_tokens(input_tokens: float | Arr, prefix_share: float | Arr, hit_rate: float | Arr) -> float | Arr:
    return input_tokens * (1 - prefix_share * hit_rate)


UNKNOWN_PREFIX_SHARE = 0.0
"""The prefix share sizing assumes for a record whose run does not say: none of its input served from cache,
so all of it prefilled. If the run's prompts did share prefixes, the record's replica did less prefill work than
assumed, and a scenario's rate converted from it is then too high (sizing says so in its note)."""


def record_prefix_share(record: ThroughputRecord) -> float:
    """The record's prefix share, or :data:`UNKNOWN_PREFIX_SHARE` when the run does not state one."""
    return UNKNOWN_PREFIX_SHARE if record.prefix_share is None else record.prefix_share


def assumed_prefix_note(record: ThroughputRecord) -> str | None:
    """What sizing assumed about the record's prefix share, when the run does not state it; else None."""
    if record.prefix_share is not None:
        return None
    return (
        f"the record does not state its prefix share: assumed {UNKNOWN_PREFIX_SHARE:.0%} (all input prefilled); "
        "if its prompts shared prefixes, the converted rate is too high"
    )


def _record_uncached(record: ThroughputRecord) -> float:
    return record.input_tokens * (1 - record_prefix_share(record))


def split_record(record: ThroughputRecord, speed: ReplicaSpeed) -> tuple[float, float]:
    """The record's replica split into prefill and decode tokens/s: the roofline's two speeds, both scaled by
    the one factor that makes the record's own request take its measured time, ``1 / requests_per_s``."""
    scale = record.requests_per_s * speed.request_seconds(_record_uncached(record), record.output_tokens)
    return speed.prefill_tokens_per_s * scale, speed.decode_tokens_per_s * scale


def converted_rate(
    record: ThroughputRecord,
    speed: ReplicaSpeed,
    scenario_speed: ReplicaSpeed,
    uncached: float | Arr,
    output_tokens: float | Arr,
) -> float | Arr:
    """Requests/s for ``uncached`` prefill and ``output_tokens`` decode, from the record's split, each speed
    moved as ``scenario_speed`` moves it from the record's own roofline (``speed``)."""
    prefill, decode = split_record(record, speed)
    prefill *= scenario_speed.prefill_tokens_per_s / speed.prefill_tokens_per_s
    decode *= scenario_speed.decode_tokens_per_s / speed.decode_tokens_per_s
    seconds: float | Arr = uncached / prefill + output_tokens / decode
    return 1 / np.maximum(seconds, 1e-12)


def replica_rate(
    record: ThroughputRecord,
    speed: ReplicaSpeed,
    scenario_speed: ReplicaSpeed,
    input_tokens: float | Arr,
    uncached: float | Arr,
    output_tokens: float | Arr,
) -> tuple[Arr, npt.NDArray[np.bool_]]:
    """Requests/s per replica for arrays of scenario shapes, and whether each applied directly.

    Direct: input, uncached input and output all within 25% of the record's. Otherwise converted
    through the record's split (:func:`converted_rate`).
    """
    i = np.asarray(input_tokens, dtype=np.float64)
    u = np.asarray(uncached, dtype=np.float64)
    o = np.asarray(output_tokens, dtype=np.float64)
    converted = converted_rate(record, speed, scenario_speed, u, o)

    def near(value: Arr, measured: float) -> npt.NDArray[np.bool_]:
        return np.asarray(np.abs(value - measured) <= DIRECT_TOLERANCE * measured)

    direct = near(i, record.input_tokens) & near(u, _record_uncached(record)) & near(o, record.output_tokens)
    return np.where(direct, record.requests_per_s, converted), direct


def _sequence_tokens(input_tokens: float, output_tokens: float) -> int:
    """One request's sequence in the KV cache: its prompt and its output share one context window, which
    holds at most :data:`~calculator.catalog.limits.CONTEXT` tokens (a tokenizer factor can push it past)."""
    tokens = max(int(input_tokens + output_tokens), 1)
    problem = CONTEXT.problem(tokens)
    if problem:
        raise InputError(
            "workload.input_tokens",
            f"a turn of {input_tokens:,.0f} input and {output_tokens:,.0f} output tokens (in the model's own tokens) "
            f"make one sequence; {problem}",
            CONTEXT.allowed,
        )
    return tokens


@by_identity()
def _scenario_batch(
    record: ThroughputRecord, model: ModelSpec, gpu: GpuSpec, input_tokens: float, output_tokens: float
) -> int:
    """The record's batch, or fewer when the KV cache cannot hold that many sequences of the scenario."""
    precision, gpus, batch = _setup(record)
    context = _sequence_tokens(input_tokens, output_tokens)
    room = fit(model, gpu, precision, context, gpus, default_kv_dtype(precision))
    if not room.fits:
        raise InputError(
            "self_hosting.record",
            f"{model.id} at {precision.upper()} on {gpus}x {gpu.id} cannot hold one sequence of "
            f"{int(input_tokens + output_tokens):,} tokens (short by {room.shortfall_gb:.1f} GB per GPU); "
            f"would fit: {'; or '.join(room.suggestions)}",
        )
    return min(batch, room.max_sequences)


def _at_scenario(
    record: ThroughputRecord,
    gpu: GpuSpec,
    model: ModelSpec,
    speed: ReplicaSpeed,
    input_tokens: float,
    output_tokens: float,
    assumptions: RooflineAssumptions | None,
) -> tuple[ReplicaSpeed, int]:
    """The record's roofline ``speed`` moved to the scenario's shape, and the batch that fits there.

    Only decode moves: longer contexts read more KV cache every step and fewer sequences fit in memory,
    so a measured decode rate does not carry over to a ten times longer prompt (prefix caching does not
    help decode). The measured prefill rate is kept, not yet slowed by the roofline's attention term at
    a longer prompt (that would change sized answers on its own).
    """
    batch = _scenario_batch(record, model, gpu, input_tokens, output_tokens)
    moved = record_speed(record, gpu, model, assumptions, input_tokens, output_tokens, batch)
    return speed.model_copy(update={"decode": moved.decode}), batch


def context_decode_factor(
    record: ThroughputRecord,
    model: ModelSpec,
    gpu: GpuSpec,
    input_tokens: float,
    output_tokens: float,
    assumptions: RooflineAssumptions | None = None,
) -> tuple[float, int]:
    """Decode speed of the replica at the scenario's context over the record's, and the batch that fits."""
    speed = record_speed(record, gpu, model, assumptions)
    scenario, batch = _at_scenario(record, gpu, model, speed, input_tokens, output_tokens, assumptions)
    return scenario.decode_tokens_per_s / speed.decode_tokens_per_s, batch


def replica_capacity(
    record: ThroughputRecord,
    record_gpu: GpuSpec,
    input_tokens: float,
    prefix_share: float,
    hit_rate: float,
    output_tokens: float,
    target_gpu: GpuSpec | None = None,
    assumptions: RooflineAssumptions | None = None,
    model: ModelSpec | None = None,
) -> ReplicaCapacity:
    """Requests/s one replica sustains for the scenario's shape; ``model`` (its architecture) lets the
    conversion account for context length and memory, and checks the model fits a different GPU.
    ``assumptions`` are the roofline's efficiencies the record's time is split with (the defaults when
    not given): the same object the estimate uses."""
    speed = record_speed(record, record_gpu, model, assumptions)
    ratio = speed.prefill_decode_ratio
    u = float(uncached_tokens(input_tokens, prefix_share, hit_rate))
    scenario_speed, notes = speed, []
    if model is not None:
        scenario_speed, batch = _at_scenario(record, record_gpu, model, speed, input_tokens, output_tokens, assumptions)
        factor = scenario_speed.decode_tokens_per_s / speed.decode_tokens_per_s
        if abs(factor - 1) > 0.01:
            notes.append(
                f"decode at {input_tokens + output_tokens:,.0f} tokens of context runs x{factor:.2f} the measured "
                f"speed (roofline, batch {batch})"
            )
    rate, direct = replica_rate(record, speed, scenario_speed, input_tokens, u, output_tokens)
    if bool(direct):
        notes.insert(
            0, f"measured shape ({record.input_tokens:.0f} in / {record.output_tokens:.0f} out) applies directly"
        )
    else:
        notes.insert(
            0,
            f"converted from the measured {record.input_tokens:.0f} in / {record.output_tokens:.0f} out to "
            f"{input_tokens:.0f} in ({u:.0f} uncached) / {output_tokens:.0f} out "
            f"(prefill:decode speed ratio {ratio:.2f}, roofline)",
        )
    assumed = assumed_prefix_note(record)
    if assumed is not None:
        notes.append(assumed)
    scale = 1.0
    if target_gpu is not None and target_gpu.id != record_gpu.id:
        if model is not None:
            precision = (record.precision or "bf16").lower()
            room = fit(model, target_gpu, precision, _sequence_tokens(input_tokens, output_tokens), record.replica_gpus)
            if not room.fits:
                raise InputError(
                    "offer",
                    f"{model.id} at {precision.upper()} on {record.replica_gpus}x {target_gpu.id} (the record's "
                    f"setup on the offer's GPU) does not fit: short by {room.shortfall_gb:.1f} GB per GPU; "
                    f"would fit: {'; or '.join(room.suggestions)}",
                )
        scale = target_gpu.memory_bandwidth_tbs / record_gpu.memory_bandwidth_tbs
        notes.append(
            f"estimate: measured on {record_gpu.id}, scaled by memory bandwidth to {target_gpu.id} (x{scale:.2f})"
        )
    return ReplicaCapacity(
        record_id=record.id,
        requests_per_s=float(rate) * scale,
        method="direct" if bool(direct) else "converted",
        prefill_decode_ratio=ratio,
        gpu_scale=scale,
        note="; ".join(notes),
    )


def meets(record: ThroughputRecord, target: LatencyTarget) -> tuple[bool | None, str]:
    """Whether a load level meets the target; None when the record lacks that percentile."""
    if target.ttft_ms is not None:
        ttft = record.ttft_ms.at(target.percentile)
        if ttft is None:
            have = ", ".join(record.ttft_ms.available) or "none"
            return None, f"{record.id}: no TTFT {target.percentile} in the record (it has: {have})"
        if ttft > target.ttft_ms:
            return False, f"{record.id}: TTFT {target.percentile} {ttft:.0f} ms > {target.ttft_ms:.0f} ms"
    if target.tokens_per_s_per_user is not None:
        itl = record.itl_ms.at(target.percentile)
        if itl is None:
            have = ", ".join(record.itl_ms.available) or "none"
            return None, f"{record.id}: no inter-token latency {target.percentile} in the record (it has: {have})"
        speed = 1000 / itl
        if speed < target.tokens_per_s_per_user:
            return False, f"{record.id}: {speed:.0f} tokens/s per user < {target.tokens_per_s_per_user:.0f}"
    return True, f"{record.id}: meets the target at {record.requests_per_s:g} req/s"


def best_under_target(
    records: list[ThroughputRecord], target: LatencyTarget
) -> tuple[ThroughputRecord | None, list[str]]:
    """The highest-throughput load level that meets the latency target, and why each other did not."""
    reasons = []
    best: ThroughputRecord | None = None
    for record in sorted(records, key=lambda r: r.requests_per_s):
        ok, why = meets(record, target)
        reasons.append(why)
        if ok and (best is None or record.requests_per_s > best.requests_per_s):
            best = record
    return best, reasons


def estimate_record(
    setup: EstimateSetup,
    model: ModelSpec,
    gpu: GpuSpec,
    input_tokens: float,
    prefix_share: float,
    hit_rate: float,
    output_tokens: float,
    assumptions: RooflineAssumptions | None = None,
    *,
    attention: Attention = "tp",
) -> ThroughputRecord:
    """A throughput record computed by the roofline for the scenario's own shape (``attention``: the layout,
    data-parallel attention keeping whole sequences per GPU, as :func:`calculator.capacity.memory.fit` says).

    The batch is what fits in the KV cache and the engine schedules, or ``setup.max_batch`` when set
    (:func:`calculator.capacity.batch.batch_cap`); a request
    takes its uncached prefill plus its share of the decode steps: ``U / prefill + O x step / B``.
    """
    precision = setup.precision.lower()
    kv_dtype = default_kv_dtype(precision)
    context = _sequence_tokens(input_tokens, output_tokens)
    room = fit(model, gpu, precision, context, setup.gpus_per_replica, kv_dtype, attention=attention)
    if not room.fits:
        raise InputError(
            "self_hosting.estimate",
            f"{model.id} at {precision.upper()} does not fit on {setup.gpus_per_replica}x {gpu.id} at "
            f"{context:,} tokens; would fit: {'; or '.join(room.suggestions)}",
        )
    ranks = setup.gpus_per_replica if attention == "dp" else 1  # each data-parallel rank schedules its own
    batch, _ = batch_cap(gpu, room, "vllm", setup.max_batch, ranks=ranks)
    speed = replica_speed(
        model,
        gpu,
        precision,
        input_tokens,
        output_tokens,
        batch,
        setup.gpus_per_replica,
        kv_dtype,
        assumptions,
        attention=attention,
    )
    point = speed.decode
    # at least one output token, as the record states it: a turn of nothing still takes a decode step
    output_tokens = max(output_tokens, 1.0)
    seconds = speed.request_seconds(float(uncached_tokens(input_tokens, prefix_share, hit_rate)), output_tokens)
    notes = "; ".join((assumptions or DEFAULT_ASSUMPTIONS).notes())
    layout = "-dp" if attention == "dp" else ""
    return ThroughputRecord(
        id=f"estimate-{model.id}-{precision}-{setup.gpus_per_replica}x{gpu.id}{layout}".replace(".", "-"),
        model=model.id,
        params_total_b=model.params_total_b,
        params_active_b=model.params_active_b,
        precision=precision,
        gpu=gpu.id,
        gpu_count=setup.gpus_per_replica,
        engine="roofline estimate",
        engine_version=None,
        input_tokens=max(input_tokens, 1.0),
        output_tokens=max(output_tokens, 1.0),
        prefix_share=prefix_share * hit_rate,
        concurrency=batch,
        requests_per_s=1 / seconds,
        output_tokens_per_s=output_tokens / seconds,
        itl_ms=Latency(p50=point.step_ms),
        source=Source(
            document="roofline estimate (calculator/capacity/roofline.py), not a measurement", read=dt.date.today()
        ),
        notes=f"ESTIMATE, batch {batch} ({point.bound}-bound decode): {notes}",
    )
