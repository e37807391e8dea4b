"""The roofline estimate fitted to one set of published measurements and held against others it never saw.

Each case names its model, GPU, engine, precision, lengths and concurrency, and what was measured.
The estimate of a throughput case treats a request's replica time as its prefill plus its share of
the decode steps it rides in: ``t = I / prefill + O x step(B) / B`` (continuous batching,
:meth:`ReplicaSpeed.request_seconds`), with the batch capped by what fits in the KV cache. A run that sent
ShareGPT prompts all at once (``output_lengths: sharegpt``) is timed as the burst it was instead
(:func:`burst_seconds`): its answers vary in length, so it ends with its longest answers decoding at a
small batch, and output tokens / duration is well below the steady state. The efficiencies are the
:class:`RooflineAssumptions` passed in (the one default set otherwise), the same object that splits
measured records in ``calculator.capacity.sizing``.

Every case is ``fit`` or ``holdout`` by its source (never point by point from one run):
:func:`fit_assumptions` sees only the ``fit`` cases, and :func:`estimate_error` states the accuracy from
the ``holdout`` cases alone. That error band travels into money (``calculator.pricing.compare``): an
estimated option's monthly cost is a range, not a point.

The stricter check holds out whole publishers (:func:`source_of`) instead: :func:`loso_residuals` predicts
each publisher's cases with the fit run on every other publisher's, both splits, and labels every signed
error by estimator, dense or mixture of experts, GPU architecture (:func:`gpu_architecture`), run kind
(:func:`run_kind`: offline, fixed concurrency, latency-limited) and engine family, for the error by family.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from calculator.capacity.memory import default_kv_dtype, fit
from calculator.capacity.roofline import (
    DEFAULT_ASSUMPTIONS,
    AttentionLayout,
    PrefillTerms,
    RooflineAssumptions,
    StepTerms,
    decode_terms,
    prefill_point,
    prefill_terms,
    step_seconds,
)
from calculator.catalog.datafile import DATA_DIR, load_model
from calculator.catalog.field_docs import FIELD_DOCS
from calculator.catalog.gpus import GpuCatalog, GpuSpec, load_gpu_specs
from calculator.catalog.models import ModelCatalog, ModelSpec, load_model_specs
from calculator.catalog.prices import Source
from calculator.errors import InputError

__all__ = [
    "CASES_PATH",
    "FAMILY_LABELS",
    "PLAUSIBLE_GRID",
    "RUN_KINDS",
    "Architecture",
    "Estimator",
    "FamilyError",
    "FamilyLabel",
    "LosoResiduals",
    "PreparedCase",
    "Residual",
    "RunKind",
    "family_error",
    "fit_on",
    "gpu_architecture",
    "loso_residuals",
    "plausible_cases",
    "prepare_case",
    "run_kind",
    "source_of",
    "Case",
    "CaseResult",
    "ErrorSummary",
    "ENGINE_FAMILIES",
    "EngineFamily",
    "EngineFit",
    "EstimateError",
    "SameInputs",
    "Split",
    "check_cases",
    "estimate_case",
    "estimate_error",
    "burst_seconds",
    "engine_family",
    "fit_assumptions",
    "fit_engine_assumptions",
    "load_cases",
    "same_inputs",
    "summarise",
]

CASES_PATH = DATA_DIR / "roofline_cases.yaml"
Split = Literal["fit", "holdout"]
RunKind = Literal["offline", "concurrency", "latency"]
RUN_KINDS: tuple[RunKind, ...] = ("offline", "concurrency", "latency")
"""How a published run offered its load: ``offline``, every request queued at once (``trtllm-bench
throughput``, ``benchmark_throughput.py``, a burst of ShareGPT prompts); ``concurrency``, a fixed number in
flight (``--max-concurrency``, a request rate read as the number in flight); ``latency``, the highest load
that met stated latency limits."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=FIELD_DOCS)


