"""Time to first token under load: the one TTFT formula for an estimate.

A lone prompt's TTFT is its uncached tokens at the replica's prefill speed, ``U / P``: a lower bound. Under
continuous batching with chunked prefill (vLLM V1, SGLang) a new prompt waits for more than its own prefill::

    TTFT = U / P                                    its own prefill (compute bound)
         + (ceil(U / C) + 1/2) x step x min(n, 1)   decode interference: each of its chunks of C tokens rides
                                                    a step that also decodes the n other sequences in flight,
                                                    and it arrives half-way through the step in progress on
                                                    average; nothing decoding (n = 0), nothing added
         + rho / (2 (1 - rho)) x U / P              other prompts' prefill ahead of it: an M/D/1 queue on the
                                                    prefill work, rho = arrival rate x U / P
         + Erlang-C wait for a slot                 when all ``slots`` sequences are busy (c = slots servers,
                                                    each holding a request for its whole duration)
         + overhead                                 per request outside the GPU roofs (HTTP, tokenising,
                                                    scheduling, sampling and sending the first token)

Assumptions, each a simplification: the decode step and prefill costs add (a mixed step is the decode batch
plus the chunk, not the slower of the two); waiting prompts share a step's token budget, so only their
compute queues, not the decode steps they ride; arrivals are Poisson (M/D/1, Erlang C), and the queue terms
are means, used for the median. ``overhead_ms`` is the one fitted figure (:data:`TTFT_OVERHEAD_MS`), fitted
on the ``fit`` cases of ``calculator/data/ttft_cases.yaml`` only; ``benchmarks/ttft_check.py`` prints the
error on the ``holdout`` cases, which the fit never saw (:data:`TTFT_ERROR_NOTE`).

The speeds come from the roofline (:mod:`calculator.capacity.roofline`), so its throughput error (median 19%
on its hold-out) carries into the TTFT too.

Measured error (2026-11-30, 14 published median TTFTs from 3 sources): in-sample (vLLM, Llama-3.2-3B on L40S)
within 7%; hold-out median |error| 28%, worst 48%. The hold-out misses are all UNDER: SGLang's Llama-3.3-70B
on 4x H200 measured 30-45 ms more than the formula at every rate and prompt length, a fixed cost per request
that the 4 ms fitted on vLLM does not hold (SGLang also runs a prefill batch on its own rather than mixed with
decode by default, so its steps differ from the form above); Spheron's Llama-3.3-70B FP8 on one H100 at 10 in
flight is within 9% for vLLM, TensorRT-LLM and SGLang. So a TTFT target met by a small margin can still be
missed. The split (fit on the vLLM L40S source) was chosen before any case was computed; the interference
and queue terms have no fitted figure.
"""

from __future__ import annotations

import csv
import math
import statistics
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from calculator.capacity.memory import default_kv_dtype
from calculator.capacity.roofline import RooflineAssumptions, decode, prefill_tokens_per_s
from calculator.catalog.datafile import DATA_DIR, load_model
from calculator.catalog.field_docs import FIELD_DOCS
from calculator.catalog.gpus import GpuCatalog, GpuSpec
from calculator.catalog.models import ModelCatalog
from calculator.catalog.prices import Source
from calculator.errors import InputError

__all__ = [
    "DEFAULT_CHUNK_TOKENS",
    "LARGE_GPU_CHUNK_TOKENS",
    "TTFT_CASES_PATH",
    "TTFT_ERROR_NOTE",
    "TTFT_OVERHEAD_MS",
    "LatencyLimits",
    "LoadedTtft",
    "MeasuredPercentiles",
    "PercentileCase",
    "TtftCase",
    "TtftResult",
    "check_ttft_cases",
    "chunk_tokens_for",
    "erlang_c_wait_s",
    "fit_overhead_ms",
    "load_length_histogram",
    "load_percentile_cases",
    "load_ttft_cases",
    "loaded_ttft",
    "plain_ttft_ms",
]

DEFAULT_CHUNK_TOKENS = 2048
"""Prompt tokens one step prefills (vLLM's ``max_num_batched_tokens``, SGLang's ``chunked_prefill_size``) on a
GPU of under 70 GiB, or an A100: vLLM V1's default for an OpenAI server there (:func:`chunk_tokens_for`)."""
LARGE_GPU_CHUNK_TOKENS = 8192
"""The same default on GPUs of 70 GiB or more other than the A100 (H100, H200, B200, MI300X): vLLM's
``EngineArgs.get_batch_defaults`` (vllm/engine/arg_utils.py, github.com/vllm-project/vllm, read 2026-11-30);
SGLang's ``chunked_prefill_size`` is 8,192 for 35 to 160 GB GPUs too, 2,048 below and 16,384 above (B200)
(python/sglang/srt/server_args.py, github.com/sgl-project/sglang, read 2026-11-30): vLLM's rule is kept."""


