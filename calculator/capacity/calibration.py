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
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from calculator.capacity.memory import default_kv_dtype, fit
from calculator.capacity.roofline import AttentionLayout, RooflineAssumptions, decode, replica_speed
from calculator.catalog.datafile import DATA_DIR, load_model
from calculator.catalog.field_docs import FIELD_DOCS
from calculator.catalog.gpus import GpuCatalog, load_gpu_specs
from calculator.catalog.models import ModelCatalog, load_model_specs
from calculator.catalog.prices import Source

__all__ = [
    "CASES_PATH",
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
    estimate, batch, bound = _estimate(case, models, gpus, assumptions)
    ceiling, _, _ = _estimate(case, models, gpus, PERFECT, utilisation=1.0, reserve_gb=0.0)
    moe = models.get(case.model).is_moe
    return CaseResult(case=case, estimate=estimate, batch=batch, bound=bound, ceiling=ceiling, moe=moe)


def _estimate(
    case: Case,
    models: ModelCatalog,
    gpus: GpuCatalog,
    assumptions: RooflineAssumptions | None,
    utilisation: float | None = None,
    reserve_gb: float | None = None,
) -> tuple[float, int, str]:
    model, gpu = models.get(case.model), gpus.get(case.gpu)
    kv_dtype = case.kv_dtype or default_kv_dtype(case.precision)
    room = fit(
        model,
        gpu,
        case.precision,
        int(case.input_tokens + case.output_tokens),
        case.gpus,
        kv_dtype,
        utilisation=utilisation,
        reserve_gb=reserve_gb,
        engine=_memory_engine(case.engine),
        attention=case.attention,
    )
    batch = max(1, min(round(case.concurrency), room.max_sequences))
    speed = replica_speed(
        model,
        gpu,
        case.precision,
        case.input_tokens,
        case.output_tokens,
        batch,
        case.gpus,
        kv_dtype,
        assumptions,
        attention=case.attention,
    )
    if case.kind == "decode_per_user":
        return speed.decode.tokens_per_s_per_user, batch, speed.decode.bound
    if case.output_lengths == "sharegpt":
        requests = case.requests or round(case.concurrency)
        context = case.input_tokens + case.output_tokens / 2  # as replica_speed's decode

        def step_s(b: int) -> float:
            point = decode(
                model, gpu, case.precision, b, context, case.gpus, kv_dtype, assumptions, attention=case.attention
            )
            return point.step_ms / 1000

        seconds = burst_seconds(
            requests, batch, case.input_tokens, case.output_tokens, speed.prefill_tokens_per_s, step_s
        )
        return requests * case.output_tokens / seconds, batch, speed.decode.bound
    # a throughput benchmark sends unique prompts: every input token is prefilled
    return case.output_tokens / speed.request_seconds(case.input_tokens, case.output_tokens), batch, speed.decode.bound


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
}
"""The values each efficiency may take in the fit: steps of 5 points, within what engines report."""

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
)
"""Where the fit starts: the hand-set efficiencies used before any fit (so the fit does not depend on the
defaults it produces)."""


def _loss(results: Sequence[CaseResult]) -> float:
    # mean absolute log error: over- and under-estimates by the same factor weigh the same
    return statistics.fmean(abs(math.log(r.estimate / r.case.measured)) for r in results)


def fit_assumptions(
    models: ModelCatalog,
    gpus: GpuCatalog,
    cases: Iterable[Case] | None = None,
    rounds: int = 8,
    *,
    start: RooflineAssumptions = FIT_START,
    grid: Mapping[str, tuple[float, ...]] = FIT_GRID,
) -> RooflineAssumptions:
    """The efficiencies that best explain the ``fit`` cases consistent with their stated conditions:
    coordinate descent over ``grid`` (:data:`FIT_GRID`) on the mean absolute log error, starting from
    ``start`` (:data:`FIT_START`). Hold-out cases are never read here."""
    chosen = [c for c in (load_cases() if cases is None else cases) if c.split == "fit"]
    kept = [r.case for r in check_cases(models, gpus, FIT_START, chosen) if r.plausible]
    if not kept:
        return start
    best = start
    best_loss = _loss(check_cases(models, gpus, best, kept))
    for _ in range(rounds):
        moved = False
        for field, values in grid.items():
            for value in values:
                trial = best.model_copy(update={field: value})
                loss = _loss(check_cases(models, gpus, trial, kept))
                if loss < best_loss - 1e-12:
                    best, best_loss, moved = trial, loss, True
        if not moved:
            break
    return best


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
    plausible = [r.case for r in check_cases(models, gpus, FIT_START, fit_cases) if r.plausible]
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