class Case(_Frozen):
    id: str
    model: str
    gpu: str
    gpus: int = Field(ge=1)
    precision: str
    kv_dtype: str | None = None
    """The KV cache's dtype in the run; absent, the engine default for the precision."""
    attention: AttentionLayout = "tp"
    """``dp`` when the run used data-parallel attention (SGLang ``--enable-dp-attention --dp-size``)."""
    expert_parallel: int | None = Field(default=None, ge=1)
    """How many GPUs the routed experts were spread over (TensorRT-LLM ``--ep``, vLLM and SGLang
    ``--enable-expert-parallel``); absent, the experts split as the tensor-parallel layers do."""
    engine: str
    kind: Literal["decode_per_user", "throughput"]
    input_tokens: float = Field(gt=0)
    output_tokens: float = Field(gt=0)
    concurrency: float = Field(gt=0)
    output_lengths: Literal["fixed", "sharegpt"] = "fixed"
    """``fixed``: every request asks for ``output_tokens`` (a random-data benchmark, TensorRT-LLM's tables);
    ``sharegpt``: the lengths of ShareGPT's answers, which vary around the mean ``output_tokens``, so a run
    ends with its longest answers decoding at a small batch (:func:`burst_seconds`)."""
    requests: int | None = Field(default=None, ge=1)
    """Prompts the benchmark sent at once when more than ``concurrency`` are in flight (they queue); absent,
    the run is read as a steady state."""
    run: RunKind | None = None
    """How the load was offered (:data:`RUN_KINDS`); absent, read from the case (:func:`run_kind`)."""
    ttft_ms: float | None = Field(default=None, gt=0)
    """The 99th-percentile time to first token a latency-limited run (``run: latency``) met."""
    tpot_ms: float | None = Field(default=None, gt=0)
    """The 99th-percentile time per output token a latency-limited run met; its ``concurrency`` is the most
    the engine was configured to batch, and the estimate the highest load whose mean time per output token
    is within this (:meth:`PreparedCase.estimate`)."""
    measured: float = Field(gt=0)
    """Tokens/s per user (decode_per_user) or output tokens/s of the replica (throughput)."""
    split: Split = "fit"
    """``fit``: the efficiencies are fitted to it; ``holdout``: never seen by the fit, it states the error."""
    source: Source


class CaseFile(_Frozen):
    schema_version: Literal[1]
    cases: tuple[Case, ...]


class CaseResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    case: Case
    estimate: float
    batch: int
    bound: str
    ceiling: float
    """The same estimate with every efficiency at 100%: no real engine can beat it."""
    moe: bool = False

    @property
    def plausible(self) -> bool:
        """False when the measurement beats the physical ceiling: its stated conditions cannot all be right."""
        return self.case.measured <= self.ceiling * 1.05

    @property
    def error(self) -> float:
        """Relative error of the estimate: +0.2 means 20% above the measurement."""
        return self.estimate / self.case.measured - 1


def load_cases(path: Path | None = None) -> tuple[Case, ...]:
    return load_model(path or CASES_PATH, CaseFile).cases


PERFECT = RooflineAssumptions(
    bandwidth_efficiency=1,
    decode_flops_efficiency=1,
    prefill_flops_efficiency=1,
    tp_overhead=0,
    moe_efficiency=1,
    moe_prefill_efficiency=1,
    layer_overhead_us=0,
    sequence_overhead_us=0,
)


def estimate_case(
    case: Case, models: ModelCatalog, gpus: GpuCatalog, assumptions: RooflineAssumptions | None = None
) -> CaseResult:
    estimate, batch, bound = prepare_case(case, models, gpus).estimate(assumptions or DEFAULT_ASSUMPTIONS)
    ceiling, _, _ = prepare_case(case, models, gpus, ceiling=True).estimate(PERFECT)
    moe = models.get(case.model).is_moe
    return CaseResult(case=case, estimate=estimate, batch=batch, bound=bound, ceiling=ceiling, moe=moe)


@dataclass(frozen=True, slots=True)
class PreparedCase:
    """A case with everything its estimate needs that no efficiency changes: the batch that fits in memory,
    the prefill's terms and the decode steps' terms by batch (filled as the estimate asks for them). The fit
    tries hundreds of efficiency sets on the same cases, and this is what each try would otherwise redo."""

    case: Case
    model: ModelSpec
    gpu: GpuSpec
    kv_dtype: str
    batch: int
    prefill: PrefillTerms
    steps: dict[int, StepTerms] = field(default_factory=dict)

    def step_terms(self, batch: int) -> StepTerms:
        terms = self.steps.get(batch)
        if terms is None:
            c = self.case
            context = c.input_tokens + c.output_tokens / 2  # as replica_speed's decode
            terms = decode_terms(
                self.model, self.gpu, c.precision, batch, context, c.gpus, self.kv_dtype, attention=c.attention
            )
            self.steps[batch] = terms
        return terms

    def estimate(self, a: RooflineAssumptions) -> tuple[float, int, str]:
        """The case's estimate with efficiencies ``a``: what it measured (tokens/s per user or output tokens/s
        of the replica), the batch and the bound of its decode step."""
        c, batch = self.case, self.batch
        step, memory_bound = step_seconds(self.step_terms(batch), a)
        bound = "memory" if memory_bound else "compute"
        if c.kind == "decode_per_user":
            return 1 / step, batch, bound
        prefill = prefill_point(self.prefill, a)
        if c.output_lengths == "sharegpt":
            requests = c.requests or round(c.concurrency)

            def step_s(b: int) -> float:
                return step_seconds(self.step_terms(b), a)[0]

            seconds = burst_seconds(requests, batch, c.input_tokens, c.output_tokens, prefill, step_s)
            return requests * c.output_tokens / seconds, batch, bound
        if c.run == "latency" and c.tpot_ms is not None:
            return self._latency_limited(a, prefill, c.tpot_ms / 1000)
        # a throughput benchmark sends unique prompts: every input token is prefilled, ``U / prefill + O x step / B``
        return c.output_tokens / (c.input_tokens / prefill + c.output_tokens * step / batch), batch, bound

    def _latency_limited(self, a: RooflineAssumptions, prefill: float, tpot_s: float) -> tuple[float, int, str]:
        """The output tokens/s of the largest batch whose mean time per output token, a decode step plus the
        prefills of the requests that replace the finished ones (``step + B x I / (O x prefill)``), is within
        ``tpot_s``: the limit is a 99th percentile, read as the mean (an ASSUMPTION that overstates the load
        such a limit allows; the percentile simulation in ``calculator.capacity.simulation`` does it right)."""
        c = self.case

        def tpot(b: int) -> float:
            return step_seconds(self.step_terms(b), a)[0] + b * c.input_tokens / (c.output_tokens * prefill)

        low, high = 1, self.batch
        while low < high:  # the time per output token grows with the batch
            mid = (low + high + 1) // 2
            low, high = (mid, high) if tpot(mid) <= tpot_s else (low, mid - 1)
        _, memory_bound = step_seconds(self.step_terms(low), a)
        return low / tpot(low), low, "memory" if memory_bound else "compute"


