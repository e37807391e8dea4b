"""Does a model fit, and how many sequences fit in the KV cache? Memory as the engines see it.

    weights      = what the checkpoint holds at its native precision (MXFP4 experts, FP8 with BF16
                   embeddings and head, INT4 groups: :class:`~calculator.catalog.models.Checkpoint`);
                   at any other precision, parameters x bytes per parameter (every expert resident)
    KV per token = 2 x layers x kv_heads x head_dim x bytes   (GQA/MHA; MLA stores one latent per layer;
                                                               sliding-window layers hold at most the window)
    KV budget    = visible memory x utilisation - weights - engine overhead      (per GPU)
    sequences    = KV budget / KV per sequence at the context length

The KV dtype defaults to the model's dtype (BF16), as vLLM's and SGLang's ``--kv-cache-dtype auto``
do, whatever the weights' precision; FP8 KV is the user's choice. The engine overhead (activation
peak, sampler warm-up, CUDA context and communication buffers) is a per-engine default calibrated on
engine logs that print the KV cache size (see :data:`ENGINES` and ``benchmarks/memory_check.py``).

Tensor parallelism over g GPUs splits the weights g ways, but the KV cache only across KV heads:
an MLA latent, or a GQA model with fewer KV heads than GPUs, is replicated on every GPU. Data-parallel
attention (SGLang's ``--enable-dp-attention``) keeps each sequence's whole cache on one GPU, so nothing
is replicated and the cached tokens add up over the GPUs; the experts and MLPs are still split over
them, while each GPU keeps all attention weights (``ModelSpec.attention_params_b``; 11.4B for DeepSeek-V3).
"Does not fit" is an answer: it says by how much and what would fit instead.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict

from calculator.capacity.memo import by_identity
from calculator.catalog.gpus import GpuSpec
from calculator.catalog.limits import CONTEXT, GPUS_PER_REPLICA
from calculator.catalog.models import ModelSpec
from calculator.errors import InputError

__all__ = [
    "ENGINES",
    "KV_DTYPE_BYTES",
    "VISIBLE_MEMORY_SHARE",
    "WEIGHT_BYTES",
    "Attention",
    "EngineProfile",
    "FitResult",
    "bytes_per_weight",
    "default_kv_dtype",
    "engine_profile",
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
"""The flat reserve used before engine overheads were calibrated; kept for callers that pass their own."""
GB = 1e9
GIB = 2**30
"""GPU memory is sold in binary units: an "80 GB" H100 holds 80 GiB (85.9 GB; nvidia-smi shows 81,559 MiB)."""
VISIBLE_MEMORY_SHARE = 0.99
"""Share of the marketed memory the CUDA runtime reports as total (what ``--gpu-memory-utilization``
multiplies): vLLM logs print ``total_gpu_memory`` 79.11-79.22 GiB for an 80 GB H100 (0.989-0.990) and
39.39-39.50 GiB for a 40 GB A100 (0.985-0.988); read 2026-11-30 from public vLLM logs (vLLM issues
#10517, #13061 and log excerpts quoted in public repositories)."""

Attention = Literal["tp", "dp"]
"""Attention layout: ``tp`` splits every sequence's KV over the GPUs by KV head (an MLA latent is
replicated); ``dp`` (SGLang ``--enable-dp-attention``) keeps each sequence on one GPU."""


DEFAULT_VOCAB = 128_256
"""Vocabulary assumed when a model spec gives none (Llama 3's): vLLM's overhead grows with it."""


class EngineProfile(BaseModel):
    """What an engine keeps besides weights and KV cache, and how it sizes the cache."""

    model_config = ConfigDict(frozen=True)

    name: str
    utilisation: float
    """Default share of GPU memory the engine may take (vLLM ``--gpu-memory-utilization``)."""
    utilisation_by_gpus: tuple[tuple[int, float], ...] = ()
    """(at least this many GPUs, share) pairs overriding ``utilisation``: SGLang's
    ``--mem-fraction-static`` default falls as tensor parallelism grows."""
    overhead_gib: float
    """Per GPU, inside the engine's share, whatever the model: CUDA context and non-torch memory."""
    parallel_overhead_gib: float = 0.0
    """Per GPU, added when the model spans more than one GPU (NCCL and all-reduce buffers)."""
    sampler_bytes_per_logit: float = 0.0
    """Peak activation of the start-up profile per sequence and vocabulary entry: vLLM warms the
    sampler with ``max_num_seqs`` dummy requests over the whole vocabulary in FP32, several copies."""
    max_num_seqs: int = 0
    """Sequences the engine schedules by default on a GPU of at least ``large_gpu_gib`` (not an A100)."""
    max_num_seqs_small: int = 0
    """Sequences it schedules by default on smaller GPUs and A100s."""
    large_gpu_gib: float = 70.0
    basis: str
    """How the figures were found, with sources."""

    def default_utilisation(self, gpus: int) -> float:
        share = self.utilisation
        for at_least, value in self.utilisation_by_gpus:
            if gpus >= at_least:
                share = value
        return share

    def default_max_num_seqs(self, gpu: GpuSpec) -> int:
        large = gpu.memory_gb * VISIBLE_MEMORY_SHARE >= self.large_gpu_gib and not gpu.id.startswith("a100")
        return self.max_num_seqs if large else self.max_num_seqs_small

    def overhead(self, gpus: int, vocab_size: int | None = None, gpu: GpuSpec | None = None) -> float:
        """GiB per GPU the engine holds besides weights and KV cache."""
        fixed = self.overhead_gib + (self.parallel_overhead_gib if gpus > 1 else 0.0)
        if not self.sampler_bytes_per_logit:
            return fixed
        seqs = self.default_max_num_seqs(gpu) if gpu is not None else self.max_num_seqs
        vocab = vocab_size or DEFAULT_VOCAB
        return fixed + seqs * vocab * self.sampler_bytes_per_logit / GIB


ENGINES: dict[str, EngineProfile] = {
    "vllm": EngineProfile(
        name="vLLM",
        utilisation=0.9,
        overhead_gib=0.13,
        parallel_overhead_gib=1.0,
        sampler_bytes_per_logit=34.0,
        max_num_seqs=1024,
        max_num_seqs_small=256,
        basis=(
            "vLLM sizes the KV cache as total_gpu_memory x gpu_memory_utilization minus weights, the peak "
            "activation of its start-up profile and non-torch memory (CUDA graphs are captured after). The peak "
            "is mostly the sampler warm-up over max_num_seqs dummy requests and the whole vocabulary in FP32: "
            "max_num_seqs x vocabulary x 34 bytes; max_num_seqs defaults to 1024 for vllm serve on GPUs of 70 GiB "
            "or more other than the A100, else 256 (vLLM arg_utils; the logs print 'Defaulting max_num_seqs to "
            "1024'). Non-torch memory 0.13 GiB on one GPU, 1.0 GiB more per GPU under tensor parallelism. The "
            "34 bytes and 1.0 GiB are fitted together on three logs across versions (vLLM 0.9.1: "
            "https://github.com/vllm-project/vllm/issues/19996; vLLM 0.19.0, Llama-3.1-8B on 1 and 2 H100s: "
            "https://github.com/llm-d-incubation/llm-d-planner accuracy/results/v0.19.0/logs; read 2026-11-30). "
            "Releases differ: 0.17+ profiles less activation (1.9 GiB for Llama-3.1-8B where older ones took "
            "4.8) and more non-torch memory under tensor parallelism (2.1 GiB), so the default sits between them "
            "(errors of 4% either way, printed by benchmarks/memory_check.py)"
        ),
    ),
    "sglang": EngineProfile(
        name="SGLang",
        utilisation=0.88,
        utilisation_by_gpus=((2, 0.87), (4, 0.85), (8, 0.81), (16, 0.79)),
        overhead_gib=0.6,
        parallel_overhead_gib=1.5,
        basis=(
            "SGLang sizes the KV pool as the memory free after loading minus total x (1 - mem_fraction_static): "
            "activations and CUDA graphs live in the part outside the fraction, so only the CUDA context and "
            "allocator state count inside it. mem_fraction_static defaults 0.88 / 0.87 / 0.85 / 0.81 / 0.79 "
            "for 1 / 2 / 4 / 8 / 16 GPUs (sglang server_args, 0.4 series, early 2025; newer releases size it "
            "from the chunked-prefill size, so pass the value the log prints). 0.6 GiB fitted on "
            "https://github.com/sgl-project/sglang/pull/4760 (Llama-3.1-8B, one H100: 79.2 - 63.48 - 15.11); "
            "1.5 GiB more per GPU with tensor parallelism fitted on "
            "https://github.com/vllm-project/vllm/issues/21348 (Qwen3-235B-A22B-FP8, 4 x H100, 0.93)"
        ),
    ),
}
"""Per-engine memory defaults; ``benchmarks/memory_check.py`` prints each log's reported and computed
KV cache and says which logs the figures were fitted on."""


def engine_profile(engine: str) -> EngineProfile:
    """The profile of ``engine`` (``vllm`` or ``sglang``); an unknown engine is a named error."""
    try:
        return ENGINES[engine.lower()]
    except KeyError:
        raise InputError("engine", f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}") from None


def _bytes_of(table: dict[str, float], value: str, field: str) -> float:
    try:
        return table[value.lower()]
    except KeyError:
        raise InputError(field, f"unknown precision {value!r}; choose one of {', '.join(table)}") from None


def bytes_per_weight(precision: str) -> float:
    """Bytes one weight takes at ``precision``; an unknown precision is a named error."""
    return _bytes_of(WEIGHT_BYTES, precision, "precision")


def default_kv_dtype(precision: str) -> str:
    """The KV cache an engine keeps when not told: the model's dtype (vLLM and SGLang
    ``--kv-cache-dtype auto``), BF16 for every bundled model whatever the weights' precision; FP16
    when the model runs in FP16. An FP8 cache is the user's choice (``kv_dtype="fp8"``)."""
    return "fp16" if precision.lower() == "fp16" else "bf16"


def weight_bytes(model: ModelSpec, precision: str) -> float:
    """All weights, every expert included: a mixture of experts keeps them all resident.

    At the checkpoint's native precision (``model.checkpoint``), what the files hold: quantised
    weights with their scales, BF16 embeddings and head. At any other precision, parameters x bytes."""
    per_weight = bytes_per_weight(precision)
    checkpoint = model.checkpoint
    if checkpoint is not None and checkpoint.precision == precision.lower():
        return checkpoint.weight_bytes(model.params_total_b)
    return model.params_total_b * 1e9 * per_weight


def weights_basis(model: ModelSpec, precision: str) -> str:
    """In words, how :func:`weight_bytes` counted."""
    checkpoint = model.checkpoint
    if checkpoint is not None and checkpoint.precision == precision.lower():
        return (
            f"the {checkpoint.format.upper()} checkpoint as published: "
            f"{model.params_total_b - checkpoint.high_precision_params_b:g}B quantised with one scale per "
            f"{checkpoint.group_size:,}, {checkpoint.high_precision_params_b:g}B in BF16"
        )
    plain = f"{model.params_total_b:g}B parameters x {bytes_per_weight(precision):g} bytes ({precision.upper()})"
    if checkpoint is not None:
        # say which precision reads the files as published, so a BF16 default is not mistaken for them
        plain += f"; the published checkpoint is {checkpoint.format.upper()} (--precision {checkpoint.precision})"
    return plain


def kv_split(model: ModelSpec, gpus: int, *, attention: Attention = "tp") -> tuple[int, bool]:
    """How many ways the KV cache splits over ``gpus``, and whether it is (partly) replicated.

    With data-parallel attention each GPU keeps whole sequences: no copy, and taken over the
    replica the cache is ``gpus`` times what one GPU holds, as if split ``gpus`` ways."""
    _check_attention(attention)
    if attention == "dp":
        return gpus, False
    if model.mla is not None:
        return 1, gpus > 1
    ways = min(gpus, model.kv_heads)
    return ways, ways < gpus


def _check_attention(attention: str) -> None:
    if attention not in ("tp", "dp"):
        raise InputError("attention", f"unknown attention layout {attention!r}; choose tp or dp")


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
    """Per GPU, what the engine holds besides weights and KV cache (its calibrated overhead)."""
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
    engine: str = "vllm"
    """Whose memory accounting the fit follows (``vllm`` or ``sglang``)."""
    attention: Attention = "tp"
    """``tp``: KV split by head (MLA latent replicated); ``dp``: each GPU keeps whole sequences."""
    visible_memory_per_gpu_gb: float = 0.0
    """What the CUDA runtime reports per GPU, the figure the utilisation multiplies."""
    weights_basis: str = ""
    """How the weights were counted: the checkpoint as published, or parameters x bytes."""


def _fit_once(
    model: ModelSpec,
    gpu: GpuSpec,
    gpus: int,
    precision: str,
    kv_dtype: str,
    context: int,
    utilisation: float,
    reserve_gb: float,
    engine: str = "vllm",
    attention: Attention = "tp",
) -> FitResult:
    GPUS_PER_REPLICA.check(gpus, "gpus")
    CONTEXT.check(context, "context")
    if not 0 < utilisation <= 1:
        raise InputError("utilisation", f"must be between 0 and 1, got {utilisation}")
    weights = weight_bytes(model, precision)
    kv_bytes = _bytes_of(KV_DTYPE_BYTES, kv_dtype, "kv_dtype")
    per_token = model.kv_bytes_per_token(kv_bytes, context)
    ways, replicated = kv_split(model, gpus, attention=attention)
    # data-parallel attention: a sequence lives whole on one GPU; tensor parallel: split by KV head
    per_sequence_gpu = per_token * context if attention == "dp" else per_token * context / ways
    visible = gpu.memory_gb * GIB * VISIBLE_MEMORY_SHARE
    usable = visible * utilisation
    weights_gpu = weights / gpus
    replicated_attention = attention == "dp" and gpus > 1 and model.attention_params_b is not None
    if replicated_attention and model.attention_params_b is not None:
        # data-parallel attention: every GPU keeps all attention weights, the rest is split
        share = model.attention_params_b / model.params_total_b
        weights_gpu = weights * ((1 - share) / gpus + share)
    budget = usable - weights_gpu - reserve_gb * GB
    per_gpu_sequences = max(0, math.floor(budget / per_sequence_gpu)) if per_sequence_gpu > 0 else 0
    sequences = per_gpu_sequences * gpus if attention == "dp" else per_gpu_sequences
    shortfall = 0.0 if per_gpu_sequences >= 1 else (per_sequence_gpu - budget) / GB
    cached_tokens = max(0, math.floor(budget * ways / per_token)) if per_token > 0 else 0
    profile = engine_profile(engine)
    if attention == "tp":
        layout = "tensor parallel: weights split evenly; KV cache split across KV heads only"
    elif replicated_attention:
        layout = (
            "data-parallel attention: each GPU keeps whole sequences and all attention weights "
            f"({model.attention_params_b:g}B parameters); the rest of the weights split over the GPUs"
        )
    else:
        layout = (
            "data-parallel attention: each GPU keeps whole sequences; weights split over the GPUs (the spec "
            "gives no attention parameter count, so the attention weights each GPU repeats are not counted)"
        )
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
        fits=per_gpu_sequences >= 1,
        shortfall_gb=max(shortfall, 0.0),
        suggestions=(),
        assumptions=(
            f"{profile.name} may use {utilisation:.0%} of what CUDA reports of each GPU's {gpu.memory_gb:g} GiB "
            f"({VISIBLE_MEMORY_SHARE:.0%}: {visible / GB:.1f} GB)",
            f"{reserve_gb:.1f} GB per GPU for the engine's activations, CUDA context and buffers",
            f"weights: {weights_basis(model, precision)}",
            f"KV cache in {kv_dtype.upper()}",
            layout,
        ),
        engine=engine.lower(),
        attention=attention,
        visible_memory_per_gpu_gb=visible / GB,
        weights_basis=weights_basis(model, precision),
    )


