"""Does a model fit, and how many sequences fit in the KV cache? Memory as the engines see it.

    weights      = what the checkpoint holds at its native precision (MXFP4 experts, FP8 with BF16
                   embeddings and head, INT4 groups: :class:`~calculator.catalog.models.Checkpoint`);
                   at any other precision, parameters x bytes per parameter (every expert resident)
    KV per token = 2 x layers x kv_heads x head_dim x bytes   (GQA/MHA; MLA stores one latent per layer;
                                                               sliding-window layers hold at most the window)
    KV budget    = usable memory x utilisation - weights as loaded - engine reserve      (per GPU)
    sequences    = KV budget / KV per sequence at the context length

Usable memory is what the CUDA runtime reports per card, in GiB (``GpuSpec.usable_gib``: 79.19 GiB for an
"80 GB" H100, 44.31 GiB for a "48 GB" L40S); the weights count the vision and audio towers; the engine
reserve is the engine's own (:class:`EngineProfile`: non-torch memory, the start-up profile's activation
peak, MoE workspace, the RoPE table), fitted per release on start-up logs.

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
from calculator.catalog.gpus import GB, GIB, GpuSpec
from calculator.catalog.limits import CONTEXT, GPUS_PER_REPLICA
from calculator.catalog.models import CHECKPOINT_BITS, ModelSpec
from calculator.errors import InputError

__all__ = [
    "ENGINES",
    "KV_DTYPE_BYTES",
    "WEIGHT_BYTES",
    "Attention",
    "EngineProfile",
    "FitResult",
    "bytes_per_weight",
    "default_kv_dtype",
    "engine_profile",
    "fit",
    "kv_split",
    "loaded_weight_bytes",
    "weight_bytes",
]

WEIGHT_BYTES = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5, "fp4": 0.5}
"""Bytes per weight: the one table for memory fit, the roofline's weight reads and sizing."""
KV_DTYPE_BYTES = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0}
DEFAULT_UTILISATION = 0.9
"""Share of GPU memory the engine may take (vLLM's --gpu-memory-utilization default)."""
DEFAULT_RESERVE_GB = 2.0
"""The flat reserve used before engine overheads were calibrated; kept for callers that pass their own."""
Attention = Literal["tp", "dp"]
"""Attention layout: ``tp`` splits every sequence's KV over the GPUs by KV head (an MLA latent is
replicated); ``dp`` (SGLang ``--enable-dp-attention``) keeps each sequence on one GPU."""


DEFAULT_VOCAB = 128_256
"""Vocabulary assumed when a model spec gives none (Llama 3's): vLLM's overhead grows with it."""


