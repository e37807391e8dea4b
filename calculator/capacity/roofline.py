"""Roofline estimates of decode and prefill speed: the one model of GPU speed, with one set of efficiencies.

Decode is bound by memory bandwidth, prefill by compute::

    decode step (batch B, mean context c) = max(
        (shared weights + experts touched / eff_moe + B x c x KV bytes/token) / (bandwidth x eff_bw),
        (2 x (shared active + routed active / eff_moe) + attention) x B / (FLOP/s x eff_flops))
        x (1 + TP overhead)  +  layers x (per-layer time [+ per-MoE-layer time])  +  B x per-sequence time
    prefill tokens/s = FLOP/s x eff_prefill / (2 x (shared active + routed active / eff_moe_prefill) + attention)
    attention        ~ 4 x layers x heads x head_dim x context FLOPs per token (MLA decode: on the latent),
                       at the BF16 rate whatever the weights' precision
    request time     = uncached tokens / prefill tokens/s + output tokens x step / B

A decode step also costs a fixed time per layer (launches, synchronisation) and per sequence (host-side
scheduling and sampling). A mixture of experts reads the shared weights (attention, embeddings, shared
experts, dense layers) plus the experts its batch touches: with E experts of which k serve each token, a
batch of B touches 1 - (1 - k/E)^B of them, growing towards all. Only the routed experts' bytes and FLOPs
run at ``moe_efficiency`` (decode) and ``moe_prefill_efficiency`` (prefill) of the dense roofs: their
grouped GEMMs over a few tokens each are the part engines run far below the roof; the rest of the model
runs at the dense efficiencies. Tensor parallelism adds GPUs' bandwidth and FLOP/s, less a communication
overhead. What-if multipliers (speculative decoding, a lower precision) are assumptions and say so.

:class:`RooflineAssumptions` is the only place efficiencies live: the estimate, the split of a
measured record's time into prefill and decode (``calculator.capacity.sizing``), the calibration
and the Capacity page's charts all take the same object. A step is worked out in two parts: its terms
(:class:`StepTerms`, :class:`PrefillTerms`: bytes and FLOPs, which no efficiency changes) and the
efficiencies applied to them (:func:`step_seconds`, :func:`prefill_point`), so the calibration tries
hundreds of efficiency sets on terms it computed once. The defaults are
:func:`calculator.capacity.calibration.fit_assumptions` on the ``fit`` cases of
``calculator/data/roofline_cases.yaml`` (80 points: TensorRT-LLM's v1.0 perf overview, GPUStack's DeepSeek-R1
and gpt-oss-120b pages, the earlier cases), refitted 2026-11-30 once the calibration read GPUStack's ShareGPT
runs as bursts (:func:`calculator.capacity.calibration.burst_seconds`) and again 2026-12-02 with a fixed
cost per mixture-of-experts layer in the grid (the fit split sets it to 0, so the defaults did not move);
``benchmarks/roofline_check.py --refit`` refits and says whether they still agree.

The error stated to users is the one on the ``holdout`` cases the fit never saw
(:func:`calculator.capacity.calibration.estimate_error`): on 2026-12-02, 265 points (222 mixture-of-experts;
TensorRT-LLM's later perf overview, dstack's DeepSeek-R1 runs on 8x MI300X and 8x H200, NIM's Llama 3.3 70B
sweep and MLPerf v5.1's MI300X, MI325X, H200 and B200 runs joined GPUStack's other pages, Vultr's, Lambda's
and the GLM-5 gist), a median |error| of 36% and a worst of 362%, 10th-90th percentile -27% to +121% (19% and
243% on the 63 points before). The stricter figure is leave one source out
(:func:`calculator.capacity.calibration.loso_residuals`, ``benchmarks/roofline_check.py --loso``): each of
11 publishers predicted by the same fit run on every other publisher's cases, both splits. On 345 points
(247 mixture-of-experts): median |error| 36%, p90 106%, worst 270%, far from the 12% / 30% / 60% target
(dense 28% / 50% / 133%; Blackwell 22% / 57% / 170%; CDNA 3 83% / 177% / 255%; latency-limited 31% / 93% /
120%). The sources disagree by more than any one set of efficiencies can absorb: held out, TensorRT-LLM's
tuned offline runs come out 28% too slow from the others' fit, and dstack's early-2025 vLLM and SGLang runs
of DeepSeek-R1 81% too fast from theirs. Even fitted on every case at once the estimate is off by a median
21% (p90 65%, measured before the MLPerf cases joined), and 17% (p90 57%) after one scale factor per source:
the model's form, not only its level, misses by more than 12% within a source.

Tried on the leave-one-source-out error (2026-12-02), each against the figures without it on the same cases:
  - a fixed cost per layer of a mixture of experts (``moe_layer_overhead_us``: routing, permutation,
    grouped-GEMM launches): median 45%, p90 98%, worst 264% against 45%, 100%, 527%. KEPT in the fit's grid:
    the folds choose 25 to 200 µs; the fit split alone chooses 0, so the shipped defaults did not move.
  - the routed experts' FLOP efficiency rising with the tokens each expert gets per step (half of
    ``moe_efficiency`` at 0.5 to 32 tokens): 47%, 100%, 270% against 45%, 100%, 527%. Dropped.
  - one speed factor per engine family, fitted within each fold on that family's cases: 48%, 98%, 283%
    against 45%, 98%, 264%. Dropped: :attr:`RooflineAssumptions.engine_speed` stays 1.
  - a fixed cost per layer when a replica spans GPUs (collective latency): 47.1%, 107%, 275% against 47.0%,
    107%, 275%. Dropped.
  - efficiencies bounded to what a tuned engine plausibly reaches
    (:data:`calculator.capacity.calibration.PLAUSIBLE_GRID`): 41%, 108%, 267% against 47%, 107%, 275%; with
    NIM's sweep in, 38%, 106%, 312% against 42%, 105%, 312%. A candidate, not shipped: on the fit split it
    moves the defaults (bandwidth 0.75, prefill 0.55, 40 µs a layer) and every figure pinned on them.
  - every source weighted equally in the fit's loss instead of every point: 38%, 112%, 521% against 45%,
    98%, 264%; bounded as above, 36%, 109%, 372%. Not shipped: the median improves, p90 and the worst (one
    GLM-5 stream on 8x B200, 20 ms a token measured) do not.
  - one speed factor for AMD GPUs (``amd_speed``) once MLPerf v5.1 gave CDNA 3 a second source: 36%, 106%,
    270% against 42%, 111%, 359%. KEPT in the fit's grid: the folds choose 0.6 to 0.95 (0.7 in most); the fit
    split has no AMD case, so the shipped default stays 1 and the shipped estimate for an AMD GPU is not
    corrected until the defaults are fitted on cases that include one.
  - sustained clocks per GPU model (MI325X against MI300X): not added. MLPerf v5.1 measures MI325X 24% above
    MI300X on Llama-2-70B offline where the roofline (same compute dies) gives 1%, but no source read gives the
    sustained clocks, and one factor per model fitted on one run would describe that run.

The engine is not an input of the estimate, and that was tested (2026-11-30, ``benchmarks/roofline_check.py
--per-engine``): factors per engine family fitted on that family's fit cases only made the hold-out worse
(one speed factor per family: median 19% -> 24%, worst 243% -> 208%; every efficiency refitted per family:
22%, worst 217%), as they did leave one source out above.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from calculator.capacity.memo import by_identity
from calculator.capacity.memory import KV_DTYPE_BYTES, Attention, bytes_per_weight, default_kv_dtype, kv_split
from calculator.catalog.field_docs import FIELD_DOCS
from calculator.catalog.gpus import GpuSpec
from calculator.catalog.models import ModelSpec

__all__ = [
    "DEFAULT_ASSUMPTIONS",
    "AttentionLayout",
    "DecodePoint",
    "PrefillTerms",
    "ReplicaSpeed",
    "RooflineAssumptions",
    "StepTerms",
    "decode",
    "decode_step",
    "decode_terms",
    "expert_share_read",
    "kv_read_ways",
    "params_only_speed",
    "prefill_point",
    "prefill_rate",
    "prefill_terms",
    "prefill_tokens_per_s",
    "replica_speed",
    "step_point",
    "step_seconds",
    "weights_read_bytes",
]


class RooflineAssumptions(BaseModel):
    """Efficiency factors and what-ifs: every one is an assumption, shown next to the estimate."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=FIELD_DOCS)

    bandwidth_efficiency: float = Field(default=0.8, gt=0, le=1)
    """Share of peak memory bandwidth a decode step reaches."""
    decode_flops_efficiency: float = Field(default=0.55, gt=0, le=1)
    """Share of peak dense FLOP/s a large decode batch reaches."""
    prefill_flops_efficiency: float = Field(default=0.6, gt=0, le=1)
    """Share of peak dense FLOP/s prefill reaches (model FLOPs utilisation)."""
    tp_overhead: float = Field(default=0.15, ge=0, le=1)
    """Extra time per step for tensor-parallel communication, when on more than one GPU."""
    moe_efficiency: float = Field(default=0.35, gt=0, le=1)
    """Share of the dense roofs (bandwidth in decode, FLOP/s in decode and prefill) the routed experts' grouped
    GEMMs reach: many small per-expert matrices, block-scaled FP8 or 4-bit kernels less mature than dense
    ones. Applies to the experts' bytes and FLOPs only; attention, shared experts and dense layers run at
    the dense efficiencies (fitted to published MoE runs, see ``calibration``)."""
    layer_overhead_us: float = Field(default=50.0, ge=0, le=1000)
    """Fixed time per layer per decode step (kernel launches, synchronisation): the floor a step cannot go
    below whatever the batch, which is what a single stream sees."""
    moe_prefill_efficiency: float = Field(default=0.3, gt=0, le=1)
    """Share of the dense prefill FLOP/s the routed experts reach in prefill: each expert's matrices are split
    across the tensor-parallel GPUs, so its GEMMs are narrow (DeepSeek-V3's 2,048-wide experts are 256 wide
    on each of 8 GPUs) and far from the roof a dense layer reaches."""
    sequence_overhead_us: float = Field(default=10.0, ge=0, le=1000)
    """Time per sequence per decode step outside the GPU roofs: scheduling, sampling and detokenising each
    sequence on the host, which grows with the batch (hundreds of sequences cost milliseconds a step)."""
    moe_layer_overhead_us: float = Field(default=0.0, ge=0, le=5000)
    """Fixed time per layer of a mixture-of-experts model per decode step on top of ``layer_overhead_us``:
    routing, token permutation and the grouped-GEMM launches, which a batch of a few sequences pays in full
    (the reason one DeepSeek-R1 stream decodes far slower than its bytes say)."""
    amd_speed: float = Field(default=1.0, gt=0, le=5)
    """AMD GPUs' speed relative to the shared efficiencies, which NVIDIA's cases set (1 = the same share of
    each roof): divides every decode step and multiplies prefill on an AMD card. Kernels for CDNA 3 (hipBLASLt,
    AITER, the ROCm builds of vLLM and SGLang) reach a different share of its peaks than CUDA's of NVIDIA's."""
    engine_speed: float = Field(default=1.0, gt=0, le=5)
    """The engine family's speed relative to the shared efficiencies (1 = as fitted on every engine): divides
    every decode step and multiplies prefill. Fitted per family only as an experiment
    (:func:`calculator.capacity.calibration.fit_engine_assumptions`, ``benchmarks/roofline_check.py
    --per-engine``); the defaults keep 1."""
    speculative_speedup: float = Field(default=1.0, ge=1, le=5)
    """What-if: decode speed-up from speculative decoding (1 = off); depends on acceptance, so an assumption."""

    def notes(self) -> list[str]:
        out = [
            f"decode reaches {self.bandwidth_efficiency:.0%} of peak bandwidth and "
            f"{self.decode_flops_efficiency:.0%} of peak FLOP/s",
            f"prefill reaches {self.prefill_flops_efficiency:.0%} of peak FLOP/s",
            f"tensor-parallel communication adds {self.tp_overhead:.0%} per step",
        ]
        if self.moe_efficiency < 1:
            out.append(f"routed experts decode at {self.moe_efficiency:.0%} of those roofs")
        if self.moe_prefill_efficiency < 1:
            out.append(f"and prefill at {self.moe_prefill_efficiency:.0%} of the prefill roof")
        if self.layer_overhead_us > 0:
            out.append(f"each decode step costs at least {self.layer_overhead_us:g} µs per layer")
        if self.moe_layer_overhead_us > 0:
            out.append(f"a mixture of experts {self.moe_layer_overhead_us:g} µs more per layer")
        if self.sequence_overhead_us > 0:
            out.append(f"and {self.sequence_overhead_us:g} µs per sequence in the batch")
        if self.amd_speed != 1:
            out.append(f"AMD GPUs run {self.amd_speed:g}x that speed")
        if self.engine_speed != 1:
            out.append(f"this engine family runs {self.engine_speed:g}x the shared efficiencies' speed")
        if self.speculative_speedup > 1:
            out.append(f"what-if: speculative decoding speeds decode {self.speculative_speedup:g}x (assumed)")
        return out

    def efficiencies_only(self) -> RooflineAssumptions:
        """The same efficiencies without the what-ifs, for splitting a measurement: what its engine did is
        already in the measured time, so a what-if applies to estimates only."""
        return self.model_copy(update={"speculative_speedup": 1.0})