def prepare_case(case: Case, models: ModelCatalog, gpus: GpuCatalog, *, ceiling: bool = False) -> PreparedCase:
    """``case`` made ready for many estimates; ``ceiling``: with all of the GPU's memory for the KV cache and no
    reserve, as the 100% ceiling is computed."""
    model, gpu = models.get(case.model), gpus.get(case.gpu)
    kv_dtype = case.kv_dtype or default_kv_dtype(case.precision)
    room = fit(
        model,
        gpu,
        case.precision,
        int(case.input_tokens + case.output_tokens),
        case.gpus,
        kv_dtype,
        utilisation=1.0 if ceiling else None,
        reserve_gb=0.0 if ceiling else None,
        engine=_memory_engine(case.engine),
        attention=case.attention,
    )
    batch = max(1, min(round(case.concurrency), room.max_sequences))
    prefill = prefill_terms(model, gpu, case.precision, case.input_tokens, case.gpus)
    return PreparedCase(case=case, model=model, gpu=gpu, kv_dtype=kv_dtype, batch=batch, prefill=prefill)


SHAREGPT_MAX_TOKENS = 2048
"""vLLM's benchmark drops ShareGPT conversations whose prompt and answer together exceed 2,048 tokens
(``is_valid_sequence(..., max_total_len=2048)`` in vllm-project/vllm ``vllm/benchmarks/datasets.py``, read
2026-11-30), so no answer runs past 2,048 - prompt tokens."""


def burst_seconds(
    requests: int,
    batch: int,
    input_tokens: float,
    mean_output: float,
    prefill_tokens_per_s: float,
    step_s: Callable[[int], float],
) -> float:
    """Time to serve ``requests`` prompts sent at once whose answer lengths vary as ShareGPT's do, at most
    ``batch`` decoding together: every prompt's prefill, then decode at the full batch while requests
    queue, then the tail as the last ``batch`` answers finish one by one and the batch shrinks.

    Answer lengths are taken as exponential with the measured mean (an ASSUMPTION: ShareGPT's answers are
    long-tailed, most short and a few near the cut-off). Being memoryless, the answers still running when the
    queue empties have the same distribution, so the tail is ``batch`` answers decoding from the start:
    ``B(s) = batch x exp(-s / mean)`` sequences remain after ``s`` steps, and the longest ends at about
    ``mean x H(batch)`` steps (the expected maximum), capped by :data:`SHAREGPT_MAX_TOKENS`."""
    batch = max(1, min(batch, requests))
    prefill = requests * input_tokens / prefill_tokens_per_s
    queued = max(requests - batch, 0) * mean_output * step_s(batch) / batch
    cap = max(SHAREGPT_MAX_TOKENS - input_tokens, mean_output)
    tail, done, b = 0.0, 0.0, float(batch)
    while b > 1 and done < cap:
        nxt = max(b / 1.25, 1.0)
        steps = min(mean_output * math.log(b / nxt), cap - done)
        tail += steps * step_s(max(1, round(math.sqrt(b * nxt))))
        done += steps
        b = nxt
    harmonic = sum(1 / i for i in range(1, batch + 1))
    last = min(mean_output * (harmonic - math.log(batch)), max(cap - done, 0.0))
    return prefill + queued + tail + last * step_s(1)


EngineFamily = Literal["vllm", "sglang", "tensorrt-llm"]
ENGINE_FAMILIES: tuple[EngineFamily, ...] = ("vllm", "sglang", "tensorrt-llm")


