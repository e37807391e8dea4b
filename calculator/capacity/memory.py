"""Does a model fit, and how many sequences fit in the KV cache?

    weights      = parameters x bytes per parameter      (a mixture of experts keeps every expert resident)
    KV per token = 2 x layers x kv_heads x head_dim x bytes   (GQA/MHA; MLA stores one latent per layer;
                                                               sliding-window layers hold at most the window)
    KV budget    = memory x utilisation - weights - reserve      (per GPU)
    sequences    = KV budget / KV per sequence at the context length

Tensor parallelism over g GPUs splits the weights g ways, but the KV cache only across KV heads:
an MLA latent, or a GQA model with fewer KV heads than GPUs, is replicated on every GPU.
"Does not fit" is an answer: it says by how much and what would fit instead.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict

from calculator.catalog.gpus import GpuSpec
from calculator.catalog.limits import CONTEXT, GPUS_PER_REPLICA
from calculator.catalog.models import ModelSpec
from calculator.errors import InputError

__all__ = [
    "KV_DTYPE_BYTES",
    "WEIGHT_BYTES",
    "FitResult",
    "bytes_per_weight",
    "default_kv_dtype",
    "fit",
    "kv_split",
    "weight_bytes",
]

WEIGHT_BYTES = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5, "fp4": 0.5}
"""Bytes per weight: the one table for memory fit, the roofline's weight reads and sizing."""
KV_DTYPE_BYTES = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0}
DEFAULT_UTILISATION = 0.9
"""Share of GPU memory the engine may take (vLLM's --gpu-memory-utilization default)."""
DEFAULT_RESERVE_GB = 2.0
"""Activations, CUDA graphs and the engine's own buffers per GPU: an assumption, shown as one."""
GB = 1e9
GIB = 2**30
"""GPU memory is sold in binary units: an "80 GB" H100 holds 80 GiB (85.9 GB; nvidia-smi shows 81,559 MiB)."""


def _bytes_of(table: dict[str, float], value: str, field: str) -> float:
    try:
        return table[value.lower()]
    except KeyError:
        raise InputError(field, f"unknown precision {value!r}; choose one of {', '.join(table)}") from None


def bytes_per_weight(precision: str) -> float:
    """Bytes one weight takes at ``precision``; an unknown precision is a named error."""
    return _bytes_of(WEIGHT_BYTES, precision, "precision")


def default_kv_dtype(precision: str) -> str:
    """The KV cache an engine keeps when not told: FP8 beside FP8 or narrower weights, else BF16."""
    return "fp8" if precision.lower() in {"fp8", "fp4", "int4"} else "bf16"


def weight_bytes(model: ModelSpec, precision: str) -> float:
    """All weights, every expert included: a mixture of experts keeps them all resident."""
    return model.params_total_b * 1e9 * bytes_per_weight(precision)


def kv_split(model: ModelSpec, gpus: int) -> tuple[int, bool]:
    """How many ways the KV cache splits over ``gpus``, and whether it is (partly) replicated."""
    if model.mla is not None:
        return 1, gpus > 1
    ways = min(gpus, model.kv_heads)
    return ways, ways < gpus


class FitResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    model: str
    gpu: str
    gpus: int
    precision: str
    kv_dtype: str
    context: int
    memory_per_gpu_gb: float
    utilisation: float
    reserve_gb: float
    weights_gb: float
    weights_per_gpu_gb: float
    kv_bytes_per_token: float
    """For the whole model, averaged over a sequence of ``context`` tokens (sliding windows included)."""
    kv_per_sequence_per_gpu_gb: float
    kv_replicated: bool
    kv_budget_per_gpu_gb: float
    max_sequences: int
    max_cached_tokens: int
    fits: bool
    shortfall_gb: float
    """Per GPU: how much memory is missing for one sequence at the context (0 when it fits)."""
    suggestions: tuple[str, ...]
    assumptions: tuple[str, ...]