DEFAULT_ASSUMPTIONS = RooflineAssumptions()
"""The one default set, used wherever no assumptions are passed."""

AttentionLayout = Attention
"""How a replica's GPUs share attention (``calculator.capacity.memory.Attention``, the one definition).
``"tp"``: tensor-parallel attention, every GPU attends for every sequence with its share of the KV heads
(an MLA latent, which has no heads to split, is held and read in full by every GPU). ``"dp"``:
data-parallel attention (SGLang ``--enable-dp-attention``, vLLM ``-dp`` with expert parallelism): each GPU
attends only for its own sequences, so the KV cache and its reads split over the GPUs instead of being
replicated."""


def kv_read_ways(model: ModelSpec, gpus: int, attention: AttentionLayout = "tp") -> int:
    """How many ways one decode step's KV reads split over ``gpus``: as the cache itself splits
    (:func:`calculator.capacity.memory.kv_split`), across KV heads under tensor-parallel attention (not at
    all for an MLA latent), across sequences, so every GPU, under data-parallel attention."""
    ways, _ = kv_split(model, gpus, attention=attention)
    return ways


def expert_share_read(model: ModelSpec, batch: float) -> float:
    """Share of the routed experts a decode batch reads (1 for a dense model)."""
    if model.experts is None or model.experts.total <= 0:
        return 1.0
    k, e = model.experts.active, model.experts.total
    untouched: float = (1.0 - k / e) ** max(batch, 1.0)
    return 1.0 - untouched