def engine_family(engine: str) -> EngineFamily | None:
    """The family of an engine as the cases name it, whatever the version and notes ("vLLM v0.11.0",
    "sglang (2025)", "tensorrt-llm (PyTorch backend, v1.0 docs)", "TensorRT-LLM (page)", "trtllm");
    None for an engine of no known family."""
    name = engine.lower()
    if "sglang" in name:
        return "sglang"
    if "tensorrt" in name or "trtllm" in name or "trt-llm" in name:
        return "tensorrt-llm"
    if "vllm" in name:
        return "vllm"
    return None


def _memory_engine(engine: str) -> str:
    """The memory profile closest to a case's engine: SGLang's for SGLang, vLLM's otherwise (TensorRT-LLM has
    none of its own; its KV share, 0.9 to 0.95 of free memory, is close to vLLM's)."""
    return "sglang" if engine_family(engine) == "sglang" else "vllm"


def check_cases(
    models: ModelCatalog,
    gpus: GpuCatalog,
    assumptions: RooflineAssumptions | None = None,
    cases: Iterable[Case] | None = None,
    per_engine: Mapping[EngineFamily, RooflineAssumptions] | None = None,
) -> list[CaseResult]:
    """Every case's estimate with ``assumptions``, or with its engine family's in ``per_engine`` when that
    has an entry for it (the per-engine experiment)."""

    def chosen(case: Case) -> RooflineAssumptions | None:
        family = engine_family(case.engine)
        if per_engine is not None and family is not None and family in per_engine:
            return per_engine[family]
        return assumptions

    return [estimate_case(c, models, gpus, chosen(c)) for c in (load_cases() if cases is None else cases)]


# --- the fit: on the fit split only -----------------------------------------------------------------

FIT_GRID: dict[str, tuple[float, ...]] = {
    "bandwidth_efficiency": tuple(round(0.30 + 0.05 * i, 2) for i in range(15)),
    "decode_flops_efficiency": tuple(round(0.10 + 0.05 * i, 2) for i in range(19)),
    "prefill_flops_efficiency": tuple(round(0.20 + 0.05 * i, 2) for i in range(17)),
    "tp_overhead": tuple(round(0.05 * i, 2) for i in range(11)),
    "moe_efficiency": tuple(round(0.10 + 0.05 * i, 2) for i in range(19)),
    "moe_prefill_efficiency": tuple(round(0.10 + 0.05 * i, 2) for i in range(19)),
    "layer_overhead_us": tuple(float(10 * i) for i in range(31)),
    "sequence_overhead_us": tuple(float(5 * i) for i in range(21)),
    "moe_layer_overhead_us": (0.0, 25.0, 50.0, 100.0, 150.0, 200.0, 300.0, 400.0, 600.0, 800.0),
    "amd_speed": tuple(round(0.5 + 0.05 * i, 2) for i in range(21)),
}
"""The values each efficiency may take in the fit: steps of 5 points, within what engines report."""

PLAUSIBLE_GRID: dict[str, tuple[float, ...]] = {
    **FIT_GRID,
    "bandwidth_efficiency": tuple(round(0.60 + 0.05 * i, 2) for i in range(7)),
    "decode_flops_efficiency": tuple(round(0.30 + 0.05 * i, 2) for i in range(11)),
    "prefill_flops_efficiency": tuple(round(0.30 + 0.05 * i, 2) for i in range(11)),
    "tp_overhead": tuple(round(0.05 * i, 2) for i in range(1, 7)),
}
"""A candidate grid bounded to what a tuned engine plausibly reaches (60-90% of peak bandwidth, 30-80% of peak
FLOP/s, 5-30% for tensor-parallel communication), tried because :data:`FIT_GRID` lets a fold without
TensorRT-LLM's dense cases settle at 30% of peak bandwidth with the experts at 85%. Leave one source out
(2026-12-02, 325 points) it gives median 38%, p90 106%, worst 312% against 42%, 105%, 312%; not the default,
since fitted on the fit split it moves the shipped efficiencies (bandwidth 0.75, prefill 0.55, 40 µs a layer)
and every figure pinned on them (``benchmarks/roofline_check.py --loso --plausible``)."""

ENGINE_SPEED_GRID: tuple[float, ...] = tuple(round(0.5 + 0.05 * i, 2) for i in range(31))
"""The values an engine family's speed factor may take in the per-engine experiment: 0.5x to 2x in 5% steps
(engines on one setup differ up to 3x on GPUStack's pages, but a family's median stays within this)."""

MIN_ENGINE_FIT_CASES = 8
"""Fewest plausible fit cases, from at least :data:`MIN_ENGINE_FIT_SOURCES` documents, an engine family needs
for its own factors; with fewer it keeps the shared efficiencies (a factor fitted to one run's points
describes that run, not the engine)."""
MIN_ENGINE_FIT_SOURCES = 2

FIT_START = RooflineAssumptions(
    bandwidth_efficiency=0.65,
    decode_flops_efficiency=0.35,
    prefill_flops_efficiency=0.5,
    tp_overhead=0.3,
    moe_efficiency=1.0,
    moe_prefill_efficiency=1.0,
    layer_overhead_us=0.0,
    sequence_overhead_us=0.0,
    moe_layer_overhead_us=0.0,
)
"""Where the fit starts: the hand-set efficiencies used before any fit (so the fit does not depend on the
defaults it produces)."""