class EngineProfile(BaseModel):
    """What an engine release keeps besides weights and KV cache, and how it sizes the cache."""

    model_config = ConfigDict(frozen=True)

    name: str
    releases: str = ""
    """The releases the figures were fitted on and hold for (``0.17 and later``)."""
    utilisation: float
    """Default share of GPU memory the engine may take (vLLM ``--gpu-memory-utilization``)."""
    utilisation_by_gpus: tuple[tuple[int, float], ...] = ()
    """(at least this many GPUs, share) pairs overriding ``utilisation``: SGLang's
    ``--mem-fraction-static`` default falls as tensor parallelism grows."""
    overhead_gib: float
    """Per GPU, inside the engine's share, whatever the model: CUDA context and non-torch memory, and the
    part of the start-up profile's activation peak that does not grow with the vocabulary."""
    parallel_overhead_gib: float = 0.0
    """Per GPU, added when the model spans more than one GPU (NCCL and all-reduce buffers)."""
    sampler_bytes_per_logit: float = 0.0
    """Peak activation of the start-up profile per sequence and vocabulary entry: vLLM warms the
    sampler with ``max_num_seqs`` dummy requests over the whole vocabulary in FP32, several copies."""
    moe_workspace_gib: float = 0.0
    """Per GPU, added for a mixture of experts: the fused-MoE kernels' intermediate buffers in the profile."""
    rope_table_bytes: float = 0.0
    """Bytes per element of the rotary-embedding table the engine keeps on every GPU, ``max_context`` x
    rotary width in the model's dtype (vLLM's ``cos_sin_cache``): 2.5 GiB for Llama-4-Scout's 10M
    positions, a few MiB for most models. 0 where not kept."""
    mxfp4_pad: int = 0
    """On a GPU without FP4 tensor cores, the engine's MXFP4 mixture-of-experts kernels (Marlin, Triton)
    lay each expert's matrices out with the hidden width rounded up to a multiple of this (256): gpt-oss
    (2,880 wide) loads 3,072/2,880 of its expert bytes. 0: the checkpoint's bytes."""
    cuda_graph_gib: float = 0.0
    """CUDA-graph memory counted inside the share. The releases fitted here (vLLM to 0.19, SGLang) capture the
    graphs after sizing the cache, outside the share: vLLM 0.19 logs print 0.8-1.6 GiB of CUDA graphs beside it."""
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
        # vLLM compares the device's total as CUDA reports it with 70 GiB
        large = gpu.usable_gib >= self.large_gpu_gib and not gpu.id.startswith("a100")
        return self.max_num_seqs if large else self.max_num_seqs_small

    def reserve_parts(
        self, gpus: int, vocab_size: int | None = None, gpu: GpuSpec | None = None, model: ModelSpec | None = None
    ) -> tuple[tuple[str, float], ...]:
        """GiB per GPU the engine holds besides weights and KV cache, part by part (parts of 0 left out)."""
        parts = [("CUDA context, non-torch memory and the fixed part of the start-up activation", self.overhead_gib)]
        if gpus > 1:
            parts.append(("communication buffers under tensor parallelism", self.parallel_overhead_gib))
        if self.sampler_bytes_per_logit:
            seqs = self.default_max_num_seqs(gpu) if gpu is not None else self.max_num_seqs
            vocab = vocab_size or (model.vocab_size if model is not None else None) or DEFAULT_VOCAB
            sampler = seqs * vocab * self.sampler_bytes_per_logit / GIB
            parts.append((f"sampler warm-up ({seqs:,} sequences x {vocab:,} logits)", sampler))
        if model is not None and model.experts is not None and self.moe_workspace_gib:
            parts.append(("mixture-of-experts workspace", self.moe_workspace_gib))
        if model is not None and self.rope_table_bytes:
            width = model.mla.qk_rope_head_dim if model.mla is not None else model.head_dim
            table = model.max_context * width * self.rope_table_bytes / GIB
            parts.append((f"RoPE table ({model.max_context:,} positions x {width})", table))
        if self.cuda_graph_gib:
            parts.append(("CUDA graphs", self.cuda_graph_gib))
        return tuple((label, gib) for label, gib in parts if gib > 0)

    def overhead(
        self, gpus: int, vocab_size: int | None = None, gpu: GpuSpec | None = None, model: ModelSpec | None = None
    ) -> float:
        """GiB per GPU the engine holds besides weights and KV cache (the sum of :meth:`reserve_parts`)."""
        return sum(gib for _, gib in self.reserve_parts(gpus, vocab_size, gpu, model))


_VLLM_BASIS = (
    "vLLM sizes the KV cache as total_gpu_memory x gpu_memory_utilization minus the weights as loaded, the "
    "peak activation of its start-up profile and non-torch memory; CUDA graphs are captured after. The peak "
    "is mostly the sampler warm-up over max_num_seqs dummy requests and the whole vocabulary in FP32 "
    "(max_num_seqs defaults to 1024 for vllm serve on GPUs of 70 GiB or more other than the A100, else 256: "
    "vLLM arg_utils; the logs print 'Defaulting max_num_seqs to 1024'). The weights as loaded add vLLM's RoPE "
    "table (max_position_embeddings x rotary width in BF16: Llama-4-Scout loads 53.12 GiB per GPU on 4 H100s "
    "where 108.7B parameters take 50.6) and, on GPUs without FP4, MXFP4 experts padded to a hidden width of "
    "3,072 (gpt-oss-120b loads 64.38 GiB where its files hold 60.66)."
)