def weights_read_bytes(model: ModelSpec, precision: str, batch: float) -> float:
    return _shared_read_bytes(model, precision) + _expert_read_bytes(model, precision, batch)


def _shared_read_bytes(model: ModelSpec, precision: str) -> float:
    """Bytes of the weights every decode step reads whatever the batch: all of a dense model; attention,
    embeddings, shared experts and dense layers of a mixture of experts."""
    return model.shared_params_b * 1e9 * bytes_per_weight(precision)


def _expert_read_bytes(model: ModelSpec, precision: str, batch: float) -> float:
    """Bytes of the routed experts a decode batch touches (0 for a dense model)."""
    routed = model.routed_expert_params_b
    return routed * expert_share_read(model, batch) * 1e9 * bytes_per_weight(precision)


def _attention_cost(gpu: GpuSpec, precision: str) -> float:
    """How many FLOPs at ``precision``'s rate one attention FLOP costs: attention multiplies queries by the
    cached keys and values in BF16 whatever the weights' precision (engines keep FP8 or FP4 for the weight
    GEMMs), so on FP8 weights it runs at the BF16 rate, half the FP8 one."""
    return gpu.dense_tflops(precision) / gpu.dense_tflops("bf16")


def attention_flops_per_token(model: ModelSpec, context: float, *, decode: bool = False) -> float:
    """FLOPs one new token spends attending at a context of ``context`` tokens, over the layers that attend
    (each over what it keeps: a window, a chunk). Per attended token and layer: scores and weighted values,
    2 FLOPs a multiply-add over every query head, 4 x heads x head_dim (4 x hidden for Llama). MLA decodes
    with the up-projections absorbed, so each head works on the latent: 2 x heads x (2 x kv_lora_rank +
    qk_rope_head_dim), about 10x DeepSeek-V3's 4 x hidden."""
    if model.mla is not None and decode:
        per_token_layer = 2.0 * model.attention_heads * (2 * model.mla.kv_lora_rank + model.mla.qk_rope_head_dim)
    else:
        per_token_layer = 4.0 * model.attention_heads * model.head_dim
    return per_token_layer * model.attended_tokens(context)