def _loss(prepared: Sequence[PreparedCase], a: RooflineAssumptions) -> float:
    # mean absolute log error: over- and under-estimates by the same factor weigh the same
    return statistics.fmean(abs(math.log(p.estimate(a)[0] / p.case.measured)) for p in prepared)


def plausible_cases(models: ModelCatalog, gpus: GpuCatalog, cases: Iterable[Case]) -> list[Case]:
    """The cases whose measurement does not beat the 100% ceiling: the ones a fit may learn from."""
    return [r.case for r in check_cases(models, gpus, FIT_START, cases) if r.plausible]


def fit_on(
    models: ModelCatalog,
    gpus: GpuCatalog,
    cases: Iterable[Case],
    rounds: int = 8,
    *,
    start: RooflineAssumptions = FIT_START,
    grid: Mapping[str, tuple[float, ...]] = FIT_GRID,
) -> RooflineAssumptions:
    """The efficiencies that best explain ``cases`` (whatever their split) consistent with their stated
    conditions: coordinate descent over ``grid`` on the mean absolute log error, starting from ``start``."""
    prepared = [prepare_case(c, models, gpus) for c in plausible_cases(models, gpus, cases)]
    if not prepared:
        return start
    best = start
    best_loss = _loss(prepared, best)
    for _ in range(rounds):
        moved = False
        for name, values in grid.items():
            for value in values:
                trial = best.model_copy(update={name: value})
                loss = _loss(prepared, trial)
                if loss < best_loss - 1e-12:
                    best, best_loss, moved = trial, loss, True
        if not moved:
            break
    return best


def fit_assumptions(
    models: ModelCatalog,
    gpus: GpuCatalog,
    cases: Iterable[Case] | None = None,
    rounds: int = 8,
    *,
    start: RooflineAssumptions = FIT_START,
    grid: Mapping[str, tuple[float, ...]] = FIT_GRID,
) -> RooflineAssumptions:
    """The efficiencies that best explain the ``fit`` cases consistent with their stated conditions
    (:func:`fit_on`, from :data:`FIT_START` over :data:`FIT_GRID`). Hold-out cases are never read here."""
    chosen = [c for c in (load_cases() if cases is None else cases) if c.split == "fit"]
    return fit_on(models, gpus, chosen, rounds, start=start, grid=grid)


EngineFit = Literal["speed", "all"]
"""The per-engine experiment's two forms: ``speed``, one speed factor per family on top of the shared
efficiencies (one parameter); ``all``, every efficiency refitted per family from the shared ones (eight)."""


def fit_engine_assumptions(
    models: ModelCatalog,
    gpus: GpuCatalog,
    shared: RooflineAssumptions,
    form: EngineFit = "speed",
    cases: Iterable[Case] | None = None,
    rounds: int = 8,
) -> dict[EngineFamily, RooflineAssumptions]:
    """Per engine family, the assumptions fitted on that family's ``fit`` cases alone, starting from
    ``shared``; a family with fewer than :data:`MIN_ENGINE_FIT_CASES` plausible fit cases or
    :data:`MIN_ENGINE_FIT_SOURCES` source documents gets no entry (it keeps ``shared``). Hold-out cases are
    never read here."""
    fit_cases = [c for c in (load_cases() if cases is None else cases) if c.split == "fit"]
    plausible = plausible_cases(models, gpus, fit_cases)
    grid: Mapping[str, tuple[float, ...]] = (
        {"engine_speed": ENGINE_SPEED_GRID} if form == "speed" else {**FIT_GRID, "engine_speed": ENGINE_SPEED_GRID}
    )
    out: dict[EngineFamily, RooflineAssumptions] = {}
    for family in ENGINE_FAMILIES:
        mine = [c for c in plausible if engine_family(c.engine) == family]
        if len(mine) < MIN_ENGINE_FIT_CASES or len({c.source.url for c in mine}) < MIN_ENGINE_FIT_SOURCES:
            continue
        out[family] = fit_assumptions(models, gpus, mine, rounds, start=shared, grid=grid)
    return out


# --- the error: on the hold-out split only ----------------------------------------------------------


class ErrorSummary(BaseModel):
    """Relative errors (estimate / measured - 1) of one split, over the cases consistent with their stated
    conditions."""

    model_config = ConfigDict(frozen=True)

    split: Split
    points: int
    moe_points: int
    set_aside: int
    """Cases whose measurement beats the 100% ceiling, left out of the figures below (listed by the script)."""
    median_abs: float
    worst_abs: float
    low: float
    """10th percentile of the signed error: the estimate is at most this far below the measurement for 9 in 10."""
    high: float
    """90th percentile of the signed error."""


