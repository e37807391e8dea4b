"""Latency percentiles from a discrete-event simulation of continuous batching on the per-step cost model.

The TTFT formula (:mod:`calculator.capacity.ttft`) gives a mean; a p95 or p99 target needs the distribution.
This module runs the engine's scheduler step by step on the roofline's per-step costs:

    arrivals   Poisson at a rate, or any sequence of times (a load profile's hours, a prompt log's timestamps)
    a request  input tokens, of which ``cached_share`` (prefix share x hit rate) are served from the prefix
               cache and skip prefill (at least one token is always computed), and output tokens
    one step   decodes one token for every running sequence, and spends the rest of the step's token budget
               (the engine's prefill chunk, ``chunk_tokens``, less one token per decoding sequence: vLLM's
               ``max_num_batched_tokens``) on waiting prompts, first come first served
    admission  a prompt starts its prefill while fewer than ``max_batch`` sequences are in flight (decoding
               or prefilling) and the KV budget holds its prompt beside the contexts they hold now (as vLLM
               admits: on the blocks free now, not on the output still to come)
    step time  the decode step of that step's batch at its mean context (:func:`calculator.capacity.roofline.
               decode`) plus the chunk's prompt tokens at the prefill speed of each prompt's length
               (:func:`calculator.capacity.roofline.prefill_tokens_per_s`): the two add, as in the TTFT formula
    TTFT       from arrival to the end of the step that prefills the prompt's last token, plus the per-request
               overhead outside the GPU roofs (:data:`calculator.capacity.ttft.TTFT_OVERHEAD_MS`)
    TPOT       (finish - first token) / (output tokens - 1), per request, as vLLM and MLPerf count it

The simulation does not step token by token: between events (an arrival that can be admitted, a sequence
finishing, a prompt's prefill ending) every step is the same batch one token longer, so a run of steps is
costed at once at its middle context. Its cost is a few events per request whatever the lengths, so a run of
a few thousand requests takes milliseconds (``benchmarks/simulation_speed.py`` prints the time beside a bare
numpy loop of the same length).

Assumptions, each a simplification: no preemption (the running sequences' contexts keep growing past the
budget once admitted, where vLLM would preempt and recompute one; a cache that full is a setup to avoid, and
the KV budget's batch cap is what the sizing uses); every request in one run shares the cost model's GPU and
precision; prefix-cache hits are a share of each prompt, not a cache that evicts (the scenario's hit rate
stands for that); the first tenth of the requests warm the engine up and the last twentieth see it drain, and
are left out of the percentiles.

Measured error (2026-12-02, ``benchmarks/ttft_check.py``; nothing here is fitted, the TTFT overhead and the
roofline's efficiencies are the only figures taken from data): on vLLM's Llama-3.2-3B on L40S (the overhead's
own fit source) the p50 and p99 TTFT and TPOT are within 4% median, 21% worst (24 points). Held out, 92 points
from GPUStack's lab and MLPerf v4.1 (NVIDIA and AMD): median |error| 48%, worst 85%. Where nothing about the
run is assumed (GPUStack's vLLM baselines: Qwen3-32B and gpt-oss-20b on one H100, GLM-4.6 on 8x H200, prompts
sent at once; 48 points) 16% median, 15% at p90-p99, worst 74%: the bursts of 1,000 128-token prompts come out
28-74% early (a cost per request on the host that the roofline has no term for). MLPerf's Llama-2-70B Server
runs (TensorRT-LLM on 8x H100 and 8x H200, vLLM on one MI300X; prompts drawn from the dataset's own lengths)
come out 42-85% low; read as latency-limited runs, the highest rate meeting their p99 limits is 20%, 35% and
129% (MI300X) high. There the level is off, not the shape: the roofline's steps are 1.2-2.6x shorter than
those engines', and with every step stretched by one factor per run until its p50 TPOT is the published one,
the other 72 hold-out points are within 14% median (in-sample 8%); the tail's shape (each p90-p99 over its
run's p50) is within 7% median over the hold-out.

Sampling error: a run of :data:`DEFAULT_REQUESTS` requests measures about 1,700 of them, so its p99 rests on
about 17 requests. Over 10 seeds (``benchmarks/simulation_speed.py``, 2026-12-02) one standard deviation of a
run's p99 TTFT was 4-5% of it at 2,000 requests and 7-12% at 1,000 (the sizing's runs), its p99 TPOT 3-5% and
3-9%, the medians 1-3% and 1-8%. A seed is fixed, so every run of the same inputs gives the same answer.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_right
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict

from calculator.capacity.memory import ENGINES, default_kv_dtype, fit
from calculator.capacity.roofline import AttentionLayout, RooflineAssumptions, decode, prefill_tokens_per_s
from calculator.capacity.ttft import (
    TTFT_OVERHEAD_MS,
    PercentileCase,
    TtftCase,
    chunk_tokens_for,
    load_length_histogram,
    load_percentile_cases,
    load_ttft_cases,
)
from calculator.catalog.gpus import GpuCatalog, GpuSpec
from calculator.catalog.models import ModelCatalog, ModelSpec
from calculator.errors import InputError

__all__ = [
    "DEFAULT_REQUESTS",
    "DEFAULT_SEED",
    "MAX_BATCH",
    "MAX_REQUESTS",
    "CHECK_REQUESTS",
    "PERCENTILES",
    "SIMULATION_ERROR_NOTE",
    "Percentile",
    "LimitedRate",
    "MedianTtft",
    "PercentilePoint",
    "Percentiles",
    "RateUnderTarget",
    "SimulationResult",
    "SpeedMatched",
    "StepCosts",
    "check_percentile",
    "check_limited_rates",
    "check_median_ttfts",
    "check_percentile_cases",
    "check_speed_matched",
    "max_rate_under_target",
    "poisson_arrivals",
    "profile_arrivals",
    "saturation_rate",
    "simulate",
    "simulate_case",
    "simulate_closed",
    "simulate_poisson",
    "step_costs",
]

Percentile = Literal["p50", "p90", "p95", "p99"]
PERCENTILES: tuple[Percentile, ...] = ("p50", "p90", "p95", "p99")
DEFAULT_REQUESTS = 2000
"""Requests simulated per run unless asked otherwise: enough for a p99 on about 17 requests, fast enough for a
search over rates and setups (a few to tens of milliseconds a run)."""
MAX_REQUESTS = 100_000
"""The most requests one run takes: a longer log is sampled down by its caller, not simulated whole."""
MAX_BATCH = 16_384
"""The largest batch a cost table holds: sixteen times the largest engine default (vLLM's 1,024)."""
DEFAULT_SEED = 20261202
WARMUP_SHARE = 0.1
"""Share of the first requests left out of the percentiles: they arrive at an empty engine."""
DRAIN_SHARE = 0.05
"""Share of the last requests left out: after the last arrival the batch only shrinks."""
_Arr = npt.NDArray[np.float64]


def check_percentile(value: str, field: str = "latency_percentile") -> Percentile:
    """``value`` as a percentile this module reports, or an :class:`InputError` naming ``field``."""
    for p in PERCENTILES:
        if value == p:
            return p
    raise InputError(field, f"unknown percentile {value!r}; choose one of {', '.join(PERCENTILES)}")


# --- the per-step cost model ------------------------------------------------------------------------


@dataclass(frozen=True)
class StepCosts:
    """What one engine step costs: a decode step's seconds for a batch of 0 to ``max_batch`` sequences at a
    mean context (tabulated on ``context_grid``, linear between), and a prompt token's prefill seconds by the
    prompt's length (tabulated on ``prompt_grid``). ``overhead_s`` is added to every request's TTFT.

    A frozen dataclass rather than a pydantic model: thousands of floats made by :func:`step_costs` from the
    roofline (or :meth:`constant`, which checks its figures), never read from a user's file."""

    context_grid: tuple[float, ...]
    decode_s: tuple[tuple[float, ...], ...]
    """``decode_s[b][j]``: a decode step of ``b`` sequences at mean context ``context_grid[j]``; ``b = 0`` is 0."""
    prompt_grid: tuple[float, ...]
    prefill_s_per_token: tuple[float, ...]
    chunk_tokens: int
    overhead_s: float = TTFT_OVERHEAD_MS / 1000

    @property
    def max_batch(self) -> int:
        return len(self.decode_s) - 1

    @classmethod
    def constant(
        cls,
        decode_step_s: float,
        prefill_tokens_per_s: float,
        *,
        max_batch: int,
        chunk_tokens: int = 2048,
        overhead_s: float = 0.0,
    ) -> StepCosts:
        """A step that costs the same whatever the batch and context (queueing-theory checks, what-ifs)."""
        for name, value in (("decode_step_s", decode_step_s), ("prefill_tokens_per_s", prefill_tokens_per_s)):
            if not (value > 0 and math.isfinite(value)):
                raise InputError(name, f"{value} cannot cost a step; give a positive, finite number")
        if not 1 <= max_batch <= MAX_REQUESTS:
            raise InputError("max_batch", f"a batch of {max_batch} cannot decode; give 1 to {MAX_REQUESTS:,}")
        row = (decode_step_s, decode_step_s)
        table = ((0.0, 0.0), *(row for _ in range(max_batch)))
        spt = 1 / prefill_tokens_per_s
        return cls((0.0, 1e12), table, (0.0, 1e12), (spt, spt), chunk_tokens, overhead_s)

    def scaled(self, factor: float, prefill: float | None = None) -> StepCosts:
        """Every decode step ``factor`` times as long, and every prompt token's prefill ``prefill`` times (by
        default ``factor`` too); the per-request overhead as it is."""
        rows = tuple(tuple(v * factor for v in row) for row in self.decode_s)
        spt = tuple(v * (factor if prefill is None else prefill) for v in self.prefill_s_per_token)
        return StepCosts(self.context_grid, rows, self.prompt_grid, spt, self.chunk_tokens, self.overhead_s)

    def decode_step_s(self, batch: int, context: float) -> float:
        return _interp(self.context_grid, self.decode_s[batch], context)

    def prefill_seconds_per_token(self, prompt_tokens: _Arr) -> _Arr:
        grid = np.asarray(self.prompt_grid)
        return np.asarray(np.interp(prompt_tokens, grid, np.asarray(self.prefill_s_per_token)), dtype=np.float64)


def _interp(grid: tuple[float, ...], values: tuple[float, ...], x: float) -> float:
    """Linear interpolation on a sorted grid, flat beyond its ends (pure Python: called once an event)."""
    j = bisect_right(grid, x)
    if j <= 0:
        return values[0]
    if j >= len(grid):
        return values[-1]
    x0, x1 = grid[j - 1], grid[j]
    w = (x - x0) / (x1 - x0) if x1 > x0 else 0.0
    return values[j - 1] + w * (values[j] - values[j - 1])


def _grid(top: float, points: int, low: float = 1.0) -> list[float]:
    """About ``points`` whole numbers from ``low`` to ``top``, evenly spaced on a log scale."""
    return sorted({round(low), *np.geomspace(low, max(top, low + 1.0), points).round().tolist()})


def step_costs(
    model: ModelSpec,
    gpu: GpuSpec,
    precision: str,
    gpus: int = 1,
    *,
    max_batch: int,
    max_context: float,
    min_context: float = 1.0,
    kv_dtype: str | None = None,
    assumptions: RooflineAssumptions | None = None,
    attention: AttentionLayout = "tp",
    chunk_tokens: int | None = None,
    overhead_ms: float = TTFT_OVERHEAD_MS,
) -> StepCosts:
    """The roofline's step costs for one replica: decode steps on a grid of batches and mean contexts (every
    batch up to 8, then 6 a doubling; contexts 2 a doubling from ``min_context`` to ``max_context``, at least
    4), interpolated for the rest, and prefill seconds per token on a grid of prompt lengths. Beyond the grid
    a step costs what its edge does, so the contexts a run reaches belong inside it: from the shortest prompt
    to the longest prompt plus its output. ``chunk_tokens`` defaults to the engine's
    (:func:`calculator.capacity.ttft.chunk_tokens_for`). Against the roofline called at each batch and
    context the table is within 5% (a step's kink from the memory to the compute roof), mostly exact."""
    if not 1 <= max_batch <= MAX_BATCH:
        raise InputError("max_batch", f"a batch of {max_batch} cannot be tabulated; give 1 to {MAX_BATCH:,}")
    if not (max_context >= 1 and math.isfinite(max_context)):
        raise InputError("max_context", f"{max_context} tokens of context; give at least 1")
    kv = kv_dtype or default_kv_dtype(precision)
    low = min(max(min_context, 1.0), max_context)
    contexts = _grid(max_context, max(int(math.log2(max_context / low) * 2), 4), low)
    doublings = math.log2(max(max_batch, 2))
    batches = sorted({*range(1, min(max_batch, 8) + 1), *_grid(max_batch, int(doublings * 6) + 2)})
    batches = [b for b in batches if b <= max_batch]
    table = np.array(
        [
            [decode(model, gpu, precision, int(b), c, gpus, kv, assumptions, attention=attention).step_ms / 1000
             for c in contexts]
            for b in batches
        ]
    )  # fmt: skip
    every = np.arange(1, max_batch + 1, dtype=np.float64)
    dense = np.stack([np.interp(every, np.asarray(batches, dtype=np.float64), table[:, j]) for j in
                      range(len(contexts))], axis=1)  # fmt: skip
    rows = ((0.0,) * len(contexts), *(tuple(r) for r in dense.tolist()))
    prompts = _grid(max_context, max(int(math.log2(max(max_context, 2))), 4))
    spt = tuple(1 / prefill_tokens_per_s(model, gpu, precision, p, gpus, assumptions) for p in prompts)
    return StepCosts(
        context_grid=tuple(contexts),
        decode_s=rows,
        prompt_grid=tuple(prompts),
        prefill_s_per_token=spt,
        chunk_tokens=chunk_tokens or chunk_tokens_for(gpu),
        overhead_s=overhead_ms / 1000,
    )


# --- arrivals -------------------------------------------------------------------------------------------


def poisson_arrivals(rate: float, n: int = DEFAULT_REQUESTS, seed: int = DEFAULT_SEED) -> _Arr:
    """``n`` Poisson arrival times at ``rate`` requests/s. The same seed draws the same gaps whatever the rate
    (scaled by it), so runs at two rates differ only by the rate: a search over rates sees no sampling noise."""
    if not rate > 0 or not math.isfinite(rate):
        raise InputError("rate", f"an arrival rate of {rate} requests/s cannot be simulated; give a positive rate")
    _check_count(n)
    gaps = np.random.default_rng(seed).standard_exponential(n)
    return np.cumsum(gaps) / rate


def profile_arrivals(hourly_rates: Sequence[float], n: int = DEFAULT_REQUESTS, seed: int = DEFAULT_SEED) -> _Arr:
    """Arrival times of a load profile: ``hourly_rates`` requests/s, one an hour, a Poisson process at each
    hour's rate, the hours laid end to end and compressed so that ``n`` requests span them all in proportion
    to their traffic: each hour keeps its own rate (what latency depends on) and its share of requests (what a
    percentile over the day weighs). An hour starts an hour after the last one's last arrival, so each drains
    first: the percentiles of a run over these arrivals are the day's, but its throughput and mean batch
    average over those gaps too (read them from a Poisson run at one hour's rate)."""
    rates = np.asarray(hourly_rates, dtype=np.float64)
    if rates.size == 0 or not np.all(np.isfinite(rates)) or np.any(rates < 0) or rates.sum() <= 0:
        raise InputError("hourly_rates", "a load profile needs hourly rates of at least 0, not all 0")
    _check_count(n)
    share = rates / rates.sum()
    counts = np.floor(share * n).astype(int)
    counts[np.argmax(share)] += n - int(counts.sum())
    rng = np.random.default_rng(seed)
    parts, start = [], 0.0
    for rate, count in zip(rates.tolist(), counts.tolist(), strict=True):
        if count == 0:
            continue
        times = start + np.cumsum(rng.standard_exponential(count)) / rate
        parts.append(times)
        # the next hour starts once this one's requests are served: a gap long enough to drain it
        start = float(times[-1]) + 3600.0
    return np.concatenate(parts)


def _check_count(n: int) -> None:
    if not 1 <= n <= MAX_REQUESTS:
        raise InputError("requests", f"{n} requests cannot be simulated; give 1 to {MAX_REQUESTS:,}")


# --- results ----------------------------------------------------------------------------------------------


class Percentiles(BaseModel):
    """One latency's distribution over the measured requests, in milliseconds."""

    model_config = ConfigDict(frozen=True)

    p50: float
    p90: float
    p95: float
    p99: float
    mean: float

    def at(self, percentile: str) -> float:
        value: float = getattr(self, check_percentile(percentile))
        return value

    @classmethod
    def of(cls, values_ms: _Arr) -> Percentiles:
        if values_ms.size == 0:
            return cls(p50=0.0, p90=0.0, p95=0.0, p99=0.0, mean=0.0)
        p = np.percentile(values_ms, [50, 90, 95, 99])
        return cls(p50=p[0], p90=p[1], p95=p[2], p99=p[3], mean=float(values_ms.mean()))


class SimulationResult(BaseModel):
    """Latency percentiles and throughput of one simulated run."""

    model_config = ConfigDict(frozen=True)

    ttft_ms: Percentiles
    tpot_ms: Percentiles
    """Per request, (finish - first token) / (output tokens - 1); requests of one output token left out."""
    e2e_ms: Percentiles
    output_tokens_per_s: float
    """Output tokens per second (each request's first included) between the warm-up and the last arrival; over
    the whole run when every request arrives at once or in a closed loop."""
    mean_batch: float
    """Sequences decoding, averaged over time between the warm-up and the last arrival."""
    max_batch_seen: int
    requests: int
    """Requests the percentiles are over (the run's, less warm-up and drain)."""
    offered_rate: float
    """Requests/s arriving over the run."""
    backlog_share: float
    """Share of the run's requests still waiting for admission at the last arrival: near 0 when the replica
    keeps up, growing with the run's length when it cannot (its TTFT then depends on how long it ran)."""
    events: int
    """Turns of the event loop: a few per request whatever the lengths (what bounds the run's time)."""

    @property
    def keeps_up(self) -> bool:
        return self.backlog_share < 0.05


# --- the engine -------------------------------------------------------------------------------------------


def _as_array(value: float | Sequence[float] | _Arr, n: int, field: str, low: float) -> _Arr:
    arr = np.broadcast_to(np.asarray(value, dtype=np.float64), (n,)) if np.ndim(value) == 0 else np.asarray(value)
    if arr.shape != (n,):
        raise InputError(field, f"gives {arr.size} values for {n} arrivals; give one value or one per arrival")
    if not np.all(np.isfinite(arr)) or np.any(arr < low):
        raise InputError(field, f"must be finite and at least {low:g}")
    return arr.astype(np.float64)


def simulate(
    costs: StepCosts,
    arrivals: Sequence[float] | _Arr,
    input_tokens: float | Sequence[float] | _Arr,
    output_tokens: float | Sequence[float] | _Arr,
    *,
    cached_share: float = 0.0,
    max_batch: int | None = None,
    kv_budget_tokens: float | None = None,
    trim: bool = True,
) -> SimulationResult:
    """Run the engine over requests arriving at ``arrivals`` (seconds, any order) with their lengths (one value
    for all, or one per arrival). ``max_batch`` defaults to the cost table's; ``kv_budget_tokens`` (the tokens
    of context the KV cache holds) is unbounded when None. A request whose context alone exceeds the budget
    still runs when nothing else does, as an engine serves a prompt within its model length. ``trim`` leaves
    the warm-up and drain requests out of the percentiles (a steady load); a benchmark that sends a fixed set
    of prompts and counts them all is compared with ``trim=False``."""
    given = np.asarray(arrivals, dtype=np.float64).reshape(-1)
    n = given.size
    _check_count(n)
    if not np.all(np.isfinite(given)) or given.min() < 0:
        raise InputError("arrivals", "arrival times must be finite seconds of at least 0")
    if not 0 <= cached_share <= 1 or not math.isfinite(cached_share):
        raise InputError("cached_share", f"{cached_share} is not a share; give 0 to 1 (prefix share x hit rate)")
    batch_cap = costs.max_batch if max_batch is None else max_batch
    if not 1 <= batch_cap <= costs.max_batch:
        raise InputError("max_batch", f"{batch_cap} is outside 1..{costs.max_batch}, the batches the costs cover")
    if kv_budget_tokens is not None and not kv_budget_tokens > 0:
        raise InputError("kv_budget_tokens", f"{kv_budget_tokens} tokens of KV cache hold nothing; give more than 0")
    order = np.argsort(given, kind="stable")  # in arrival order, each request keeping its own lengths
    times = given[order]
    prompt = _as_array(input_tokens, n, "input_tokens", 0.0)[order]
    output = np.maximum(np.round(_as_array(output_tokens, n, "output_tokens", 1.0)), 1.0)[order]
    uncached = np.maximum(np.ceil(prompt * (1 - cached_share)), 1.0)
    spt = costs.prefill_seconds_per_token(prompt)
    out = _run(costs, times, prompt, uncached, output, spt, batch_cap, kv_budget_tokens)
    return _result(costs, output, *out, trim=trim)


def simulate_poisson(
    costs: StepCosts,
    rate: float,
    input_tokens: float | _Arr,
    output_tokens: float,
    *,
    cached_share: float = 0.0,
    max_batch: int | None = None,
    kv_budget_tokens: float | None = None,
    requests: int = DEFAULT_REQUESTS,
    seed: int = DEFAULT_SEED,
) -> SimulationResult:
    """:func:`simulate` under Poisson arrivals at ``rate`` requests/s (``input_tokens`` one length, or one per
    request)."""
    return simulate(
        costs,
        poisson_arrivals(rate, requests, seed),
        input_tokens,
        output_tokens,
        cached_share=cached_share,
        max_batch=max_batch,
        kv_budget_tokens=kv_budget_tokens,
    )


def simulate_closed(
    costs: StepCosts,
    concurrency: int,
    input_tokens: float | _Arr,
    output_tokens: float,
    *,
    cached_share: float = 0.0,
    max_batch: int | None = None,
    kv_budget_tokens: float | None = None,
    requests: int = DEFAULT_REQUESTS,
) -> SimulationResult:
    """``concurrency`` clients, each sending its next request the moment its last one ends (a closed loop, as
    ``--max-concurrency`` or a fixed-concurrency benchmark runs), ``requests`` in all. The first and last
    ``concurrency`` requests (a start at once, an end with fewer clients) are left out of the percentiles;
    throughput and mean batch are over the whole run."""
    if not 1 <= concurrency <= MAX_REQUESTS:
        raise InputError("concurrency", f"{concurrency} clients cannot be simulated; give 1 to {MAX_REQUESTS:,}")
    _check_count(requests)
    batch_cap = costs.max_batch if max_batch is None else max_batch
    if not 1 <= batch_cap <= costs.max_batch:
        raise InputError("max_batch", f"{batch_cap} is outside 1..{costs.max_batch}, the batches the costs cover")
    if not 0 <= cached_share <= 1 or not math.isfinite(cached_share):
        raise InputError("cached_share", f"{cached_share} is not a share; give 0 to 1 (prefix share x hit rate)")
    if kv_budget_tokens is not None and not kv_budget_tokens > 0:
        raise InputError("kv_budget_tokens", f"{kv_budget_tokens} tokens of KV cache hold nothing; give more than 0")
    n = requests
    prompt = _as_array(input_tokens, n, "input_tokens", 0.0)
    output = np.maximum(np.round(_as_array(output_tokens, n, "output_tokens", 1.0)), 1.0)
    uncached = np.maximum(np.ceil(prompt * (1 - cached_share)), 1.0)
    spt = costs.prefill_seconds_per_token(prompt)
    # the clients start spread over one request's time, as clients of a real run drift apart: started at once
    # with equal lengths they would stay in step, every prompt arriving with every other
    one = float(uncached[0] * spt[0] + output[0] * costs.decode_step_s(min(concurrency, batch_cap), prompt[0]))
    starts = np.zeros(n)
    starts[: min(concurrency, n)] = np.arange(min(concurrency, n)) * one / concurrency
    out = _run(costs, starts, prompt, uncached, output, spt, batch_cap, kv_budget_tokens, closed=concurrency)
    return _result(costs, output, *out, trim=True, clients=min(concurrency, n // 4), closed=True)


_RunOut = tuple[_Arr, _Arr, _Arr, _Arr, float, float, int, int]


def _run(
    costs: StepCosts,
    times: _Arr,
    prompt: _Arr,
    uncached: _Arr,
    output: _Arr,
    spt: _Arr,
    batch_cap: int,
    kv_budget: float | None,
    closed: int | None = None,
) -> _RunOut:
    """The event loop. Returns each request's arrival, admission, first-token and finish times, the tokens
    decoded and the batch-seconds of the steps that start inside the measuring window, the largest batch and
    the loop's turns. Each turn ends at an event (an arrival, a prompt's last chunk, a sequence's end) or runs
    one prompt's chunks up to one, so the turns are at most about five per request. ``closed`` clients each
    send their next request when the last one ends (only their first ``closed`` times are used)."""
    n = times.size
    # a closed loop: the clients' first requests as given (staggered), the rest sent as requests end
    arrive = times.tolist() if closed is None else times[: min(closed, n)].tolist() + [math.inf] * max(n - closed, 0)
    pending = min(closed or 0, n)  # closed loop: the next request a finishing client sends
    todo = uncached.tolist()  # prompt tokens still to prefill, per request
    outs = output.tolist()
    need = (prompt + 1).tolist()  # KV tokens a request holds once prefilled: its prompt and first token
    sec = spt.tolist()
    ctx0 = (prompt + 1).tolist()  # context at its first decode step: the prompt and the first token
    start = [0.0] * n
    admitted = [math.nan] * n
    first = [math.nan] * n
    finish = [math.nan] * n
    table = costs.decode_s
    grid = costs.context_grid
    chunk = costs.chunk_tokens
    budget_kv = math.inf if kv_budget is None else kv_budget
    window_start = arrive[min(int(n * WARMUP_SHARE), n - 1)] if closed is None else 0.0
    window_end = arrive[-1] if arrive[-1] > window_start else math.inf  # all at once: measure the whole run
    tokens_in_window = 0.0
    batch_seconds = 0.0

    now = 0.0
    steps = 0  # decode steps so far: a sequence that began decoding at step s has context ctx0 + steps - s
    nxt = 0  # next arrival not yet queued
    waiting: deque[int] = deque()  # arrived, not admitted
    filling: deque[int] = deque()  # admitted, prefill not finished
    running: list[tuple[int, int]] = []  # heap of (the step it finishes at, request)
    ctx_base = 0.0  # sum over running of (ctx0 - start step): their context sum is ctx_base + B x steps
    filling_kv = 0.0  # KV tokens of the prompts being prefilled
    done = 0
    max_seen = 0
    events = 0

    while done < n:
        events += 1
        while nxt < n and arrive[nxt] <= now:
            waiting.append(nxt)
            nxt += 1
        # admit while slots and KV allow (alone, a request is admitted whatever its size)
        if waiting and len(running) + len(filling) < batch_cap:
            held = ctx_base + len(running) * steps + filling_kv if budget_kv < math.inf else 0.0
            while waiting and len(running) + len(filling) < batch_cap:
                i = waiting[0]
                if held + need[i] > budget_kv and (running or filling):
                    break
                waiting.popleft()
                filling.append(i)
                admitted[i] = now
                held += need[i]
                filling_kv += need[i]
        b = len(running)
        if b == 0 and not filling:
            now = max(now, arrive[nxt])  # idle until the next arrival (one is due: done < n)
            continue
        ready: list[int] = []
        if filling:
            room = max(chunk - b, 1)
            head = filling[0]
            if todo[head] > room:
                # the head takes the whole budget: identical steps until its last chunk or a sequence's end
                k = math.ceil(todo[head] / room) - 1
                if running:
                    k = min(k, running[0][0] - steps)
                dt = room * sec[head]
                todo[head] -= k * room
            else:
                # one step: the head's last tokens, then the next prompts' as the budget allows (those that
                # finish are always the first in the queue: one left unfinished has used the rest)
                k, left, dt = 1, float(room), 0.0
                for i in filling:
                    take = min(todo[i], left)
                    dt += take * sec[i]
                    todo[i] -= take
                    left -= take
                    if todo[i] <= 0:
                        ready.append(i)
                    if left <= 0:
                        break
        else:
            # decode only: run to the next completion, or to the next arrival that can be admitted
            k = running[0][0] - steps
            if nxt < n and not waiting and b < batch_cap and arrive[nxt] < math.inf:
                one = _interp(grid, table[b], ctx_base / b + steps)
                k = max(min(k, math.ceil((arrive[nxt] - now) / one)), 1)
            dt = 0.0
        if b:  # the batch's decode steps, costed at their middle context
            dt += _interp(grid, table[b], ctx_base / b + steps + (k - 1) / 2)
        span = k * dt
        if window_start <= now < window_end:
            tokens_in_window += b * k + len(ready)  # the decoded tokens, and the first tokens prefill made
            batch_seconds += b * span
        now += span
        if b:
            steps += k
        max_seen = max(max_seen, b)
        while running and running[0][0] <= steps:
            _, i = heapq.heappop(running)
            finish[i] = now
            ctx_base -= ctx0[i] - start[i]
            done += 1
            if closed is not None and pending < n:
                arrive[pending], pending = now, pending + 1
        for i in ready:
            filling.popleft()
            filling_kv -= need[i]
            first[i] = now
            rest = int(outs[i]) - 1
            if rest <= 0:
                finish[i] = now
                done += 1
                if closed is not None and pending < n:
                    arrive[pending], pending = now, pending + 1
                continue
            start[i] = float(steps)
            ctx_base += ctx0[i] - steps
            heapq.heappush(running, (steps + rest, i))
    return (
        np.asarray(arrive),
        np.asarray(admitted),
        np.asarray(first),
        np.asarray(finish),
        tokens_in_window,
        batch_seconds,
        max_seen,
        events,
    )


def _result(
    costs: StepCosts,
    output: _Arr,
    times: _Arr,
    admitted: _Arr,
    first: _Arr,
    finish: _Arr,
    tokens: float,
    batch_seconds: float,
    max_seen: int,
    events: int,
    *,
    trim: bool,
    clients: int = 0,
    closed: bool = False,
) -> SimulationResult:
    n = times.size
    # a closed loop starts with every client's request at once and ends with fewer clients than it had
    lo = max(int(n * WARMUP_SHARE), clients) if trim else 0
    hi = max(n - max(int(n * DRAIN_SHARE), clients), 1) if trim else n
    if hi <= lo:
        lo, hi = 0, n
    keep = slice(lo, hi)
    ttft = (first - times + costs.overhead_s) * 1000
    e2e = (finish - times + costs.overhead_s) * 1000
    many = output > 1
    tpot = np.where(many, (finish - first) / np.maximum(output - 1, 1), np.nan) * 1000
    kept_tpot = tpot[keep]
    window = float(times[-1] - times[min(lo, n - 1)])
    if window <= 0 or closed:  # all at once, or a closed loop: the whole run (as _run measured it)
        window = float(np.nanmax(finish) - times[0])
    late = float(np.count_nonzero(admitted > times[-1])) / n
    return SimulationResult(
        ttft_ms=Percentiles.of(ttft[keep]),
        tpot_ms=Percentiles.of(kept_tpot[~np.isnan(kept_tpot)]),
        e2e_ms=Percentiles.of(e2e[keep]),
        output_tokens_per_s=tokens / window if window > 0 else 0.0,
        mean_batch=batch_seconds / window if window > 0 else 0.0,
        max_batch_seen=max_seen,
        requests=len(range(n)[keep]),
        offered_rate=(n - 1) / float(times[-1] - times[0]) if n > 1 and times[-1] > times[0] else math.inf,
        backlog_share=late,
        events=events,
    )


# --- the highest load under a latency target ------------------------------------------------------------


class RateUnderTarget(BaseModel):
    """The highest request rate one replica sustains while meeting a latency target at a percentile."""

    model_config = ConfigDict(frozen=True)

    rate: float
    """Requests/s (0 when even an idle replica misses the target)."""
    result: SimulationResult
    """The run at that rate (at the lowest rate tried when none meets the target: what is achievable)."""
    percentile: Percentile
    meets: bool
    saturation_rate: float
    """Requests/s the replica serves at its batch cap with no latency target (the bisection's upper bound)."""

    @property
    def batch(self) -> float:
        """Sequences decoding on average at that rate: the batch the target leaves."""
        return self.result.mean_batch


def _meets(r: SimulationResult, percentile: Percentile, ttft_ms: float | None, tpot_ms: float | None) -> bool:
    if not r.keeps_up:
        return False
    ok_ttft = ttft_ms is None or r.ttft_ms.at(percentile) <= ttft_ms
    return ok_ttft and (tpot_ms is None or r.tpot_ms.at(percentile) <= tpot_ms)


def saturation_rate(
    costs: StepCosts, input_tokens: float, output_tokens: float, cached_share: float, batch: int
) -> float:
    """Requests/s a replica serves with ``batch`` sequences always decoding, each prompt's prefill added
    (``1 / (U x s + O x step / B)``, the roofline's request time): the most any latency target leaves."""
    uncached = max(math.ceil(input_tokens * (1 - cached_share)), 1)
    spt = float(costs.prefill_seconds_per_token(np.asarray([input_tokens]))[0])
    step = costs.decode_step_s(batch, input_tokens + output_tokens / 2)
    return 1 / (uncached * spt + output_tokens * step / batch)


def max_rate_under_target(
    costs: StepCosts,
    input_tokens: float | _Arr,
    output_tokens: float,
    *,
    percentile: str,
    ttft_ms: float | None = None,
    tpot_ms: float | None = None,
    cached_share: float = 0.0,
    max_batch: int | None = None,
    kv_budget_tokens: float | None = None,
    requests: int = DEFAULT_REQUESTS,
    seed: int = DEFAULT_SEED,
    tolerance: float = 0.02,
) -> RateUnderTarget:
    """Bisection over the Poisson rate for the highest at which the run keeps up and its TTFT and TPOT at
    ``percentile`` are within the targets (either may be None), to ``tolerance`` of the rate. The runs share
    one seed, so their arrivals differ only in scale and the latencies rise smoothly with the rate.
    ``input_tokens`` is one length, or one per request (``requests`` of them)."""
    pct = check_percentile(percentile)
    for name, value in (("ttft_ms", ttft_ms), ("tpot_ms", tpot_ms)):
        if value is not None and not (value > 0 and math.isfinite(value)):
            raise InputError(name, f"a target of {value} ms cannot be met; give a positive number of milliseconds")
    cap = costs.max_batch if max_batch is None else max_batch
    mean_input = float(np.mean(input_tokens))  # prompts of varying length: the bound from their mean
    if kv_budget_tokens is not None:
        cap = max(min(cap, int(kv_budget_tokens // (mean_input + output_tokens))), 1)
    top = saturation_rate(costs, mean_input, output_tokens, cached_share, cap)

    def run(rate: float) -> SimulationResult:
        return simulate_poisson(
            costs, rate, input_tokens, output_tokens, cached_share=cached_share, max_batch=max_batch,
            kv_budget_tokens=kv_budget_tokens, requests=requests, seed=seed,
        )  # fmt: skip

    lo_rate = top * 1e-3
    lo = run(lo_rate)
    if not _meets(lo, pct, ttft_ms, tpot_ms):
        return RateUnderTarget(rate=0.0, result=lo, percentile=pct, meets=False, saturation_rate=top)
    hi_rate = top * 1.05
    hi = run(hi_rate)
    if _meets(hi, pct, ttft_ms, tpot_ms):
        return RateUnderTarget(rate=hi_rate, result=hi, percentile=pct, meets=True, saturation_rate=top)
    while hi_rate / lo_rate > 1 + tolerance:
        mid_rate = math.sqrt(lo_rate * hi_rate)
        mid = run(mid_rate)
        if _meets(mid, pct, ttft_ms, tpot_ms):
            lo_rate, lo = mid_rate, mid
        else:
            hi_rate = mid_rate
    return RateUnderTarget(rate=lo_rate, result=lo, percentile=pct, meets=True, saturation_rate=top)


SIMULATION_ERROR_NOTE = (
    "simulated percentiles: hold-out median |error| 16% where nothing is assumed (48 published vLLM points, "
    "GPUStack), 48% over all 92 (MLPerf's TensorRT-LLM and MI300X runs 42-85% low: the roofline's steps 1.2-2.6x "
    "too short there); one run of 1,000 requests carries 5-12% sampling error at p99"
)
"""What ``benchmarks/ttft_check.py`` printed for the simulated percentiles: shown with every sized estimate."""


# --- validation against published percentiles ---------------------------------------------------------

CHECK_REQUESTS = 4000
"""Requests per simulated run when checking against published runs: twice the default, so the p99 the check
prints rests on about 34 requests."""


class PercentilePoint(BaseModel):
    """One published percentile beside the simulation's."""

    model_config = ConfigDict(frozen=True)

    case: PercentileCase
    metric: Literal["ttft", "tpot"]
    percentile: Percentile
    measured_ms: float
    simulated_ms: float
    mean_batch: float

    @property
    def error(self) -> float:
        return self.simulated_ms / self.measured_ms - 1


def _case_setup(
    case: PercentileCase,
    models: ModelCatalog,
    gpus: GpuCatalog,
    assumptions: RooflineAssumptions | None,
    n: int,
) -> tuple[StepCosts, float | _Arr, float]:
    """A case's step costs, its ``n`` prompts' lengths (drawn from the dataset's own when the case names them)
    and its replica's KV budget in tokens."""
    model, gpu = models.get(case.model), gpus.get(case.gpu)
    kv = case.kv_dtype or default_kv_dtype(case.precision)
    context = case.input_tokens + case.output_tokens
    room = fit(model, gpu, case.precision, math.ceil(context), case.gpus, kv)
    prompts: float | _Arr = case.input_tokens
    shortest, longest = case.input_tokens, context
    if case.input_lengths is not None:  # the dataset's own prompt lengths, drawn with a fixed seed
        lengths, counts = load_length_histogram(case.input_lengths)
        weights = np.asarray(counts, dtype=np.float64)
        rng = np.random.default_rng(DEFAULT_SEED + 1)
        prompts = rng.choice(np.asarray(lengths, dtype=np.float64), size=n, p=weights / weights.sum())
        shortest, longest = min(lengths), max(lengths) + case.output_tokens
    costs = step_costs(
        model, gpu, case.precision, case.gpus, max_batch=case.max_batch, max_context=longest,
        min_context=shortest, kv_dtype=kv, assumptions=assumptions,
    )  # fmt: skip
    # the engine ran, so its cache held at least one whole sequence, whatever fit() makes of the memory
    return costs, prompts, float(max(room.max_cached_tokens, math.ceil(longest)))


def simulate_case(
    case: PercentileCase,
    models: ModelCatalog,
    gpus: GpuCatalog,
    assumptions: RooflineAssumptions | None = None,
    requests: int = CHECK_REQUESTS,
    speed_scale: float = 1.0,
) -> SimulationResult:
    """The case's run on one replica: its share of the arrivals, its engine's batch cap and the KV cache that
    :func:`calculator.capacity.memory.fit` gives the replica; ``speed_scale`` stretches every step (a
    diagnostic: what the percentiles would be were the roofline's speed off by that factor)."""
    n = max(case.burst // case.replicas, 1) if case.burst is not None else requests
    if case.concurrency is not None:
        n = max(min(case.requests or requests, requests), 4 * case.concurrency)
    costs, prompts, budget = _case_setup(case, models, gpus, assumptions, n)
    if speed_scale != 1.0:
        costs = costs.scaled(speed_scale)
    if case.concurrency is not None:  # a closed loop, each replica its share of the clients
        clients = max(case.concurrency // case.replicas, 1)
        return simulate_closed(costs, clients, prompts, case.output_tokens, kv_budget_tokens=budget, requests=n)
    if case.burst is not None:  # every prompt at once, each replica its share; the benchmark counts them all
        return simulate(costs, np.zeros(n), prompts, case.output_tokens, kv_budget_tokens=budget, trim=False)
    rate = (case.request_rate or 0.0) / case.replicas
    arrivals = poisson_arrivals(rate, n)
    return simulate(costs, arrivals, prompts, case.output_tokens, kv_budget_tokens=budget)


class LimitedRate(BaseModel):
    """A latency-limited run's published rate per replica beside the highest the simulation sustains under the
    same limits, and the sequences in flight each way."""

    model_config = ConfigDict(frozen=True)

    case: PercentileCase
    measured_rate: float
    found: RateUnderTarget
    measured_in_flight: float | None
    """Requests/s x mean latency, per replica (Little's law), when the source gives the mean latency."""

    @property
    def error(self) -> float:
        return self.found.rate / self.measured_rate - 1


def check_limited_rates(
    models: ModelCatalog,
    gpus: GpuCatalog,
    cases: tuple[PercentileCase, ...] | None = None,
    assumptions: RooflineAssumptions | None = None,
) -> list[LimitedRate]:
    """For every latency-limited case (with ``limits`` and a Poisson rate): the highest rate per replica at
    which the simulated replica meets the limits (:func:`max_rate_under_target`) against the run's own."""
    out = []
    for case in cases if cases is not None else load_percentile_cases():
        if case.limits is None or case.request_rate is None:
            continue
        costs, prompts, budget = _case_setup(case, models, gpus, assumptions, DEFAULT_REQUESTS)
        found = max_rate_under_target(
            costs, prompts, case.output_tokens, percentile=case.limits.percentile, ttft_ms=case.limits.ttft_ms,
            tpot_ms=case.limits.tpot_ms, kv_budget_tokens=budget,
        )  # fmt: skip
        rate = case.request_rate / case.replicas
        in_flight = rate * case.mean_e2e_ms / 1000 if case.mean_e2e_ms else None
        out.append(LimitedRate(case=case, measured_rate=rate, found=found, measured_in_flight=in_flight))
    return out


class MedianTtft(BaseModel):
    """A published median TTFT (``ttft_cases.yaml``'s ``cases``) beside the simulated p50."""

    model_config = ConfigDict(frozen=True)

    case: TtftCase
    simulated_ms: float

    @property
    def error(self) -> float:
        return self.simulated_ms / self.case.measured_ttft_ms - 1


def check_median_ttfts(
    models: ModelCatalog,
    gpus: GpuCatalog,
    cases: tuple[TtftCase, ...] | None = None,
    assumptions: RooflineAssumptions | None = None,
) -> list[MedianTtft]:
    """The median-TTFT cases the TTFT formula is checked on, simulated: Poisson at the case's rate, or a closed
    loop of its concurrency, at vLLM's default batch for the GPU (``max_num_seqs``, as
    :meth:`calculator.capacity.memory.EngineProfile.default_max_num_seqs` has it)."""
    out = []
    for case in cases if cases is not None else load_ttft_cases():
        model, gpu = models.get(case.model), gpus.get(case.gpu)
        kv = default_kv_dtype(case.precision)
        context = case.input_tokens + case.output_tokens
        room = fit(model, gpu, case.precision, math.ceil(context), case.gpus, kv)
        budget = float(max(room.max_cached_tokens, math.ceil(context)))
        batch = ENGINES["vllm"].default_max_num_seqs(gpu)
        costs = step_costs(
            model, gpu, case.precision, case.gpus, max_batch=batch, max_context=context,
            min_context=case.input_tokens, kv_dtype=kv, assumptions=assumptions,
        )  # fmt: skip
        i, o = case.input_tokens, case.output_tokens
        if case.concurrency is not None:
            run = simulate_closed(costs, case.concurrency, i, o, kv_budget_tokens=budget, requests=CHECK_REQUESTS)
        else:
            rate = case.request_rate or 0.0
            run = simulate_poisson(costs, rate, i, o, kv_budget_tokens=budget, requests=CHECK_REQUESTS)
        out.append(MedianTtft(case=case, simulated_ms=run.ttft_ms.p50))
    return out


class SpeedMatched(BaseModel):
    """A case simulated with every step stretched so that its p50 TPOT is the published one: the factor the
    roofline's speed is off by there, and the other published percentiles against that run."""

    model_config = ConfigDict(frozen=True)

    case: PercentileCase
    scale: float
    """How many times longer the roofline's steps must be to give the published p50 TPOT."""
    points: tuple[PercentilePoint, ...]
    """Every published percentile but the p50 TPOT it was matched on."""


def check_speed_matched(
    models: ModelCatalog,
    gpus: GpuCatalog,
    cases: tuple[PercentileCase, ...] | None = None,
    requests: int = DEFAULT_REQUESTS,
) -> list[SpeedMatched]:
    """The simulation's own error, the roofline's speed level taken out: for each case with a p50 TPOT, the one
    factor on every step (found by bisection on a log scale) that gives that TPOT, then its other percentiles."""
    out = []
    for case in cases if cases is not None else load_percentile_cases():
        if case.tpot_ms is None or case.tpot_ms.p50 is None:
            continue
        target = case.tpot_ms.p50
        lo, hi = 0.05, 20.0
        for _ in range(24):  # the TPOT grows with the steps' length: bisect the factor to about 0.5%
            mid = math.sqrt(lo * hi)
            tpot = simulate_case(case, models, gpus, requests=requests, speed_scale=mid).tpot_ms.p50
            lo, hi = (mid, hi) if tpot < target else (lo, mid)
        scale = math.sqrt(lo * hi)
        run = simulate_case(case, models, gpus, requests=requests, speed_scale=scale)
        points = []
        for metric, measured, simulated in (("ttft", case.ttft_ms, run.ttft_ms), ("tpot", case.tpot_ms, run.tpot_ms)):
            for pct, value in (measured.given() if measured is not None else {}).items():
                if metric == "tpot" and pct == "p50":
                    continue
                p = check_percentile(pct)
                points.append(
                    PercentilePoint(
                        case=case,
                        metric=metric,
                        percentile=p,
                        measured_ms=value,
                        simulated_ms=simulated.at(p),
                        mean_batch=run.mean_batch,
                    )  # fmt: skip
                )
        out.append(SpeedMatched(case=case, scale=scale, points=tuple(points)))
    return out


def check_percentile_cases(
    models: ModelCatalog,
    gpus: GpuCatalog,
    cases: tuple[PercentileCase, ...] | None = None,
    assumptions: RooflineAssumptions | None = None,
) -> list[PercentilePoint]:
    """Every published percentile of every case (``ttft_cases.yaml``'s ``percentile_cases`` by default)."""
    points = []
    for case in cases if cases is not None else load_percentile_cases():
        run = simulate_case(case, models, gpus, assumptions)
        for metric, measured, simulated in (("ttft", case.ttft_ms, run.ttft_ms), ("tpot", case.tpot_ms, run.tpot_ms)):
            for pct, value in (measured.given() if measured is not None else {}).items():
                p = check_percentile(pct)
                points.append(
                    PercentilePoint(
                        case=case,
                        metric=metric,
                        percentile=p,
                        measured_ms=value,
                        simulated_ms=simulated.at(p),
                        mean_batch=run.mean_batch,
                    )  # fmt: skip
                )
    return points