class DecodePoint(BaseModel):
    model_config = ConfigDict(frozen=True)

    batch: int
    step_ms: float
    tokens_per_s_per_user: float
    tokens_per_s_total: float
    bound: str
    """'memory' or 'compute': which roof the step hits."""


def _tp_factor(gpus: int, a: RooflineAssumptions) -> float:
    return 1 + (a.tp_overhead if gpus > 1 else 0)


@dataclass(frozen=True, slots=True)
class StepTerms:
    """What one decode step reads and computes, before any efficiency: the roofline's inputs, worked out
    once per setup and batch so that many sets of efficiencies can be tried on them (the calibration's fit).
    Bytes are per GPU; FLOPs are per sequence of the batch, over the whole replica."""

    gpu: GpuSpec
    precision: str
    gpus: int
    batch: int
    shared_bytes: float
    """Weights every step reads whatever the batch (all of a dense model)."""
    expert_bytes: float
    """Routed experts the batch touches, at the roof (the expert efficiency applies to these)."""
    kv_bytes: float
    shared_flops: float
    """Weight FLOPs a token spends outside the routed experts."""
    routed_flops: float
    attention_flops: float
    """Attention FLOPs a token spends, in FLOPs at the weights' precision rate (:func:`_attention_cost`)."""
    floor_s: float = 0.0
    """Fixed time a step costs outside the roofs, when given as a time (:func:`decode_step`)."""
    layers: int = 0
    """Layers that each cost :attr:`RooflineAssumptions.layer_overhead_us` a step."""
    moe_layers: int = 0
    """Layers that each cost :attr:`RooflineAssumptions.moe_layer_overhead_us` a step (a mixture of experts')."""
    sequences: int = 0
    """Sequences that each cost :attr:`RooflineAssumptions.sequence_overhead_us` a step (the batch, when the
    step is a model's)."""