def summarise(results: Sequence[CaseResult], split: Split) -> ErrorSummary:
    mine = [r for r in results if r.case.split == split]
    kept = [r for r in mine if r.plausible]
    errors = sorted(r.error for r in kept)
    if not errors:
        return ErrorSummary(
            split=split, points=0, moe_points=0, set_aside=len(mine), median_abs=0, worst_abs=0, low=0, high=0
        )
    deciles = statistics.quantiles(errors, n=10, method="inclusive") if len(errors) > 1 else [errors[0]] * 9
    return ErrorSummary(
        split=split,
        points=len(kept),
        moe_points=sum(r.moe for r in kept),
        set_aside=len(mine) - len(kept),
        median_abs=statistics.median(abs(e) for e in errors),
        worst_abs=max(abs(e) for e in errors),
        low=deciles[0],
        high=deciles[-1],
    )


class SameInputs(BaseModel):
    """Cases that give an estimate the same inputs (model, GPU and count, precisions, attention layout, engine
    and version, kind, load, lengths within :data:`SAME_LENGTHS`) but were measured apart: the page changed
    something the inputs do not say (a kernel backend, a scheduler flag)."""

    model_config = ConfigDict(frozen=True)

    ids: tuple[str, ...]
    lowest: float
    highest: float

    @property
    def least_worst_error(self) -> float:
        """The smallest worst |error| one estimate can have on all of them: ``e`` between the two extremes is
        off by ``e / lowest - 1`` on one and ``1 - e / highest`` on the other, equal at ``e = 2 hl / (h + l)``."""
        return (self.highest - self.lowest) / (self.highest + self.lowest)


SAME_LENGTHS = 0.01
"""Mean lengths this close (relative) count as the same workload (the runs of one page differ by a few tokens)."""


def same_inputs(results: Sequence[CaseResult], split: Split) -> list[SameInputs]:
    """Groups of two or more cases of ``split`` with the same inputs, widest spread first."""
    groups: list[list[Case]] = []
    for case in (r.case for r in results if r.case.split == split and r.plausible):
        key = case.model_dump(include={"model", "gpu", "gpus", "precision", "kv_dtype", "attention", "engine"})
        key |= case.model_dump(include={"kind", "concurrency", "output_lengths"})
        for group in groups:
            other = group[0]
            if other.model_dump(include=set(key)) == key and all(
                abs(getattr(case, f) / getattr(other, f) - 1) <= SAME_LENGTHS for f in ("input_tokens", "output_tokens")
            ):
                group.append(case)
                break
        else:
            groups.append([case])
    found = [
        SameInputs(ids=tuple(c.id for c in g), lowest=min(c.measured for c in g), highest=max(c.measured for c in g))
        for g in groups
        if len(g) > 1
    ]
    return sorted(found, key=lambda s: -s.least_worst_error)


class EstimateError(BaseModel):
    """The estimate's hold-out error as factors on what it implies. A capacity estimate ``e`` above the
    measurement (error ``e``) means ``1 + e`` times the GPUs are really needed, so the monthly cost of an
    estimated option lies between ``cost x low_factor`` and ``cost x high_factor``."""

    model_config = ConfigDict(frozen=True)

    low_factor: float
    high_factor: float
    median_abs: float
    worst_abs: float
    points: int
    moe_points: int
    provenance: str

    @classmethod
    def of_family(cls, e: FamilyError, moe_points: int, provenance: str) -> EstimateError:
        """The band a family's signed errors put on an estimate: their central 80%, always including no error."""
        return cls(
            low_factor=1 + min(0.0, e.low), high_factor=1 + max(0.0, e.high), median_abs=e.median_abs,
            worst_abs=e.worst_abs, points=e.points, moe_points=moe_points, provenance=provenance,
        )  # fmt: skip

    def widened(self, scale: float) -> EstimateError:
        """The same band ``scale`` times as wide on a log scale (a what-if: a less trusted estimate); factors
        stay above zero however wide."""
        return self.model_copy(update={"low_factor": self.low_factor**scale, "high_factor": self.high_factor**scale})


@cache
def estimate_error() -> EstimateError:
    """The hold-out error band of the default efficiencies, computed from the bundled cases at first use:
    the central 80% of signed hold-out errors (10th to 90th percentile), always including no error."""
    summary = summarise(check_cases(load_model_specs(), load_gpu_specs()), "holdout")
    return EstimateError(
        low_factor=1 + min(0.0, summary.low),
        high_factor=1 + max(0.0, summary.high),
        median_abs=summary.median_abs,
        worst_abs=summary.worst_abs,
        points=summary.points,
        moe_points=summary.moe_points,
        provenance=(
            f"roofline hold-out: {summary.points} published measurements ({summary.moe_points} mixture-of-experts) "
            f"the efficiencies were not fitted to; median |error| {summary.median_abs:.0%}, worst "
            f"{summary.worst_abs:.0%}; band = 10th-90th percentile ({CASES_PATH.name})"
        ),
    )


# --- leave one source out: every source predicted by a fit that never saw it ------------------------


