"""From a measured throughput record to requests per second for *this* scenario's shape.

A benchmark's throughput already includes the time its requests spent in prefill, so a record
says how many requests of its own shape a replica sustains. Near that shape (within 25% on
uncached input and on output length) it applies directly. Otherwise a request's replica time is
split into prefill of its uncached tokens and decode of its output tokens::

    t_request = U / prefill_rate + O / decode_rate

Both rates are calibrated on the record, with their ratio taken from a roofline estimate of the
record's own setup (GPU, precision, parameters, requests in flight). Prefix caching shrinks U
and leaves decode unchanged, which is the seeds' point: repeated prompt starts skip prefill.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field

from calculator.capacity.memory import fit
from calculator.capacity.roofline import RooflineAssumptions, decode, prefill_tokens_per_s
from calculator.catalog.gpus import GpuSpec
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
    "prefill_decode_ratio",
    "replica_capacity",
]

Arr = npt.NDArray[np.float64]

BYTES_PER_PARAM = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5, "fp4": 0.5}
DIRECT_TOLERANCE = 0.25
"""A record applies as measured when the scenario's uncached input and output are within 25% of it."""
DEFAULT_IN_FLIGHT = 32.0


class Efficiency(BaseModel):
    """Shares of the datasheet peak an engine reaches; assumptions, shown as such."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    prefill_flops: float = Field(default=0.5, gt=0, le=1)
    decode_bandwidth: float = Field(default=0.7, gt=0, le=1)
    decode_flops: float = Field(default=0.5, gt=0, le=1)


def prefill_decode_ratio(record: ThroughputRecord, gpu: GpuSpec, eff: Efficiency | None = None) -> float:
    """Roofline ratio of prefill to decode tokens/s for the record's own setup.

    Prefill is compute bound: ``flops x eff / (2 x active params)``. Decode at B requests in flight
    takes ``max(weights read / bandwidth, 2 x active x B / flops)`` per step and yields B tokens.
    A mixture of experts reads the experts the batch touches, growing with B towards all of them.
    """
    eff = eff or Efficiency()
    check_usable(record)
    assert record.gpu_count and record.precision and record.params_active_b and record.params_total_b
    n = record.gpu_count
    flops = gpu.dense_tflops(record.precision) * 1e12 * n
    bandwidth = gpu.memory_bandwidth_tbs * 1e12 * n
    bytes_per_param = BYTES_PER_PARAM.get(record.precision.lower(), 2.0)
    active = record.params_active_b * 1e9
    total = record.params_total_b * 1e9
    in_flight = record.in_flight or DEFAULT_IN_FLIGHT
    weights_read = min(total, active * in_flight) * bytes_per_param
    prefill = flops * eff.prefill_flops / (2 * active)
    step = max(weights_read / (bandwidth * eff.decode_bandwidth), 2 * active * in_flight / (flops * eff.decode_flops))
    decode = in_flight / step
    return prefill / decode


def check_usable(record: ThroughputRecord) -> None:
    """A record sizes GPUs only when it states its conditions and the model's size."""
    missing = record.missing + [f for f in ("params_total_b", "params_active_b") if getattr(record, f) is None]
    if missing:
        raise InputError(
            "record",
            f"throughput record {record.id!r} does not state {', '.join(missing)}; "
            "add them (the tool's file does not say them) before sizing GPUs with it",
        )


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


def uncached_tokens(input_tokens: float | Arr, prefix_share: float | Arr, hit_rate: float | Arr) -> float | Arr:
    return input_tokens * (1 - prefix_share * hit_rate)


def replica_rate(
    record: ThroughputRecord,
    ratio: float,
    input_tokens: float | Arr,
    uncached: float | Arr,
    output_tokens: float | Arr,
    decode_factor: float = 1.0,
) -> tuple[Arr, npt.NDArray[np.bool_]]:
    """Requests/s per replica for arrays of scenario shapes, and whether each applied directly.

    Direct: input, uncached input and output all within 25% of the record's. Otherwise
    ``t = U / prefill + O / decode`` with both rates calibrated on the record, and decode scaled by
    ``decode_factor`` (the roofline's decode speed at the scenario's context over the record's).
    """
    i = np.asarray(input_tokens, dtype=np.float64)
    u = np.asarray(uncached, dtype=np.float64)
    o = np.asarray(output_tokens, dtype=np.float64)
    record_uncached = record.input_tokens * (1 - record.prefix_share)
    decode_rate = record.requests_per_s * (record_uncached / ratio + record.output_tokens)
    prefill_rate = decode_rate * ratio
    converted = 1 / np.maximum(u / prefill_rate + o / (decode_rate * decode_factor), 1e-12)

    def near(value: Arr, measured: float) -> npt.NDArray[np.bool_]:
        return np.asarray(np.abs(value - measured) <= DIRECT_TOLERANCE * measured)

    direct = near(i, record.input_tokens) & near(u, record_uncached) & near(o, record.output_tokens)
    return np.where(direct, record.requests_per_s, converted), direct