@dataclass(frozen=True, slots=True)
class PrefillTerms:
    """What one prompt token of a prefill computes, before any efficiency (as :class:`StepTerms`)."""

    gpu: GpuSpec
    precision: str
    gpus: int
    shared_flops: float
    routed_flops: float
    attention_flops: float


def _vendor_speed(gpu: GpuSpec, a: RooflineAssumptions) -> float:
    return a.amd_speed if gpu.vendor == "amd" else 1.0


def step_seconds(t: StepTerms, a: RooflineAssumptions) -> tuple[float, bool]:
    """One decode step's time from its terms, and whether the memory roof bound it: the slower of the memory
    and the compute roof, plus the fixed cost per layer and per sequence; the routed experts' bytes and FLOPs
    count 1 / ``moe_efficiency`` times."""
    moved = t.shared_bytes + t.expert_bytes / a.moe_efficiency + t.kv_bytes
    memory_s = moved / (t.gpu.memory_bandwidth_tbs * 1e12 * a.bandwidth_efficiency)
    flops = t.shared_flops + t.routed_flops / a.moe_efficiency + t.attention_flops
    compute_s = flops * t.batch / (t.gpu.dense_tflops(t.precision) * 1e12 * t.gpus * a.decode_flops_efficiency)
    roof = max(memory_s, compute_s) * _tp_factor(t.gpus, a)
    fixed_us = t.layers * a.layer_overhead_us + t.moe_layers * a.moe_layer_overhead_us
    floor_s = t.floor_s + (fixed_us + t.sequences * a.sequence_overhead_us) * 1e-6
    speed = a.speculative_speedup * a.engine_speed * _vendor_speed(t.gpu, a)
    return (roof + floor_s) / speed, memory_s >= compute_s


def step_point(t: StepTerms, a: RooflineAssumptions) -> DecodePoint:
    """One decode step from its terms (:func:`step_seconds`), as the point the pages show."""
    step, memory_bound = step_seconds(t, a)
    return DecodePoint(
        batch=t.batch,
        step_ms=step * 1000,
        tokens_per_s_per_user=1 / step,
        tokens_per_s_total=t.batch / step,
        bound="memory" if memory_bound else "compute",
    )