def source_of(case: Case) -> str:
    """The publisher a case comes from, the unit the leave-one-source-out error holds out: a GitHub
    repository (owner/name) or gist owner, otherwise the web host. Two pages of one publisher (TensorRT-LLM's
    perf overview at two commits, GPUStack's pages) are one source: they share a method and a lab, so
    holding out one while fitting on the other would flatter the estimate."""
    url = case.source.url or case.id
    host, _, path = url.removeprefix("https://").removeprefix("http://").partition("/")
    host = host.removeprefix("www.")
    parts = [p for p in path.split("/") if p]
    if host == "github.com" and len(parts) >= 2:
        return f"{parts[0]}/{parts[1]}"
    if host == "gist.github.com" and parts:
        return f"gist:{parts[0]}"
    return host


Architecture = Literal["hopper", "blackwell", "cdna3", "ampere", "ada", "other"]
_ARCHITECTURES: tuple[tuple[str, Architecture], ...] = (
    ("h100", "hopper"),
    ("h200", "hopper"),
    ("gh200", "hopper"),
    ("b200", "blackwell"),
    ("mi300", "cdna3"),
    ("mi325", "cdna3"),
    ("a100", "ampere"),
    ("a10", "ampere"),
    ("l40", "ada"),
    ("l4", "ada"),
)


def gpu_architecture(gpu_id: str) -> Architecture:
    """The GPU generation a catalogue id belongs to (NVIDIA Hopper H100/H200/GH200, Blackwell B200, AMD CDNA 3
    MI300X/MI325X, Ampere A100/A10, Ada L4/L40S): the family the error is reported by."""
    for prefix, architecture in _ARCHITECTURES:
        if gpu_id.startswith(prefix):
            return architecture
    return "other"


OFFLINE_CONCURRENCY = 1000
"""In flight at once from which a throughput case without a stated :attr:`Case.run` reads as offline: the
file's offline runs queue 1,000 to 30,000 requests at once, its fixed-concurrency runs hold at most 256."""


def run_kind(case: Case) -> RunKind:
    """How the case's run offered its load: as the case states it, else a ShareGPT burst (every prompt sent
    at once) or a throughput run of :data:`OFFLINE_CONCURRENCY` or more in flight is offline, the rest ran
    at a fixed concurrency."""
    if case.run is not None:
        return case.run
    if case.tpot_ms is not None or case.ttft_ms is not None:
        return "latency"
    if case.kind == "throughput" and (case.output_lengths == "sharegpt" or case.concurrency >= OFFLINE_CONCURRENCY):
        return "offline"
    return "concurrency"


Estimator = Literal["roofline", "profiled"]
FamilyLabel = Literal["all", "estimator", "moe", "architecture", "run", "engine", "source"]
FAMILY_LABELS: tuple[FamilyLabel, ...] = ("all", "estimator", "moe", "architecture", "run", "engine", "source")


class Residual(BaseModel):
    """One case's signed error when its source was held out of the fit, with the labels it is reported by."""

    model_config = ConfigDict(frozen=True)

    case_id: str
    source: str
    estimator: Estimator
    measured: float
    estimate: float
    moe: bool
    architecture: Architecture
    run: RunKind
    engine: str
    """The engine family (``vllm``, ``sglang``, ``tensorrt-llm``) or ``other``."""

    @property
    def error(self) -> float:
        """Relative error: +0.2 means the estimate is 20% above the measurement."""
        return self.estimate / self.measured - 1

    def label(self, by: FamilyLabel) -> str:
        if by == "all":
            return "all"
        if by == "moe":
            return "moe" if self.moe else "dense"
        value: str = getattr(self, by)
        return value


class FamilyError(BaseModel):
    """Leave-one-source-out errors of one family of cases."""

    model_config = ConfigDict(frozen=True)

    points: int
    sources: int
    median_abs: float
    p90_abs: float
    worst_abs: float
    median: float
    """Median signed error: below zero, the estimate is mostly too slow for this family."""
    low: float
    """10th percentile of the signed error."""
    high: float
    """90th percentile of the signed error."""


def family_error(residuals: Sequence[Residual]) -> FamilyError:
    errors = sorted(r.error for r in residuals)
    if not errors:
        return FamilyError(points=0, sources=0, median_abs=0, p90_abs=0, worst_abs=0, median=0, low=0, high=0)
    absolute = sorted(abs(e) for e in errors)
    deciles = statistics.quantiles(errors, n=10, method="inclusive") if len(errors) > 1 else [errors[0]] * 9
    p90 = statistics.quantiles(absolute, n=10, method="inclusive")[-1] if len(absolute) > 1 else absolute[0]
    return FamilyError(
        points=len(errors),
        sources=len({r.source for r in residuals}),
        median_abs=statistics.median(absolute),
        p90_abs=p90,
        worst_abs=absolute[-1],
        median=statistics.median(errors),
        low=deciles[0],
        high=deciles[-1],
    )