@by_identity()  # a sweep sizes the same replica at twenty prefix shares: the memory of one context is one answer
def fit(
    model: ModelSpec,
    gpu: GpuSpec,
    precision: str = "bf16",
    context: int | None = None,
    gpus: int = 1,
    kv_dtype: str | None = None,
    utilisation: float | None = None,
    reserve_gb: float | None = None,
    *,
    engine: str = "vllm",
    attention: Attention = "tp",
) -> FitResult:
    """Memory fit of ``model`` on ``gpus`` x ``gpu``; when it does not fit, what would.

    ``engine`` sets the defaults: the share of memory (vLLM 0.9; SGLang's mem_fraction_static by GPU
    count) and the overhead it holds besides weights and KV (:data:`ENGINES`); ``utilisation`` and
    ``reserve_gb`` (GB per GPU) override them. The KV dtype defaults to the model's (BF16).
    ``attention="dp"`` is data-parallel attention: whole sequences per GPU, so an MLA latent is
    not replicated and the cached tokens add up over the GPUs."""
    profile = engine_profile(engine)
    _check_attention(attention)
    context = model.default_context if context is None else context
    utilisation = profile.default_utilisation(gpus) if utilisation is None else utilisation
    if reserve_gb is None:
        reserve_gb = profile.overhead(gpus, model.vocab_size, gpu) * GIB / GB
    kv_dtype = kv_dtype or default_kv_dtype(precision)
    if kv_dtype.lower() not in KV_DTYPE_BYTES:
        _bytes_of(KV_DTYPE_BYTES, kv_dtype, "kv_dtype")

    def once(g: int, p: str, kv: str, c: int) -> FitResult:
        return _fit_once(model, gpu, g, p, kv, c, utilisation, reserve_gb, engine, attention)

    result = once(gpus, precision, kv_dtype, context)
    if result.fits:
        return result
    suggestions = []
    for more in (2, 4, 8, 16, 32, 64):
        if more > gpus and once(more, precision, kv_dtype, context).fits:
            suggestions.append(f"{more} GPUs (tensor parallel {more})")
            break
    for lower in ("fp8", "int4"):
        if WEIGHT_BYTES[lower] < WEIGHT_BYTES[precision.lower()] and once(gpus, lower, "fp8", context).fits:
            suggestions.append(f"{lower.upper()} weights with an FP8 KV cache on {gpus} GPU(s)")
            break
    shorter = context
    while shorter > 512:
        shorter //= 2
        if once(gpus, precision, kv_dtype, shorter).fits:
            suggestions.append(f"a context of {shorter:,} tokens")
            break
    if not suggestions:
        suggestions.append("a GPU with more memory")
    return result.model_copy(update={"suggestions": tuple(suggestions)})