def chunk_tokens_for(gpu: GpuSpec) -> int:
    """vLLM's default prefill chunk for an OpenAI server on ``gpu``: 8,192 tokens from 70 GiB up (the A100 kept
    at 2,048, a larger budget slowed it), else 2,048. A prompt longer than a chunk rides one step per chunk."""
    large = gpu.usable_gib >= 70 and not gpu.id.startswith("a100")  # vLLM compares CUDA's total with 70 GiB
    return LARGE_GPU_CHUNK_TOKENS if large else DEFAULT_CHUNK_TOKENS


TTFT_OVERHEAD_MS = 4.0
"""Per-request time outside the GPU roofs (HTTP, tokenising, scheduling, the first token's sampling and
sending): the median of measured minus modelled TTFT over the ``fit`` cases of ``ttft_cases.yaml``
(vLLM, Llama-3.2-3B on L40S), fitted 2026-11-30 by :func:`fit_overhead_ms`."""

TTFT_ERROR_NOTE = (
    "hold-out median |error| 28%, worst 48%, mostly under (8 published points, 2 sources: SGLang Llama-3.3-70B on "
    "4x H200 28-48% under, Llama-3.3-70B FP8 on one H100 within 9%)"
)
"""What ``benchmarks/ttft_check.py`` printed on the hold-out cases, 2026-11-30: shown with every estimate."""


class LoadedTtft(BaseModel):
    """An estimate's TTFT and its parts, each in milliseconds."""

    model_config = ConfigDict(frozen=True)

    prefill_ms: float
    """The prompt's own uncached tokens at the prefill speed: the lower bound."""
    interference_ms: float
    """The decode steps its prefill chunks ride."""
    prefill_queue_ms: float
    """Waiting behind other prompts' prefill."""
    slot_queue_ms: float
    """Waiting for a free sequence slot."""
    overhead_ms: float
    prefill_utilisation: float
    """Share of the replica's time spent prefilling at the arrival rate."""

    @property
    def total_ms(self) -> float:
        return self.prefill_ms + self.interference_ms + self.prefill_queue_ms + self.slot_queue_ms + self.overhead_ms


def plain_ttft_ms(uncached_tokens: float, prefill_tokens_per_s: float) -> float:
    """The prompt's prefill alone, ``U / P``: what a lone request on an idle replica waits at least."""
    return uncached_tokens / prefill_tokens_per_s * 1000


def erlang_c_wait_s(servers: int, offered_load: float, service_s: float) -> float:
    """Mean wait for one of ``servers`` when ``offered_load`` (arrival rate x service time) Erlangs arrive as
    Poisson (Erlang C); infinite at or above ``servers``."""
    if offered_load <= 0:
        return 0.0
    if offered_load >= servers:
        return math.inf
    # the Erlang B recursion is stable for thousands of servers; C follows from B
    b = 1.0
    for k in range(1, servers + 1):
        b = offered_load * b / (k + offered_load * b)
    rho = offered_load / servers
    c = b / (1 - rho + rho * b)
    return c * service_s / (servers - offered_load)


def loaded_ttft(
    uncached_tokens: float,
    prefill_tokens_per_s: float,
    *,
    decode_step_s: float = 0.0,
    decoding: float = 0.0,
    arrival_rate: float = 0.0,
    slots: int | None = None,
    request_duration_s: float = 0.0,
    chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
    overhead_ms: float = TTFT_OVERHEAD_MS,
) -> LoadedTtft:
    """TTFT of a new prompt of ``uncached_tokens`` (the module's formula). ``decode_step_s`` is a decode step
    of the ``decoding`` other sequences in flight; ``arrival_rate`` requests/s reach the replica (Poisson);
    ``slots`` sequences fit at once, each held ``request_duration_s`` (no slot queue when ``slots`` is None).
    Infinite parts mean the replica cannot keep up at that rate."""
    if uncached_tokens < 0 or prefill_tokens_per_s <= 0:
        # the roofline's own figures come here, never a user's: a bad one is a bug, not an input to name
        raise ValueError(
            f"cannot size a TTFT from {uncached_tokens} uncached tokens at {prefill_tokens_per_s} tokens/s"
        )
    prefill_s = uncached_tokens / prefill_tokens_per_s
    chunks = math.ceil(uncached_tokens / chunk_tokens) if uncached_tokens > 0 else 0
    interference_s = (chunks + 0.5) * decode_step_s * min(max(decoding, 0.0), 1.0)
    rho = arrival_rate * prefill_s
    queue_s = math.inf if rho >= 1 else rho / (2 * (1 - rho)) * prefill_s
    slot_s = 0.0
    if slots is not None and arrival_rate > 0:
        slot_s = erlang_c_wait_s(slots, arrival_rate * request_duration_s, request_duration_s)
    return LoadedTtft(
        prefill_ms=prefill_s * 1000,
        interference_ms=interference_s * 1000,
        prefill_queue_ms=queue_s * 1000,
        slot_queue_ms=slot_s * 1000,
        overhead_ms=overhead_ms,
        prefill_utilisation=rho,
    )