class LosoResiduals(BaseModel):
    """Every plausible case estimated by efficiencies fitted on all the other sources' cases."""

    model_config = ConfigDict(frozen=True)

    fit_set: str
    """What each fold was fitted on, in words."""
    residuals: tuple[Residual, ...]
    set_aside: tuple[str, ...]
    """Cases whose measurement beats the 100% ceiling: neither fitted on nor scored."""
    folds: dict[str, RooflineAssumptions]
    """The efficiencies each held-out source was predicted with."""

    def by(self, label: FamilyLabel) -> dict[str, FamilyError]:
        """The errors by one family label (``moe`` gives ``dense`` and ``moe``), largest family first."""
        groups: dict[str, list[Residual]] = {}
        for r in self.residuals:
            groups.setdefault(r.label(label), []).append(r)
        return {k: family_error(v) for k, v in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))}

    def summary(self) -> dict[FamilyLabel, dict[str, FamilyError]]:
        """The errors by every family label."""
        return {label: self.by(label) for label in FAMILY_LABELS}

    def error_band(self, label: FamilyLabel = "all", family: str = "all") -> EstimateError:
        """The band these residuals put on an estimate of ``family`` (by ``label``: ``("moe", "moe")``,
        ``("architecture", "cdna3")``), in the shape :func:`estimate_error` gives: the central 80% of the
        family's signed errors, always including no error. A family with no residual is a named error."""
        e = self.by(label).get(family)
        if e is None:
            known = ", ".join(self.by(label))
            raise InputError("family", f"no leave-one-source-out residual for {label} {family!r}; known: {known}")
        moe = sum(r.moe for r in self.residuals if r.label(label) == family)
        return EstimateError.of_family(
            e,
            moe,
            (
                f"roofline leave one source out ({label} {family}): {e.points} published measurements from "
                f"{e.sources} sources, each predicted by a fit on the others; median |error| {e.median_abs:.0%}, "
                f"p90 {e.p90_abs:.0%}, worst {e.worst_abs:.0%}; band = 10th-90th percentile ({CASES_PATH.name})"
            ),
        )


def _grid_name(grid: Mapping[str, tuple[float, ...]]) -> str:
    if grid is FIT_GRID:
        return "FIT_GRID"
    if grid is PLAUSIBLE_GRID:
        return "PLAUSIBLE_GRID"
    return f"a grid of {len(grid)} efficiencies"


def loso_residuals(
    models: ModelCatalog | None = None,
    gpus: GpuCatalog | None = None,
    cases: Iterable[Case] | None = None,
    *,
    rounds: int = 8,
    start: RooflineAssumptions = FIT_START,
    grid: Mapping[str, tuple[float, ...]] = FIT_GRID,
    fit: Callable[[ModelCatalog, GpuCatalog, Sequence[Case]], RooflineAssumptions] | None = None,
) -> LosoResiduals:
    """Leave one source out (:func:`source_of`): for each source, the efficiencies fitted (``fit``, by default
    :func:`fit_on` from ``start`` over ``grid``) on every other source's plausible cases, whatever their
    split, then that source's cases estimated with them. Slow: one fit per source (90 to 120 s for the
    bundled cases on this shared machine), so callers keep the result."""
    models = models or load_model_specs()
    gpus = gpus or load_gpu_specs()
    every = list(load_cases() if cases is None else cases)
    kept = plausible_cases(models, gpus, every)
    kept_ids = {c.id for c in kept}

    def fitted(m: ModelCatalog, g: GpuCatalog, train: Sequence[Case]) -> RooflineAssumptions:
        return fit_on(m, g, train, rounds, start=start, grid=grid)

    how = f"from FIT_START over {_grid_name(grid)}, {rounds} rounds" if fit is None else "by the fit given"
    fit = fit or fitted
    sources = sorted({source_of(c) for c in kept})
    residuals: list[Residual] = []
    folds: dict[str, RooflineAssumptions] = {}
    for source in sources:
        held = [c for c in kept if source_of(c) == source]
        a = fit(models, gpus, [c for c in kept if source_of(c) != source])
        folds[source] = a
        for c in held:
            estimate, _, _ = prepare_case(c, models, gpus).estimate(a)
            residuals.append(
                Residual(
                    case_id=c.id,
                    source=source,
                    estimator="roofline",
                    measured=c.measured,
                    estimate=estimate,
                    moe=models.get(c.model).is_moe,
                    architecture=gpu_architecture(c.gpu),
                    run=run_kind(c),
                    engine=engine_family(c.engine) or "other",
                )
            )
    return LosoResiduals(
        fit_set=(
            f"each of {len(sources)} sources predicted by a fit on the other sources' plausible cases "
            f"({len(kept)} of {len(every)} cases, both splits; {how})"
        ),
        residuals=tuple(residuals),
        set_aside=tuple(c.id for c in every if c.id not in kept_ids),
        folds=folds,
    )