ENGINES: dict[str, EngineProfile] = {
    "vllm": EngineProfile(
        name="vLLM",
        releases="0.9 to 0.16",
        utilisation=0.9,
        overhead_gib=0.28,
        parallel_overhead_gib=0.42,
        sampler_bytes_per_logit=37.7,
        rope_table_bytes=2.0,
        mxfp4_pad=256,
        max_num_seqs=1024,
        max_num_seqs_small=256,
        basis=(
            _VLLM_BASIS + " Fitted on vLLM 0.11 logs on one H100 (llm-d/llm-d-benchmark "
            "config_explorer/empirical-vllm-memory-results.md at 259334868c5075da530cc6c90b43fceb11b6e6a7, "
            "Apache-2.0): peak activation 4.76 GiB for Llama-3.1-8B, 5.64 for Qwen3-32B, 7.38 for gpt-oss = "
            "0.15 GiB + 1024 x vocabulary x 37.7 bytes; non-torch 0.13 GiB on one GPU, 0.55 on each of two. "
            "vLLM 0.9.1 (https://github.com/vllm-project/vllm/issues/19996) and 0.15.1 (an A100 40GB log) match "
            "it, and llm-d-planner's release sweep (accuracy/results/version-sweep) shows Qwen3-14B's activation "
            "at 5.64 GiB through 0.16.0 and 2.23 GiB from 0.17.0 on, where the vllm-0.17 profile takes over. This "
            "is the release line in which gpt-oss-120b at 0.95 and 131,072 tokens failed to start on one H100 "
            "with 1.71 GiB of KV cache (https://github.com/vllm-project/vllm/issues/27508)"
        ),
    ),
    "vllm-0.17": EngineProfile(
        name="vLLM 0.17+",
        releases="0.17 and later",
        utilisation=0.9,
        overhead_gib=0.88,
        parallel_overhead_gib=1.85,
        sampler_bytes_per_logit=10.3,
        moe_workspace_gib=0.27,
        rope_table_bytes=2.0,
        mxfp4_pad=256,
        max_num_seqs=1024,
        max_num_seqs_small=256,
        basis=(
            _VLLM_BASIS + " Fitted on vLLM 0.19.0 logs on H100s (llm-d-incubation/llm-d-planner "
            "accuracy/results/v0.19.0/logs, Apache-2.0, read 2026-12-02): peak activation (0.77-3.99 GiB over the "
            "sweep) grows with the vocabulary, 0.63 GiB + 1024 x vocabulary x 10.3 bytes, 0.27 GiB more for a "
            "mixture of experts (fitted on Llama-3.1-8B 1.89, Mixtral-8x7B 1.21 and gpt-oss-20b 2.87 GiB; "
            "Llama-4-Scout's 3.19 is held out); non-torch memory 0.25 GiB on one GPU, 2.07-2.21 GiB per GPU "
            "under tensor parallelism (Llama-3.1-8B on 2 GPUs fitted). The 0.19 logs announce that CUDA-graph "
            "profiling (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS) will count the graphs, 0.8-1.6 GiB there, "
            "inside the share; where a release does, set cuda_graph_gib. Not the "
            "default: most published measurements ran older releases, and for a given setup the older releases "
            "hold less, so a fit that follows them does not promise a start the engine refuses"
        ),
    ),
    "sglang": EngineProfile(
        name="SGLang",
        releases="0.4 series (early 2025)",
        utilisation=0.88,
        utilisation_by_gpus=((2, 0.87), (4, 0.85), (8, 0.81), (16, 0.79)),
        overhead_gib=0.6,
        parallel_overhead_gib=1.5,
        rope_table_bytes=2.0,
        basis=(
            "SGLang sizes the KV pool as the memory free after loading minus total x (1 - mem_fraction_static): "
            "activations and CUDA graphs live in the part outside the fraction, so only the CUDA context and "
            "allocator state count inside it. mem_fraction_static defaults 0.88 / 0.87 / 0.85 / 0.81 / 0.79 "
            "for 1 / 2 / 4 / 8 / 16 GPUs (sglang server_args, 0.4 series, early 2025; newer releases size it "
            "from the chunked-prefill size, so pass the value the log prints). 0.6 GiB fitted on "
            "https://github.com/sgl-project/sglang/pull/4760 (Llama-3.1-8B, one H100: 79.2 - 63.48 - 15.11); "
            "1.5 GiB more per GPU with tensor parallelism fitted on "
            "https://github.com/vllm-project/vllm/issues/21348 (Qwen3-235B-A22B-FP8, 4 x H100, 0.93). The RoPE "
            "table is loaded with the weights, so it comes out of the pool"
        ),
    ),
}
"""Per-engine (and per-release) memory defaults; ``benchmarks/memory_check.py`` prints each log's reported and
computed KV cache and says which logs the figures were fitted on."""


def engine_profile(engine: str) -> EngineProfile:
    """The profile of ``engine`` (``vllm``, ``vllm-0.17`` or ``sglang``); an unknown engine is a named error."""
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
    """All weights, every expert included: a mixture of experts keeps them all resident; the vision and
    audio towers too, in BF16.

    At the checkpoint's native precision (``model.checkpoint``), what the files hold: quantised
    weights with their scales, BF16 embeddings and head. At any other precision, parameters x bytes."""
    per_weight = bytes_per_weight(precision)
    towers = model.tower_params_b * 1e9 * WEIGHT_BYTES["bf16"]
    checkpoint = model.checkpoint
    if checkpoint is not None and checkpoint.precision == precision.lower():
        return checkpoint.weight_bytes(model.params_total_b) + towers
    return model.params_total_b * 1e9 * per_weight + towers