# --- validation against published TTFT measurements ----------------------------------------------

TTFT_CASES_PATH = DATA_DIR / "ttft_cases.yaml"
Split = Literal["fit", "holdout"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=FIELD_DOCS)


class TtftCase(_Frozen):
    id: str
    model: str
    gpu: str
    gpus: int = Field(ge=1)
    precision: str
    engine: str
    input_tokens: float = Field(gt=0)
    """Measured mean prompt tokens (none cached: random prompts, prefix caching off or useless)."""
    output_tokens: float = Field(gt=0)
    request_rate: float | None = Field(default=None, gt=0)
    """Poisson arrivals per second at this replica (an open-loop run)."""
    concurrency: int | None = Field(default=None, ge=1)
    """Requests kept in flight (a closed-loop run)."""
    measured_ttft_ms: float = Field(gt=0)
    """Median TTFT the source reports at that load."""
    split: Split = "holdout"
    source: Source


class MeasuredPercentiles(_Frozen):
    """A latency's published percentiles in milliseconds; a source prints some, not always all."""

    p50: float | None = Field(default=None, gt=0)
    p90: float | None = Field(default=None, gt=0)
    p95: float | None = Field(default=None, gt=0)
    p99: float | None = Field(default=None, gt=0)

    def given(self) -> dict[str, float]:
        return {k: v for k, v in (("p50", self.p50), ("p90", self.p90), ("p95", self.p95), ("p99", self.p99)) if v}


class LatencyLimits(_Frozen):
    """The limits a latency-limited run met (MLPerf's Server scenario: p99 TTFT and TPOT), so its published rate
    is the highest its setup sustains under them."""

    percentile: Literal["p50", "p90", "p95", "p99"] = "p99"
    ttft_ms: float | None = Field(default=None, gt=0)
    tpot_ms: float | None = Field(default=None, gt=0)


class PercentileCase(_Frozen):
    """One published open-loop run with its latency percentiles: the check of the simulated percentiles
    (:func:`calculator.capacity.simulation.check_percentile_cases`)."""

    id: str
    model: str
    gpu: str
    gpus: int = Field(ge=1)
    """GPUs of one replica (tensor parallel)."""
    replicas: int = Field(default=1, ge=1)
    """Replicas the run's requests were spread over, evenly."""
    precision: str
    kv_dtype: str | None = None
    engine: str
    input_tokens: float = Field(gt=0)
    """The prompts' mean length in tokens."""
    input_lengths: str | None = Field(default=None, pattern=r"^[a-z0-9_-]+(/[a-z0-9_.-]+)*\.csv$")
    """A histogram of the prompts' lengths (``input_length,count``) under ``calculator/data/``, when the run's
    prompts vary and the dataset's lengths are known: the simulation draws its prompts from it."""
    output_tokens: float = Field(gt=0)
    request_rate: float | None = Field(default=None, gt=0)
    """Poisson arrivals per second over the whole run (all replicas)."""
    burst: int | None = Field(default=None, ge=1, le=100_000)
    """Instead of a rate: this many prompts sent at once (``--request-rate inf``)."""
    concurrency: int | None = Field(default=None, ge=1, le=100_000)
    """Instead of a rate: this many clients, each sending its next request as its last ends
    (``--max-concurrency``), ``requests`` in all."""
    requests: int | None = Field(default=None, ge=1, le=100_000)
    """The run's requests, for a closed loop."""
    max_batch: int = Field(ge=1, le=4096)
    """The engine's most sequences in flight, as configured (or its default)."""
    ttft_ms: MeasuredPercentiles | None = None
    tpot_ms: MeasuredPercentiles | None = None
    """Per request, (end - first token) / (output tokens - 1), as vLLM and MLPerf count it."""
    limits: LatencyLimits | None = None
    """The latency limits the run was tuned to meet, when it is a latency-limited run."""
    mean_e2e_ms: float | None = Field(default=None, gt=0)
    """Mean request latency, for the sequences in flight by Little's law (rate x mean latency)."""
    uncertain: str | None = None
    """What about the case is not known from the source, and what was assumed."""
    split: Split = "holdout"
    source: Source

    @model_validator(mode="after")
    def _one_load(self) -> PercentileCase:
        loads = [x for x in (self.request_rate, self.burst, self.concurrency) if x is not None]
        if len(loads) != 1:
            raise ValueError(
                "give one load: request_rate (Poisson arrivals), burst (prompts sent at once) or concurrency"
            )
        return self


