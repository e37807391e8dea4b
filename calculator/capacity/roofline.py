"""Roofline estimates of decode and prefill speed, for when nothing is measured. Always an estimate.

Decode is bound by memory bandwidth, prefill by compute::

    decode step (batch B, mean context c) = max(
        (weights read + B x c x KV bytes/token) / (bandwidth x eff_bw),
        (2 x active params + attention) x B / (FLOP/s x eff_flops))
    prefill tokens/s = FLOP/s x eff_prefill / (2 x active params + attention at the prompt length)
    attention        ~ 4 x layers x hidden x context FLOPs per token

A mixture of experts reads the shared weights plus the experts its batch touches: with E experts of
which k serve each token, a batch of B touches 1 - (1 - k/E)^B of them, growing towards all.
Tensor parallelism adds GPUs' bandwidth and FLOP/s, less a communication overhead. What-if
multipliers (speculative decoding, a lower precision) are assumptions and say so.

The default efficiencies were fitted to the published measurements in ``benchmarks/roofline_cases.yaml``
(``benchmarks/roofline_check.py`` prints estimate against measurement for each): within 25% on the
five cases consistent with their stated conditions. That is in-sample: expect more on other setups.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from calculator.capacity.memory import KV_DTYPE_BYTES, WEIGHT_BYTES, kv_split
from calculator.catalog.gpus import GpuSpec
from calculator.catalog.models import ModelSpec

__all__ = ["DecodePoint", "RooflineAssumptions", "decode", "expert_share_read", "prefill_tokens_per_s"]


class RooflineAssumptions(BaseModel):
    """Efficiency factors and what-ifs: every one is an assumption, shown next to the estimate."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    bandwidth_efficiency: float = Field(default=0.65, gt=0, le=1)
    """Share of peak memory bandwidth a decode step reaches."""
    decode_flops_efficiency: float = Field(default=0.35, gt=0, le=1)
    """Share of peak dense FLOP/s a large decode batch reaches."""
    prefill_flops_efficiency: float = Field(default=0.5, gt=0, le=1)
    """Share of peak dense FLOP/s prefill reaches (model FLOPs utilisation)."""
    tp_overhead: float = Field(default=0.3, ge=0, le=1)
    """Extra time per step for tensor-parallel communication, when on more than one GPU."""
    speculative_speedup: float = Field(default=1.0, ge=1, le=5)
    """What-if: decode speed-up from speculative decoding (1 = off); depends on acceptance, so an assumption."""

    def notes(self) -> list[str]:
        out = [
            f"decode reaches {self.bandwidth_efficiency:.0%} of peak bandwidth and "
            f"{self.decode_flops_efficiency:.0%} of peak FLOP/s",
            f"prefill reaches {self.prefill_flops_efficiency:.0%} of peak FLOP/s",
            f"tensor-parallel communication adds {self.tp_overhead:.0%} per step",
        ]
        if self.speculative_speedup > 1:
            out.append(f"what-if: speculative decoding speeds decode {self.speculative_speedup:g}x (assumed)")
        return out


def expert_share_read(model: ModelSpec, batch: float) -> float:
    """Share of the routed experts a decode batch reads (1 for a dense model)."""
    if model.experts is None or model.experts.total <= 0:
        return 1.0
    k, e = model.experts.active, model.experts.total
    untouched: float = (1.0 - k / e) ** max(batch, 1.0)
    return 1.0 - untouched


def weights_read_bytes(model: ModelSpec, precision: str, batch: float) -> float:
    per_param = WEIGHT_BYTES[precision.lower()]
    if not model.is_moe:
        return model.params_total_b * 1e9 * per_param
    routed = model.routed_expert_params_b
    return (model.params_total_b - routed + routed * expert_share_read(model, batch)) * 1e9 * per_param


def attention_flops_per_token(model: ModelSpec, context: float) -> float:
    return 4.0 * model.layers * model.hidden_size * context


class DecodePoint(BaseModel):
    model_config = ConfigDict(frozen=True)

    batch: int
    step_ms: float
    tokens_per_s_per_user: float
    tokens_per_s_total: float
    bound: str
    """'memory' or 'compute': which roof the step hits."""


def decode(
    model: ModelSpec,
    gpu: GpuSpec,
    precision: str,
    batch: int,
    context: float,
    gpus: int = 1,
    kv_dtype: str = "bf16",
    assumptions: RooflineAssumptions | None = None,
) -> DecodePoint:
    """One decode step for ``batch`` sequences at a mean context of ``context`` tokens."""
    a = assumptions or RooflineAssumptions()
    kv = model.kv_bytes_per_token(KV_DTYPE_BYTES[kv_dtype.lower()], int(context) or None)
    # each GPU reads its slice of the weights and its share of the KV cache, which splits only across
    # KV heads: an MLA latent (or fewer KV heads than GPUs) is read in full by every GPU
    ways, _ = kv_split(model, gpus)
    per_gpu = weights_read_bytes(model, precision, batch) / gpus + batch * context * kv / ways
    memory_s = per_gpu / (gpu.memory_bandwidth_tbs * 1e12 * a.bandwidth_efficiency)
    flops = (2 * model.params_active_b * 1e9 + attention_flops_per_token(model, context)) * batch
    compute_s = flops / (gpu.dense_tflops(precision) * 1e12 * gpus * a.decode_flops_efficiency)
    step = max(memory_s, compute_s) * (1 + (a.tp_overhead if gpus > 1 else 0)) / a.speculative_speedup
    return DecodePoint(
        batch=batch,
        step_ms=step * 1000,
        tokens_per_s_per_user=1 / step,
        tokens_per_s_total=batch / step,
        bound="memory" if memory_s >= compute_s else "compute",
    )


def prefill_tokens_per_s(
    model: ModelSpec,
    gpu: GpuSpec,
    precision: str,
    prompt_tokens: float,
    gpus: int = 1,
    assumptions: RooflineAssumptions | None = None,
) -> float:
    """Prompt tokens per second; a causal prompt's tokens see half its length on average."""
    a = assumptions or RooflineAssumptions()
    per_token = 2 * model.params_active_b * 1e9 + attention_flops_per_token(model, prompt_tokens / 2)
    rate = gpu.dense_tflops(precision) * 1e12 * gpus * a.prefill_flops_efficiency / per_token
    return rate / (1 + (a.tp_overhead if gpus > 1 else 0))