def prefill_point(t: PrefillTerms, a: RooflineAssumptions) -> float:
    """Prompt tokens per second from a prefill's terms: compute bound, the routed experts at
    ``moe_prefill_efficiency`` of the prefill roof."""
    per_token = t.shared_flops + t.routed_flops / a.moe_prefill_efficiency + t.attention_flops
    speed = a.engine_speed * _vendor_speed(t.gpu, a)
    rate = t.gpu.dense_tflops(t.precision) * 1e12 * t.gpus * a.prefill_flops_efficiency * speed / per_token
    return rate / _tp_factor(t.gpus, a)


def decode_step(
    gpu: GpuSpec,
    precision: str,
    batch: int,
    bytes_per_gpu: float,
    flops_per_token: float,
    gpus: int = 1,
    assumptions: RooflineAssumptions | None = None,
    *,
    floor_s: float = 0.0,
) -> DecodePoint:
    """One decode step that reads ``bytes_per_gpu`` on each GPU and computes ``flops_per_token`` for each
    of ``batch`` sequences: the slower of the memory and the compute roof, plus ``floor_s`` (the model's
    fixed cost per step) and the per-sequence cost."""
    terms = StepTerms(
        gpu=gpu,
        precision=precision,
        gpus=gpus,
        batch=batch,
        shared_bytes=bytes_per_gpu,
        expert_bytes=0.0,
        kv_bytes=0.0,
        shared_flops=flops_per_token,
        routed_flops=0.0,
        attention_flops=0.0,
        floor_s=floor_s,
    )
    return step_point(terms, assumptions or DEFAULT_ASSUMPTIONS)


def prefill_rate(
    gpu: GpuSpec,
    precision: str,
    flops_per_token: float,
    gpus: int = 1,
    assumptions: RooflineAssumptions | None = None,
) -> float:
    """Prompt tokens per second when each costs ``flops_per_token``: prefill is compute bound."""
    terms = PrefillTerms(
        gpu=gpu, precision=precision, gpus=gpus, shared_flops=flops_per_token, routed_flops=0.0, attention_flops=0.0
    )
    return prefill_point(terms, assumptions or DEFAULT_ASSUMPTIONS)


def _weight_flops_per_token(model: ModelSpec) -> tuple[float, float]:
    """Weight FLOPs of one token (2 a parameter): outside the routed experts, and in them."""
    if not model.is_moe or model.experts is None:
        return 2 * model.params_active_b * 1e9, 0.0
    routed_active = model.routed_expert_params_b * model.experts.active / model.experts.total
    shared_active = max(model.params_active_b - routed_active, 0.0)
    return 2 * shared_active * 1e9, 2 * routed_active * 1e9


def decode_terms(
    model: ModelSpec,
    gpu: GpuSpec,
    precision: str,
    batch: int,
    context: float,
    gpus: int = 1,
    kv_dtype: str = "bf16",
    *,
    attention: AttentionLayout = "tp",
) -> StepTerms:
    """The terms of one decode step for ``batch`` sequences at a mean context of ``context`` tokens
    (:func:`decode` says what is read)."""
    kv = model.kv_bytes_read_per_step(KV_DTYPE_BYTES[kv_dtype.lower()], context)
    ways = kv_read_ways(model, gpus, attention)
    shared_flops, routed_flops = _weight_flops_per_token(model)
    return StepTerms(
        gpu=gpu,
        precision=precision,
        gpus=gpus,
        batch=batch,
        shared_bytes=_shared_read_bytes(model, precision) / gpus,
        expert_bytes=_expert_read_bytes(model, precision, batch) / gpus,
        kv_bytes=batch * kv / ways,
        shared_flops=shared_flops,
        routed_flops=routed_flops,
        attention_flops=attention_flops_per_token(model, context, decode=True) * _attention_cost(gpu, precision),
        layers=model.layers,
        moe_layers=model.layers if model.is_moe else 0,
        sequences=batch,
    )