def loaded_weight_bytes(model: ModelSpec, precision: str, gpu: GpuSpec, engine: str = "vllm") -> float:
    """:func:`weight_bytes` as ``engine`` lays them out on ``gpu``: the MXFP4 experts of a checkpoint padded
    to the engine's kernel width on a GPU without FP4 tensor cores (:attr:`EngineProfile.mxfp4_pad`)."""
    weights = weight_bytes(model, precision)
    pad = engine_profile(engine).mxfp4_pad
    checkpoint = model.checkpoint
    native = checkpoint is not None and checkpoint.precision == precision.lower() and checkpoint.format == "mxfp4"
    if not (pad and native and gpu.fp4_dense_tflops is None and model.experts is not None):
        return weights
    assert checkpoint is not None and model.experts is not None
    expert_params = model.experts.expert_params_b or (model.params_total_b - checkpoint.high_precision_params_b)
    experts = (
        expert_params * 1e9 * (CHECKPOINT_BITS[checkpoint.format] / 8 + checkpoint.scale_bytes / checkpoint.group_size)
    )
    padded = math.ceil(model.hidden_size / pad) * pad / model.hidden_size
    return weights + experts * (padded - 1)


def weights_basis(model: ModelSpec, precision: str) -> str:
    """In words, how :func:`weight_bytes` counted."""
    checkpoint = model.checkpoint
    towers = ""
    if model.vision_params_b:
        towers += f"; vision tower {model.vision_params_b:g}B in BF16"
    if model.audio_params_b:
        towers += f"; audio tower {model.audio_params_b:g}B in BF16"
    if checkpoint is not None and checkpoint.precision == precision.lower():
        return (
            f"the {checkpoint.format.upper()} checkpoint as published: "
            f"{model.params_total_b - checkpoint.high_precision_params_b:g}B quantised with one scale per "
            f"{checkpoint.group_size:,}, {checkpoint.high_precision_params_b:g}B in BF16{towers}"
        )
    plain = (
        f"{model.params_total_b:g}B parameters x {bytes_per_weight(precision):g} bytes ({precision.upper()}){towers}"
    )
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
    """Whose memory accounting the fit follows (``vllm``: releases 0.9-0.16, ``vllm-0.17``, ``sglang``)."""
    attention: Attention = "tp"
    """``tp``: KV split by head (MLA latent replicated); ``dp``: each GPU keeps whole sequences."""
    visible_memory_per_gpu_gb: float = 0.0
    """What the CUDA runtime reports per GPU, the figure the utilisation multiplies."""
    weights_basis: str = ""
    """How the weights were counted: the checkpoint as published, or parameters x bytes."""
    usable_memory_per_gpu_gib: float = 0.0
    """What the CUDA runtime reports per GPU in GiB (``GpuSpec.usable_gib``): the figure the utilisation
    multiplies, as the engines' logs print it (79.19 GiB for an H100)."""
    kv_budget_per_gpu_gib: float = 0.0
    """``kv_budget_per_gpu_gb`` in GiB, comparable with vLLM's "Available KV cache memory"."""
    engine_reserve_gib: tuple[tuple[str, float], ...] = ()
    """The engine reserve part by part, GiB per GPU (empty when the caller gave ``reserve_gb``)."""
    engine_releases: str = ""
    """The engine releases whose memory accounting the fit follows (``0.17 and later``)."""
    max_context_that_fits: int = 0
    """The longest context one sequence can hold in the KV budget (0 when not even 16 tokens fit)."""


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
    kv_bytes = _bytes_of(KV_DTYPE_BYTES, kv_dtype, "kv_dtype")
    per_token = model.kv_bytes_per_token(kv_bytes, context)
    ways, replicated = kv_split(model, gpus, attention=attention)
    # data-parallel attention: a sequence lives whole on one GPU; tensor parallel: split by KV head
    per_sequence_gpu = per_token * context if attention == "dp" else per_token * context / ways
    visible = gpu.usable_memory_bytes
    usable = visible * utilisation
    weights = loaded_weight_bytes(model, precision, gpu, engine)
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
        memory_per_gpu_gb=gpu.memory_gb * GIB / GB,  # the marketed figure read as GiB, in GB
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
            f"{profile.name} may use {utilisation:.0%} of the {visible / GIB:.2f} GiB CUDA reports of each "
            f"{gpu.memory_gb:g} GB GPU ({_usable_source(gpu)})",
            f"{reserve_gb:.1f} GB per GPU for the engine's activations, CUDA context and buffers",
            f"weights: {weights_basis(model, precision)}",
            f"KV cache in {kv_dtype.upper()}",
            layout,
        ),
        engine=engine.lower(),
        attention=attention,
        visible_memory_per_gpu_gb=visible / GB,
        weights_basis=_loaded_basis(model, precision, gpu, engine),
        usable_memory_per_gpu_gib=visible / GIB,
        kv_budget_per_gpu_gib=budget / GIB,
        engine_releases=profile.releases,
        max_context_that_fits=_longest_context(model, kv_bytes, budget, ways, attention),
    )