def context_decode_factor(
    record: ThroughputRecord, model: ModelSpec, gpu: GpuSpec, input_tokens: float, output_tokens: float
) -> tuple[float, int]:
    """Decode speed of the replica at the scenario's context over the record's, and the batch that fits.

    Longer contexts read more KV cache every step and fewer sequences fit in memory, so a measured
    decode rate does not carry over to a ten times longer prompt (prefix caching does not help decode).
    """
    precision = (record.precision or "bf16").lower()
    kv_dtype = "fp8" if precision in {"fp8", "fp4", "int4"} else "bf16"
    gpus = record.replica_gpus
    batch = max(1, round(record.in_flight or DEFAULT_IN_FLIGHT))
    room = fit(model, gpu, precision, max(int(input_tokens + output_tokens), 1), gpus, kv_dtype)
    if not room.fits:
        raise InputError(
            "self_hosting.record",
            f"{model.id} at {precision.upper()} on {gpus}x {gpu.id} cannot hold one sequence of "
            f"{int(input_tokens + output_tokens):,} tokens (short by {room.shortfall_gb:.1f} GB per GPU); "
            f"would fit: {'; or '.join(room.suggestions)}",
        )
    fitting = min(batch, room.max_sequences)
    measured = decode(model, gpu, precision, batch, record.input_tokens + record.output_tokens / 2, gpus, kv_dtype)
    scenario = decode(model, gpu, precision, fitting, input_tokens + output_tokens / 2, gpus, kv_dtype)
    return scenario.tokens_per_s_total / measured.tokens_per_s_total, fitting


def replica_capacity(
    record: ThroughputRecord,
    record_gpu: GpuSpec,
    input_tokens: float,
    prefix_share: float,
    hit_rate: float,
    output_tokens: float,
    target_gpu: GpuSpec | None = None,
    eff: Efficiency | None = None,
    model: ModelSpec | None = None,
) -> ReplicaCapacity:
    """Requests/s one replica sustains for the scenario's shape; ``model`` (its architecture) lets the
    conversion account for context length and memory, and checks the model fits a different GPU."""
    ratio = prefill_decode_ratio(record, record_gpu, eff)
    u = float(uncached_tokens(input_tokens, prefix_share, hit_rate))
    factor, notes = 1.0, []
    if model is not None:
        factor, batch = context_decode_factor(record, model, record_gpu, input_tokens, output_tokens)
        if abs(factor - 1) > 0.01:
            notes.append(
                f"decode at {input_tokens + output_tokens:,.0f} tokens of context runs x{factor:.2f} the measured "
                f"speed (roofline, batch {batch})"
            )
    rate, direct = replica_rate(record, ratio, input_tokens, u, output_tokens, factor)
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
    scale = 1.0
    if target_gpu is not None and target_gpu.id != record_gpu.id:
        if model is not None:
            precision = (record.precision or "bf16").lower()
            room = fit(model, target_gpu, precision, max(int(input_tokens + output_tokens), 1), record.replica_gpus)
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
) -> ThroughputRecord:
    """A throughput record computed by the roofline for the scenario's own shape.

    The batch is the engine's maximum or what fits in the KV cache, whichever is smaller; a request
    takes its uncached prefill plus its share of the decode steps: ``U / prefill + O x step / B``.
    """
    precision = setup.precision.lower()
    kv_dtype = "fp8" if precision in {"fp8", "fp4", "int4"} else "bf16"
    context = max(int(input_tokens + output_tokens), 1)
    room = fit(model, gpu, precision, context, setup.gpus_per_replica, kv_dtype)
    if not room.fits:
        raise InputError(
            "self_hosting.estimate",
            f"{model.id} at {precision.upper()} does not fit on {setup.gpus_per_replica}x {gpu.id} at "
            f"{context:,} tokens; would fit: {'; or '.join(room.suggestions)}",
        )
    batch = min(setup.max_batch, room.max_sequences)
    point = decode(
        model, gpu, precision, batch, input_tokens + output_tokens / 2, setup.gpus_per_replica, kv_dtype, assumptions
    )
    prefill = prefill_tokens_per_s(model, gpu, precision, input_tokens, setup.gpus_per_replica, assumptions)
    uncached = input_tokens * (1 - prefix_share * hit_rate)
    seconds = uncached / prefill + output_tokens * (point.step_ms / 1000) / batch
    notes = "; ".join((assumptions or RooflineAssumptions()).notes())
    return ThroughputRecord(
        id=f"estimate-{model.id}-{precision}-{setup.gpus_per_replica}x{gpu.id}".replace(".", "-"),
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
        source=Source(document="roofline estimate (calculator/roofline.py), not a measurement", read=dt.date.today()),
        notes=f"ESTIMATE, batch {batch} ({point.bound}-bound decode): {notes}",
    )