def _fit_once(
    model: ModelSpec,
    gpu: GpuSpec,
    gpus: int,
    precision: str,
    kv_dtype: str,
    context: int,
    utilisation: float,
    reserve_gb: float,
) -> FitResult:
    GPUS_PER_REPLICA.check(gpus, "gpus")
    CONTEXT.check(context, "context")
    if not 0 < utilisation <= 1:
        raise InputError("utilisation", f"must be between 0 and 1, got {utilisation}")
    weights = weight_bytes(model, precision)
    kv_bytes = _bytes_of(KV_DTYPE_BYTES, kv_dtype, "kv_dtype")
    per_token = model.kv_bytes_per_token(kv_bytes, context)
    ways, replicated = kv_split(model, gpus)
    per_sequence_gpu = per_token * context / ways
    usable = gpu.memory_gb * GIB * utilisation
    weights_gpu = weights / gpus
    budget = usable - weights_gpu - reserve_gb * GB
    sequences = max(0, math.floor(budget / per_sequence_gpu)) if per_sequence_gpu > 0 else 0
    shortfall = 0.0 if sequences >= 1 else (per_sequence_gpu - budget) / GB
    cached_tokens = max(0, math.floor(budget * ways / per_token)) if per_token > 0 else 0
    return FitResult(
        model=model.id,
        gpu=gpu.id,
        gpus=gpus,
        precision=precision.lower(),
        kv_dtype=kv_dtype.lower(),
        context=context,
        memory_per_gpu_gb=gpu.memory_gb * GIB / GB,
        utilisation=utilisation,
        reserve_gb=reserve_gb,
        weights_gb=weights / GB,
        weights_per_gpu_gb=weights_gpu / GB,
        kv_bytes_per_token=per_token,
        kv_per_sequence_per_gpu_gb=per_sequence_gpu / GB,
        kv_replicated=replicated,
        kv_budget_per_gpu_gb=budget / GB,
        max_sequences=sequences,
        max_cached_tokens=cached_tokens,
        fits=sequences >= 1,
        shortfall_gb=max(shortfall, 0.0),
        suggestions=(),
        assumptions=(
            f"engine may use {utilisation:.0%} of each GPU's {gpu.memory_gb:g} GiB ({gpu.memory_gb * GIB / GB:.1f} GB)",
            f"{reserve_gb:g} GB per GPU reserved for activations and buffers",
            "tensor parallel: weights split evenly; KV cache split across KV heads only",
        ),
    )


def fit(
    model: ModelSpec,
    gpu: GpuSpec,
    precision: str = "bf16",
    context: int | None = None,
    gpus: int = 1,
    kv_dtype: str | None = None,
    utilisation: float = DEFAULT_UTILISATION,
    reserve_gb: float = DEFAULT_RESERVE_GB,
) -> FitResult:
    """Memory fit of ``model`` on ``gpus`` x ``gpu``; when it does not fit, what would."""
    context = model.default_context if context is None else context
    kv_dtype = kv_dtype or default_kv_dtype(precision)
    if kv_dtype.lower() not in KV_DTYPE_BYTES:
        _bytes_of(KV_DTYPE_BYTES, kv_dtype, "kv_dtype")
    result = _fit_once(model, gpu, gpus, precision, kv_dtype, context, utilisation, reserve_gb)
    if result.fits:
        return result
    suggestions = []
    for more in (2, 4, 8, 16, 32, 64):
        if more > gpus and _fit_once(model, gpu, more, precision, kv_dtype, context, utilisation, reserve_gb).fits:
            suggestions.append(f"{more} GPUs (tensor parallel {more})")
            break
    for lower in ("fp8", "int4"):
        if WEIGHT_BYTES[lower] < WEIGHT_BYTES[precision.lower()] and (
            _fit_once(model, gpu, gpus, lower, "fp8", context, utilisation, reserve_gb).fits
        ):
            suggestions.append(f"{lower.upper()} weights with an FP8 KV cache on {gpus} GPU(s)")
            break
    shorter = context
    while shorter > 512:
        shorter //= 2
        if _fit_once(model, gpu, gpus, precision, kv_dtype, shorter, utilisation, reserve_gb).fits:
            suggestions.append(f"a context of {shorter:,} tokens")
            break
    if not suggestions:
        suggestions.append("a GPU with more memory")
    return result.model_copy(update={"suggestions": tuple(suggestions)})