def decode(
    model: ModelSpec,
    gpu: GpuSpec,
    precision: str,
    batch: int,
    context: float,
    gpus: int = 1,
    kv_dtype: str = "bf16",
    assumptions: RooflineAssumptions | None = None,
    *,
    attention: AttentionLayout = "tp",
) -> DecodePoint:
    """One decode step for ``batch`` sequences at a mean context of ``context`` tokens.

    Each GPU reads its slice of the weights and its share of the KV cache. Under tensor-parallel attention
    the cache splits only across KV heads, so an MLA latent (or fewer KV heads than GPUs) is read in full
    by every GPU; under data-parallel attention each GPU reads the cache of its own sequences only. Sparse
    attention (DeepSeek-V3.2, GLM-5) reads the indexer keys of the whole context but the cache of only
    the ``top_k`` tokens it picked (:meth:`ModelSpec.kv_bytes_read_per_step`). Not counted: the attention
    weights each GPU holds whole under data-parallel attention (about 11B of DeepSeek-V3's 671B). A step
    also costs a fixed time per layer (launches, synchronisation) and per sequence (host-side scheduling
    and sampling); a separate cost per MoE layer (routing, token permutation) and per tensor-parallel layer
    (all-reduce latency) was tried on 2026-11-30: the fit set both to zero."""
    terms = decode_terms(model, gpu, precision, batch, context, gpus, kv_dtype, attention=attention)
    return step_point(terms, assumptions or DEFAULT_ASSUMPTIONS)


def prefill_terms(model: ModelSpec, gpu: GpuSpec, precision: str, prompt_tokens: float, gpus: int = 1) -> PrefillTerms:
    """The terms of one prompt token's prefill; a causal prompt's tokens see half its length on average."""
    shared_flops, routed_flops = _weight_flops_per_token(model)
    attention = attention_flops_per_token(model, prompt_tokens / 2) * _attention_cost(gpu, precision)
    return PrefillTerms(
        gpu=gpu,
        precision=precision,
        gpus=gpus,
        shared_flops=shared_flops,
        routed_flops=routed_flops,
        attention_flops=attention,
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
    terms = prefill_terms(model, gpu, precision, prompt_tokens, gpus)
    return prefill_point(terms, assumptions or DEFAULT_ASSUMPTIONS)


class ReplicaSpeed(BaseModel):
    """One replica serving requests of one shape: its prefill speed and its decode step at the batch."""

    model_config = ConfigDict(frozen=True)

    prefill_tokens_per_s: float
    decode: DecodePoint

    @property
    def decode_tokens_per_s(self) -> float:
        """Output tokens/s of the whole batch."""
        return self.decode.tokens_per_s_total

    @property
    def prefill_decode_ratio(self) -> float:
        return self.prefill_tokens_per_s / self.decode_tokens_per_s

    def request_seconds(self, uncached_tokens: float, output_tokens: float) -> float:
        """Replica time of one request under continuous batching: its uncached prefill plus its share of
        the decode steps it rides in, ``U / prefill + O x step / B``."""
        return uncached_tokens / self.prefill_tokens_per_s + output_tokens / self.decode_tokens_per_s


@by_identity(maxsize=1024)  # a sweep over prefix share or hit rate asks the same replica's speed at every point
def replica_speed(
    model: ModelSpec,
    gpu: GpuSpec,
    precision: str,
    input_tokens: float,
    output_tokens: float,
    batch: int,
    gpus: int = 1,
    kv_dtype: str | None = None,
    assumptions: RooflineAssumptions | None = None,
    *,
    attention: AttentionLayout = "tp",
) -> ReplicaSpeed:
    """Prefill of the whole prompt, and decode with every sequence at its mean context over the output
    (the prompt plus half the output); ``attention`` as in :func:`decode`."""
    kv_dtype = kv_dtype or default_kv_dtype(precision)
    context = input_tokens + output_tokens / 2
    return ReplicaSpeed(
        prefill_tokens_per_s=prefill_tokens_per_s(model, gpu, precision, input_tokens, gpus, assumptions),
        decode=decode(model, gpu, precision, batch, context, gpus, kv_dtype, assumptions, attention=attention),
    )


def params_only_speed(
    params_total_b: float,
    params_active_b: float,
    gpu: GpuSpec,
    precision: str,
    batch: int,
    gpus: int = 1,
    assumptions: RooflineAssumptions | None = None,
) -> ReplicaSpeed:
    """The same roofline when only the parameter counts are known (a record of a model with no architecture
    spec): no attention or KV-cache term, and a batch reads the active weights of each of its tokens, at
    most all of them (the experts a batch touches, without knowing how many there are)."""
    active = params_active_b * 1e9
    read = min(params_total_b * 1e9, active * batch) * bytes_per_weight(precision)
    return ReplicaSpeed(
        prefill_tokens_per_s=prefill_rate(gpu, precision, 2 * active, gpus, assumptions),
        decode=decode_step(gpu, precision, batch, read / gpus, 2 * active, gpus, assumptions),
    )