class TtftCaseFile(_Frozen):
    schema_version: Literal[1]
    cases: tuple[TtftCase, ...]
    percentile_cases: tuple[PercentileCase, ...] = ()


def load_percentile_cases(path: Path | None = None) -> tuple[PercentileCase, ...]:
    return load_model(path or TTFT_CASES_PATH, TtftCaseFile).percentile_cases


def load_length_histogram(name: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A bundled histogram of prompt lengths (``input_length,count`` under ``calculator/data/``): the lengths
    and how many prompts have each. A row that is not two positive integers is an error naming its line."""
    path = DATA_DIR / name
    lengths: list[int] = []
    counts: list[int] = []
    with path.open(encoding="utf-8", newline="") as f:
        for line, row in enumerate(csv.reader(f), start=1):
            if line == 1:
                continue
            try:
                length, count = (int(x) for x in row)
            except ValueError:
                raise InputError("input_lengths", f"{name} line {line}: give two whole numbers") from None
            if length < 1 or count < 1:
                raise InputError("input_lengths", f"{name} line {line}: a length and a count of at least 1")
            lengths.append(length)
            counts.append(count)
    if not lengths:
        raise InputError("input_lengths", f"{name} holds no lengths")
    return tuple(lengths), tuple(counts)


class TtftResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    case: TtftCase
    plain_ms: float
    loaded: LoadedTtft
    in_flight: float

    @property
    def before_error(self) -> float:
        """The plain prefill lower bound against the measurement: -0.5 is half the measured TTFT."""
        return self.plain_ms / self.case.measured_ttft_ms - 1

    @property
    def after_error(self) -> float:
        return self.loaded.total_ms / self.case.measured_ttft_ms - 1


def load_ttft_cases(path: Path | None = None) -> tuple[TtftCase, ...]:
    return load_model(path or TTFT_CASES_PATH, TtftCaseFile).cases


def ttft_case(
    case: TtftCase,
    models: ModelCatalog,
    gpus: GpuCatalog,
    assumptions: RooflineAssumptions | None = None,
    overhead_ms: float = TTFT_OVERHEAD_MS,
) -> TtftResult:
    """The case's TTFT from the roofline's speeds at the case's load. An open-loop run's batch in flight is
    found from Little's law, ``n = rate x O x ITL(n)`` with the step stretched by the prefill share; a
    closed-loop run keeps ``concurrency - 1`` others in flight."""
    model, gpu = models.get(case.model), gpus.get(case.gpu)
    u, o = case.input_tokens, case.output_tokens
    context = u + o / 2
    kv = default_kv_dtype(case.precision)
    p = prefill_tokens_per_s(model, gpu, case.precision, u, case.gpus, assumptions)

    def step_s(batch: float) -> float:
        point = decode(model, gpu, case.precision, max(round(batch), 1), context, case.gpus, kv, assumptions)
        return point.step_ms / 1000

    if case.concurrency is not None:
        others = float(case.concurrency - 1)
        step = step_s(case.concurrency)
        rate = case.concurrency / (u / p + o * step)
    else:
        rate = case.request_rate or 0.0
        rho = min(rate * u / p, 0.99)
        others = 0.0
        for _ in range(50):  # the fixed point converges in a few rounds below saturation
            others = rate * o * step_s(others) / (1 - rho)
        step = step_s(others)
    loaded = loaded_ttft(
        u,
        p,
        decode_step_s=step,
        decoding=others,
        arrival_rate=rate,
        chunk_tokens=chunk_tokens_for(gpu),
        overhead_ms=overhead_ms,
    )
    return TtftResult(case=case, plain_ms=plain_ttft_ms(u, p), loaded=loaded, in_flight=others)


def check_ttft_cases(
    models: ModelCatalog,
    gpus: GpuCatalog,
    assumptions: RooflineAssumptions | None = None,
    overhead_ms: float = TTFT_OVERHEAD_MS,
    cases: tuple[TtftCase, ...] | None = None,
) -> list[TtftResult]:
    return [ttft_case(c, models, gpus, assumptions, overhead_ms) for c in cases or load_ttft_cases()]


def fit_overhead_ms(models: ModelCatalog, gpus: GpuCatalog, cases: tuple[TtftCase, ...] | None = None) -> float:
    """The per-request overhead: the median of measured minus modelled TTFT (without overhead) over the
    ``fit`` cases only, rounded to the millisecond and never negative."""
    fit = [c for c in cases or load_ttft_cases() if c.split == "fit"]
    if not fit:
        raise ValueError("no TTFT case has split: fit, so the overhead cannot be fitted (ttft_cases.yaml)")
    results = check_ttft_cases(models, gpus, overhead_ms=0.0, cases=tuple(fit))
    return max(round(statistics.median(r.case.measured_ttft_ms - r.loaded.total_ms for r in results)), 0.0)