def _usable_source(gpu: GpuSpec) -> str:
    if gpu.usable_memory_gib is None:
        return "derived from the marketed memory, uncertain"
    return "derived, uncertain" if gpu.is_uncertain("usable_memory_gib") else "as engine logs report it"


def _loaded_basis(model: ModelSpec, precision: str, gpu: GpuSpec, engine: str) -> str:
    basis = weights_basis(model, precision)
    extra = loaded_weight_bytes(model, precision, gpu, engine) - weight_bytes(model, precision)
    if extra > 0:
        basis += f"; {extra / GIB:.2f} GiB more as {engine_profile(engine).name} pads the MXFP4 experts without FP4"
    return basis


def _longest_context(model: ModelSpec, kv_bytes: float, budget: float, ways: int, attention: Attention) -> int:
    """The longest context (to 16 tokens) whose one sequence fits ``budget`` bytes on a GPU."""
    split = 1 if attention == "dp" else ways

    def held(context: int) -> float:
        return model.kv_bytes_per_sequence(context, kv_bytes) / split

    if budget <= 0 or held(16) > budget:
        return 0
    low, high = 16, max(model.max_context, 16)
    if held(high) <= budget:
        return high
    while high - low > 16:  # the cache grows with context, so bisect
        middle = (low + high) // 2 // 16 * 16
        low, high = (middle, high) if held(middle) <= budget else (low, middle)
    return low


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
    suggest: bool = True,
) -> FitResult:
    """Memory fit of ``model`` on ``gpus`` x ``gpu``; when it does not fit, what would (``suggest=False``: only
    whether it fits, for a search that tries every setup anyway).

    ``engine`` sets the defaults: the share of memory (vLLM 0.9; SGLang's mem_fraction_static by GPU
    count) and the reserve it holds besides weights and KV (:data:`ENGINES`: ``vllm`` for releases 0.9 to 0.16,
    ``vllm-0.17`` for 0.17 and later, ``sglang``); ``utilisation`` and ``reserve_gb`` (GB per GPU)
    override them. The KV dtype defaults to the model's (BF16). ``attention="dp"`` is data-parallel
    attention: whole sequences per GPU, so an MLA latent is not replicated and the cached tokens add up
    over the GPUs. A setup whose KV budget cannot hold one sequence of ``context`` does not fit (the engine
    refuses to start), and the result says what would: more GPUs, lower precision, a higher utilisation,
    or the longest context that fits."""
    profile = engine_profile(engine)
    _check_attention(attention)
    context = model.default_context if context is None else context
    utilisation = profile.default_utilisation(gpus) if utilisation is None else utilisation
    kv_dtype = kv_dtype or default_kv_dtype(precision)
    if kv_dtype.lower() not in KV_DTYPE_BYTES:
        _bytes_of(KV_DTYPE_BYTES, kv_dtype, "kv_dtype")

    def once(g: int, p: str, kv: str, c: int, share: float = utilisation) -> FitResult:
        parts = profile.reserve_parts(g, model.vocab_size, gpu, model) if reserve_gb is None else ()
        reserve = sum(gib for _, gib in parts) * GIB / GB if reserve_gb is None else reserve_gb
        result = _fit_once(model, gpu, g, p, kv, c, share, reserve, engine, attention)
        return result.model_copy(update={"engine_reserve_gib": parts}) if parts else result

    result = once(gpus, precision, kv_dtype, context)
    if result.fits or not suggest:
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
    for share in (0.92, 0.95, 0.98):
        if share > utilisation and once(gpus, precision, kv_dtype, context, share).fits:
            suggestions.append(f"a memory utilisation of {share:.2f} (vLLM --gpu-memory-utilization)")
            break
    if result.max_context_that_fits >= 512:
        suggestions.append(f"a context of at most {result.max_context_that_fits:,} tokens (vLLM --max-model-len)")
    if not suggestions:
        suggestions.append("a GPU with more memory")
    return result.model_copy(update={"suggestions": tuple(suggestions)})
