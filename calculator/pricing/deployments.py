"""The cheapest deployment that meets a latency target: every GPU offer x setup, sized and priced.

One scenario, one model. For every dedicated endpoint and GPU VM offer in the price sheets (spot
prices only when asked), every engine setup it can run is sized for the scenario's peak and priced
for its month, so the answer to "which GPUs, how many, and what does it cost" is a ranked list:

    offer            every dedicated and GPU VM offer with a price on the price date (on-demand,
                     reserved, committed; spot only with ``spot=True``)
    GPUs per replica tensor parallel 1, 2, 4, 8 within what the offer sells (a GPU VM's instance, a
                     dedicated endpoint priced per GPU; one priced per replica holds whole replicas);
                     two 8-GPU nodes where the model fits no single node and the offer sells nodes
    precision        BF16, and FP8 where the GPU has FP8 tensor cores (``precisions`` adds others)
    attention        tensor-parallel ("tp"); data-parallel attention ("dp") for MLA models joins at
                     one marked section ("THE ONE PLACE ..."), once ``fit``/``replica_speed`` take it
    engine features  prefix caching on (the uncached input is ``input x (1 - share x hit rate)``,
                     the scenario's own shape); speculative decoding only as a labelled what-if

Each setup's replica is sized from the best evidence there is: a measurement of this model at this
precision on this GPU and count from the records catalogue (its busiest load level meeting the
target, :func:`~calculator.capacity.sizing.best_under_target`, converted to the scenario's shape by
:func:`~calculator.capacity.sizing.replica_capacity`), else the roofline estimate
(:func:`~calculator.capacity.sizing.estimate_record`) at the largest batch that meets the target,
labelled as an estimate. With a latency target the estimate meets it at the target's percentile: the
simulated engine (:mod:`calculator.capacity.simulation`, up to the batch the KV cache holds) gives the
highest request rate per replica whose TTFT and time per output token meet it, and that rate caps the
replica's capacity. Replicas and the bill come from :mod:`calculator.pricing.billing`
(``ceil(peak / (capacity x target utilisation))`` plus spares, whole instances or billing units):
the same functions Compare prices with, so the two cannot disagree.

Every configuration that fits is kept; ``meets_target`` says which meet the target, and the ranking
is by monthly cost.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict

from calculator.capacity.memory import FitResult, bytes_per_weight, default_kv_dtype, fit, weight_bytes
from calculator.capacity.replica_setup import attention_layouts
from calculator.capacity.roofline import ReplicaSpeed, RooflineAssumptions, replica_speed
from calculator.capacity.simulation import (
    SIMULATION_ERROR_NOTE,
    Percentiles,
    SimulationResult,
    max_rate_under_target,
    simulate_poisson,
    step_costs,
)
from calculator.capacity.sizing import (
    ReplicaCapacity,
    best_under_target,
    estimate_record,
    meets,
    replica_capacity,
    uncached_tokens,
)
from calculator.capacity.ttft import TTFT_ERROR_NOTE, chunk_tokens_for, loaded_ttft
from calculator.catalog.catalogs import Catalogs
from calculator.catalog.gpus import GpuSpec
from calculator.catalog.measurements import ThroughputRecord
from calculator.catalog.models import ModelSpec
from calculator.catalog.prices import DedicatedOffer, GpuVmOffer, PriceSheet, canonical_model
from calculator.errors import InputError
from calculator.pricing.billing import dedicated_option, self_hosted_option
from calculator.pricing.option import OptionCost
from calculator.pricing.resolve import sizing_record, with_model_params, with_own_records
from calculator.pricing.same_model import GpuModelChoice, gpu_model_choice, model_names, serverless_spec
from calculator.scenario.inputs import AUTO_RECORD, LEGACY_RECORD, EstimateSetup, LatencyTarget, TurnShape
from calculator.scenario.model import Scenario

__all__ = [
    "ATTENTION_LAYOUTS",
    "AttentionLayout",
    "DEFAULT_PRECISIONS",
    "Deployment",
    "DeploymentSearch",
    "SPECULATIVE_SOURCE",
    "SPECULATIVE_WHAT_IF",
    "Skipped",
    "TENSOR_PARALLEL",
    "deployment_model",
    "model_choice",
    "find_deployments",
    "pareto_front",
]

AttentionLayout = Literal["tp", "dp"]
ATTENTION_LAYOUTS: tuple[AttentionLayout, ...] = ("tp",)
"""Layouts enumerated. "dp" (data-parallel attention: an MLA latent on one GPU instead of all) is added
for MLA models once ``fit`` and ``replica_speed`` take ``attention=``; see :func:`_layouts`."""
TENSOR_PARALLEL = (1, 2, 4, 8)
"""GPUs per engine replica on one machine; engines split attention heads evenly, so the model's heads
must divide by it."""
NODE_GPUS = 8
MULTI_NODE = (2,)
"""Whole 8-GPU nodes per replica tried when the model fits no single node (pipeline over the network)."""
DEFAULT_PRECISIONS = ("bf16", "fp8")
"""FP4 and INT4 change the model's quality as well as its cost: asked for, not enumerated by default, except a
model's own checkpoint precision (gpt-oss ships MXFP4, run as ``fp4``), which is the published model itself:
see :func:`searched_precisions`."""


def searched_precisions(spec: ModelSpec, precisions: tuple[str, ...]) -> tuple[str, ...]:
    """The precisions the search tries: those asked for, and with the default ones the precision the model's
    checkpoint ships in (so gpt-oss is sized at its MXFP4 weights, where its published sweeps ran, not only
    upcast to BF16 or FP8)."""
    native = spec.checkpoint.precision if spec.checkpoint is not None else None
    if precisions == DEFAULT_PRECISIONS and native is not None and native not in precisions:
        return (*precisions, native)
    return precisions


BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
"""Batches the estimate tries, each capped by what the KV cache holds and the engine schedules
(:func:`calculator.capacity.batch.batch_cap`: vLLM's max_num_seqs is 1,024 on large GPUs), so the last one
tried is the most the replica runs; the search keeps the largest that meets the latency target."""
SPECULATIVE_WHAT_IF = 1.5
"""A typical decode speed-up from speculative decoding at low to moderate load: an assumption."""
SPECULATIVE_SOURCE = (
    "jarvislabs.ai, 'Speculative Decoding in vLLM: Complete Guide to Faster LLM Inference' "
    "(https://jarvislabs-docs.vercel.app/blog, read 2026-11-30): 1.4-1.6x on Llama-3.1-8B and Llama-3.3-70B "
    "with draft models, n-gram and EAGLE-3; the gain shrinks at high batch, where decode is compute bound"
)
PriceKind = Literal["on_demand", "reserved", "committed", "spot"]
SIZING_REQUESTS = 1000
"""Requests per simulated run when sizing to a percentile target: the search runs about ten per setup, so
fewer than the module's default; a p99 then rests on about 8 requests (see ``SIMULATION_ERROR_NOTE``)."""


class Deployment(BaseModel):
    """One configuration: an offer, the engine setup each replica runs, how many, and the month's bill."""

    model_config = ConfigDict(frozen=True)

    provider: str
    offer: str
    kind: Literal["dedicated", "gpu_vm"]
    price_kind: PriceKind
    gpu: str
    gpus_per_replica: int
    precision: str
    attention: AttentionLayout
    feature: str
    """Engine features assumed: prefix caching, and a speculative decoding what-if when labelled so."""
    what_if: bool
    """Sized with an assumption that is not a measurement of it (speculative decoding)."""
    model: str
    replicas: int
    """Engine replicas billed at the peak (self-hosted: spares included)."""
    gpus: int
    """GPUs billed at the peak."""
    monthly: Decimal
    currency: str
    requests_per_s_per_replica: float
    tokens_per_s_per_user: float | None
    ttft_ms: float | None
    meets_target: bool
    evidence: str
    """What sized the replica: the measurement (its id and load level) or the roofline estimate, labelled."""
    evidence_kind: Literal["measurement", "estimate"]
    record_id: str
    batch: int | None
    """Sequences decoded together in the replica sized from (an estimate's chosen batch; a record's in flight)."""
    latency_note: str
    """Where the per-user speed and TTFT come from (a measured percentile, or the roofline's figure)."""
    cost: OptionCost
    """The bill as Compare prices it (breakdown, price version, notes)."""
    latency_percentile: str | None = None
    """The target's percentile the estimate was simulated at (None: a measurement, or no target)."""
    ttft_percentiles_ms: Percentiles | None = None
    """Simulated TTFT at the sizing load, p50 to p99 (an estimate sized to a percentile target)."""
    tpot_percentiles_ms: Percentiles | None = None
    """Simulated time per output token at the sizing load, p50 to p99."""
    requests_per_s_at_target: float | None = None
    """The highest requests/s one replica serves meeting the target at its percentile (simulated)."""
    mean_batch_at_target: float | None = None
    """Sequences decoding on average at the sizing load (simulated)."""

    @property
    def label(self) -> str:
        dp = ", DP attention" if self.attention == "dp" else ""
        spec = ", spec. decoding what-if" if self.what_if else ""
        return f"{self.provider}/{self.offer}: {self.gpus_per_replica}x {self.gpu} {self.precision.upper()}{dp}{spec}"


class Skipped(BaseModel):
    """An offer left out of the search, and why (no GPU spec, no price on the date, another model)."""

    model_config = ConfigDict(frozen=True)

    provider: str
    offer: str
    reason: str
    kind: Literal["no_gpu_spec", "no_price", "other_model"]


class DeploymentSearch(BaseModel):
    """Every configuration that fits, sorted by monthly cost, and what was left out."""

    model_config = ConfigDict(frozen=True)

    model: str
    model_reason: str
    """Why this model: asked for, the scenario's serverless model, or a substitute, said so."""
    target: LatencyTarget | None
    deployments: tuple[Deployment, ...]
    skipped: tuple[Skipped, ...]
    spot: bool
    speculative_speedup: float | None

    @property
    def meeting(self) -> tuple[Deployment, ...]:
        """Those meeting the target, cheapest first: the ranking."""
        return tuple(d for d in self.deployments if d.meets_target)

    @property
    def cheapest(self) -> Deployment | None:
        return next(iter(self.meeting), None)

    def best_speed(self) -> Deployment | None:
        """The configuration with the highest per-user speed (what is achievable, when nothing meets)."""
        known = [d for d in self.deployments if d.tokens_per_s_per_user is not None]
        return max(known, key=lambda d: (d.tokens_per_s_per_user or 0.0, -d.monthly), default=None)

    def best_ttft(self) -> Deployment | None:
        known = [d for d in self.deployments if d.ttft_ms is not None]
        return min(known, key=lambda d: (d.ttft_ms or 0.0, d.monthly), default=None)

    def closest(self) -> Deployment | None:
        """The configuration nearest the target: the smallest worst shortfall, as a share of each target."""
        if self.target is None or not self.deployments:
            return None
        return min(self.deployments, key=lambda d: (_shortfall(d, self.target), d.monthly))


def _shortfall(d: Deployment, target: LatencyTarget | None) -> float:
    """How far ``d`` misses the target: the larger of its TTFT over the target and the target speed over its
    speed, less 1 (0 when it meets both); an unknown figure counts as missing by far."""
    if target is None:
        return 0.0
    worst = 0.0
    if target.ttft_ms is not None:
        worst = max(worst, (d.ttft_ms / target.ttft_ms - 1) if d.ttft_ms is not None else math.inf)
    if target.tokens_per_s_per_user is not None:
        speed = d.tokens_per_s_per_user
        worst = max(worst, (target.tokens_per_s_per_user / speed - 1) if speed else math.inf)
    return worst


def pareto_front(deployments: tuple[Deployment, ...] | list[Deployment]) -> list[Deployment]:
    """The configurations no other beats on both monthly cost (lower) and tokens/s per user (higher)."""
    known = sorted(
        (d for d in deployments if d.tokens_per_s_per_user is not None),
        key=lambda d: (d.monthly, -(d.tokens_per_s_per_user or 0.0)),
    )
    front: list[Deployment] = []
    best = -math.inf
    for d in known:
        speed = d.tokens_per_s_per_user or 0.0
        if speed > best:
            front.append(d)
            best = speed
    return front


# --- which model ----------------------------------------------------------------------------------


def deployment_model(scenario: Scenario, cat: Catalogs, model_id: str | None = None) -> ModelSpec:
    """The model to deploy: the one asked for, else the scenario's estimate's, else its serverless model
    when the weights are open and a spec exists, else the model of the record it sizes GPUs from."""
    return model_choice(scenario, cat, model_id)[0]


def model_choice(scenario: Scenario, cat: Catalogs, model_id: str | None = None) -> tuple[ModelSpec, str]:
    """:func:`deployment_model`, and a sentence saying why that model (so a substitute is never silent)."""
    if model_id:
        return cat.models.get(model_id), "the model asked for"
    if scenario.self_hosting.estimate is not None:
        return cat.models.get(scenario.self_hosting.estimate.model), "the model the scenario's estimate sizes"
    # the one rule for which model the GPU options run (Compare's ``record: auto``): the serverless model's
    # own spec or its nearest (GLM-5.3 -> glm-5), or the user's substitute
    choice = gpu_model_choice(scenario, cat)
    if choice is None and scenario.serverless is not None:  # the scenario names its record: deploy still runs
        try:  # the serverless model when its weights are open
            _, offer = cat.prices.serverless(scenario.serverless.provider, scenario.serverless.model)
        except InputError:
            offer = None
        found = serverless_spec(offer, cat.models) if offer is not None else None
        if offer is not None and offer.open_weights and found is not None:
            choice = GpuModelChoice(found[0], "serverless", stands_for=offer.model, exact=found[1])
        elif offer is not None:
            reason = "has closed weights" if not offer.open_weights else "has no model spec here"
            choice = GpuModelChoice(None, "default", reason=reason)
    if choice is not None and choice.spec is not None:
        if choice.chosen == "user":
            why = "the substitute the scenario chooses (self_hosting.model)"
            if scenario.serverless is not None:
                with contextlib.suppress(InputError):
                    _, offer = cat.prices.serverless(scenario.serverless.provider, scenario.serverless.model)
                    if not offer.open_weights:
                        closed = f"{scenario.serverless.model} ({scenario.serverless.provider})"
                        why += f"; NOT the serverless model: {closed} has closed weights"
            return choice.spec, why
        why = f"the scenario's serverless model, {choice.stands_for}, self-hosted"
        if not choice.exact:
            why += f" as its nearest spec {choice.spec.id} (a point release keeps the architecture as a rule)"
        return choice.spec, why
    served = f"{scenario.serverless.model} ({scenario.serverless.provider})" if scenario.serverless else None
    if served and choice is not None and choice.reason:
        served += f" {choice.reason}" if choice.reason.startswith("has ") else f": {choice.reason}"
    # with record: auto and nothing open to run, the GPU options size from the default record, as Compare's do
    named = scenario
    if scenario.self_hosting.record == AUTO_RECORD and scenario.self_hosting.estimate is None:
        named = scenario.model_copy(
            update={"self_hosting": scenario.self_hosting.model_copy(update={"record": LEGACY_RECORD})}
        )
    try:
        record = sizing_record(named, with_own_records(cat, scenario))
    except InputError:
        record = None
    spec = cat.models.find(record.model) if record is not None and record.model else None
    if spec is None:
        raise InputError("model", f"the scenario names no model with a spec; give one of: {', '.join(cat.models.ids)}")
    why = f"the model of the record the scenario sizes GPUs from ({record.id})" if record else ""
    if served:
        why += f"; NOT the serverless model: {served} (give --model to choose)"
    return spec, why


# --- THE ONE PLACE the attention layout reaches the capacity layer --------------------------------------
# Every configuration carries its layout (``Deployment.attention``); memory (``fit``) and the roofline
# (``estimate_record``, ``replica_speed``) take it here.


def _layouts(spec: ModelSpec) -> tuple[AttentionLayout, ...]:
    """Attention layouts to try (:func:`~calculator.capacity.replica_setup.attention_layouts`)."""
    return attention_layouts(spec)


def _fit(
    spec: ModelSpec, gpu: GpuSpec, precision: str, context: int, gpus: int, attention: AttentionLayout
) -> FitResult:
    return fit(spec, gpu, precision, context, gpus, default_kv_dtype(precision), attention=attention, suggest=False)


def _estimate(
    spec: ModelSpec,
    gpu: GpuSpec,
    precision: str,
    gpus: int,
    batch: int,
    shape: TurnShape,
    attention: AttentionLayout,
    assumptions: RooflineAssumptions,
) -> tuple[ThroughputRecord, ReplicaSpeed]:
    """The roofline record of ``batch`` sequences (fewer when the KV cache holds fewer) and the replica's speed
    at the batch it holds."""
    setup = EstimateSetup(model=spec.id, precision=precision, gpus_per_replica=gpus, max_batch=batch)
    i, o = float(shape.input_tokens), float(shape.output_tokens)
    share, hit = float(shape.prefix_share), float(shape.hit_rate)
    record = estimate_record(setup, spec, gpu, i, share, hit, o, assumptions, attention=attention)
    held = round(record.concurrency or batch)  # what the KV cache holds, when less
    kv = default_kv_dtype(precision)
    speed = replica_speed(spec, gpu, precision, i, o, held, gpus, kv, assumptions, attention=attention)
    return record, speed


def _loaded_ttft_ms(
    speed: ReplicaSpeed, uncached: float, output: float, batch: int, utilisation: float, chunk_tokens: int
) -> float:
    """An estimate's TTFT when its replica runs at ``batch`` and is sized to ``utilisation`` of its capacity
    (:func:`calculator.capacity.ttft.loaded_ttft`): the prompt's prefill rides steps that decode the batch's
    ``batch - 1`` other sequences, behind other prompts' prefill, and waits for a slot when all ``batch`` are
    busy, at the arrival rate ``utilisation / request time`` (Poisson), in chunks of ``chunk_tokens``."""
    step_s = speed.decode.step_ms / 1000
    prefill_s = uncached / speed.prefill_tokens_per_s
    ttft = loaded_ttft(
        uncached,
        speed.prefill_tokens_per_s,
        decode_step_s=step_s,
        decoding=batch - 1,
        # a turn of no tokens still takes a decode step (as the estimate counts it): never a zero request time
        arrival_rate=utilisation / speed.request_seconds(uncached, max(output, 1.0)),
        slots=batch,
        request_duration_s=prefill_s + output * step_s,
        chunk_tokens=chunk_tokens,
    )
    return ttft.total_ms


def _estimate_capacity(
    record: ThroughputRecord,
    spec: ModelSpec,
    gpu: GpuSpec,
    shape: TurnShape,
    attention: AttentionLayout,
    assumptions: RooflineAssumptions,
) -> ReplicaCapacity:
    """An estimate's replica capacity as Compare finds it (:func:`replica_capacity` of the record at its own shape:
    the same figure, so "use this" bills the same). With "dp" the record is already of this shape and layout,
    so it applies directly: the architecture is left out, as its conversion would re-fit the batch with the
    latent copied on every GPU."""
    i, o = float(shape.input_tokens), float(shape.output_tokens)
    share, hit = float(shape.prefix_share), float(shape.hit_rate)
    model = spec if attention == "tp" else None
    return replica_capacity(record, gpu, i, share, hit, o, target_gpu=gpu, model=model, assumptions=assumptions)


# --- one replica of one setup ---------------------------------------------------------------------


@dataclass(frozen=True)
class _Sized:
    """One replica of a setup (model, GPU, count, precision, layout, features), sized for the scenario."""

    record: ThroughputRecord
    capacity: ReplicaCapacity
    tokens_per_s_per_user: float | None
    ttft_ms: float | None
    meets_target: bool
    evidence: str
    evidence_kind: Literal["measurement", "estimate"]
    latency_note: str
    simulated: SimulationResult | None = None
    """The simulated run at the sizing load, when sized to a percentile target."""
    rate_at_target: float | None = None
    """The highest requests/s a replica serves meeting the target at its percentile (simulated)."""
    percentile: str | None = None


@dataclass
class _Search:
    scenario: Scenario
    cat: Catalogs
    spec: ModelSpec
    shape: TurnShape
    target: LatencyTarget | None
    speculative_speedup: float | None
    sized: dict[tuple[str, int, str, str, bool], _Sized | None] = field(default_factory=dict)
    fits: dict[tuple[str, int, str, str], bool] = field(default_factory=dict)

    @property
    def context(self) -> int:
        return max(int(self.shape.input_tokens + self.shape.output_tokens), 1)

    def fits_on(self, gpu: GpuSpec, gpus: int, precision: str, attention: AttentionLayout = "tp") -> bool:
        key = (gpu.id, gpus, precision, attention)
        if key not in self.fits:
            # weights that alone exceed the GPUs' memory cannot fit: said without the full memory account
            too_big = weight_bytes(self.spec, precision) > gpu.usable_memory_bytes * gpus
            self.fits[key] = not too_big and _fit(self.spec, gpu, precision, self.context, gpus, attention).fits
        return self.fits[key]

    def replica(
        self, gpu: GpuSpec, gpus: int, precision: str, attention: AttentionLayout, what_if: bool
    ) -> _Sized | None:
        """The setup's replica, sized once however many offers sell its GPU; None when it does not fit."""
        key = (gpu.id, gpus, precision, attention, what_if)
        if key not in self.sized:
            self.sized[key] = self._size(gpu, gpus, precision, attention, what_if)
        return self.sized[key]

    def _size(
        self, gpu: GpuSpec, gpus: int, precision: str, attention: AttentionLayout, what_if: bool
    ) -> _Sized | None:
        if not self.fits_on(gpu, gpus, precision, attention):
            return None
        levels = self._measured_levels(gpu, gpus, precision)
        if what_if and levels:
            return None  # a measurement holds what its engine did; a what-if on top would mix the two
        try:
            if levels and attention == "tp":  # a measurement is of the layout its engine ran: tensor parallel
                return self._from_measurement(gpu, levels)
            return self._from_estimate(gpu, gpus, precision, attention, what_if)
        except InputError:  # the setup cannot hold one sequence of the scenario's turn
            return None

    def _measured_levels(self, gpu: GpuSpec, gpus: int, precision: str) -> list[ThroughputRecord]:
        """Load levels measured with this model, precision, GPU and count: the user's own when there are any
        (a record no one published), else the published ones (the bundled library), never the two mixed."""
        found = []
        for record in self.cat.records.records:
            if record.gpu != gpu.id or record.gpu_count != gpus or (record.precision or "").lower() != precision:
                continue
            named = self.cat.models.find(record.model) if record.model else None
            if named is not None and named.id == self.spec.id:
                found.append(with_model_params(record, self.cat))
        own = [r for r in found if r.publisher is None]
        return own or found

    def _from_measurement(self, gpu: GpuSpec, levels: list[ThroughputRecord]) -> _Sized:
        target = self.target or LatencyTarget()
        best, _ = best_under_target(levels, target)
        ok = best is not None
        record = best if best is not None else max(levels, key=lambda r: r.requests_per_s)
        s = self.shape
        capacity = replica_capacity(
            record, gpu, float(s.input_tokens), float(s.prefix_share), float(s.hit_rate), float(s.output_tokens),
            target_gpu=gpu, model=self.spec,
        )  # fmt: skip
        pct = target.percentile
        itl = record.itl_ms.at(pct)
        ttft = record.ttft_ms.at(pct)
        shown = pct
        if itl is None and ttft is None and record.itl_ms.p50 is not None:
            itl, ttft, shown = record.itl_ms.p50, record.ttft_ms.p50, "p50"
        verdict = meets(record, target)[1] if self.target is not None else "no latency target"
        level = f"{record.engine} at {record.requests_per_s:g} req/s"
        return _Sized(
            record=record,
            capacity=capacity,
            tokens_per_s_per_user=1000 / itl if itl else None,
            ttft_ms=ttft,
            meets_target=ok,
            evidence=(
                f"measured (published by {record.publisher}: {record.source.url or record.source.document}) "
                f"{record.id} ({level}; {capacity.method}); {verdict}"
                if record.publisher
                else f"measurement {record.id} (your record; {level}; {capacity.method}); {verdict}"
            ),
            evidence_kind="measurement",
            latency_note=f"measured {shown} of the load level sized from" if itl or ttft else "not measured",
        )

    def _from_estimate(
        self, gpu: GpuSpec, gpus: int, precision: str, attention: AttentionLayout, what_if: bool
    ) -> _Sized | None:
        """The roofline at the largest batch that meets the target (the engine's default without one)."""
        speedup = self.speculative_speedup if what_if and self.speculative_speedup else 1.0
        assumptions = RooflineAssumptions(speculative_speedup=speedup)
        # the largest batch: what the KV cache holds and the engine schedules (batch_cap caps the request); a
        # latency target then limits the load through the simulation, not through a smaller batch
        points = [self._estimate_at(gpu, gpus, precision, attention, BATCHES[-1], assumptions)]
        if self.target is not None:
            return self._from_simulation(gpu, gpus, precision, attention, what_if, assumptions, points[-1][0])
        meeting = [p for p in points if self._meets(p[1], p[2])]
        record, speed, ttft = meeting[-1] if meeting else points[-1]
        capacity = _estimate_capacity(record, self.spec, gpu, self.shape, attention, assumptions)
        label = f"ESTIMATE (roofline, not a measurement), batch {record.concurrency:g}"
        if what_if:
            label += f"; what-if: speculative decoding {speedup:g}x decode (assumed; {SPECULATIVE_SOURCE})"
        return _Sized(
            record=record,
            capacity=capacity.model_copy(update={"note": f"{label}; {capacity.note}"}),
            tokens_per_s_per_user=speed,
            ttft_ms=ttft if math.isfinite(ttft) else None,  # infinite: the queue grows without bound
            meets_target=bool(meeting),
            evidence=label,
            evidence_kind="estimate",
            latency_note="roofline: decode speed at the batch; TTFT under load at the target utilisation (the "
            "prompt's prefill, the decode steps it rides, other prompts' prefill and a free slot ahead of it; "
            f"{TTFT_ERROR_NOTE}; a mean, so the target's percentile does not apply to an estimate)",
        )

    def _from_simulation(
        self,
        gpu: GpuSpec,
        gpus: int,
        precision: str,
        attention: AttentionLayout,
        what_if: bool,
        assumptions: RooflineAssumptions,
        record: ThroughputRecord,
    ) -> _Sized:
        """The roofline replica sized to the target at its percentile: the highest Poisson rate at which the
        simulated engine (:mod:`calculator.capacity.simulation`, up to the batch the KV cache holds) keeps the
        TTFT and the time per output token within the target at that percentile caps the replica's capacity,
        and its latencies are shown at the sizing load (that rate x the target utilisation)."""
        target = self.target or LatencyTarget()
        s = self.shape
        i, o = float(s.input_tokens), float(s.output_tokens)
        cached = float(s.prefix_share) * float(s.hit_rate)
        held = max(round(record.concurrency or 1), 1)
        costs = step_costs(
            self.spec, gpu, precision, gpus, max_batch=held, max_context=i + o, min_context=i,
            assumptions=assumptions, attention=attention,
        )  # fmt: skip
        tpot = 1000 / target.tokens_per_s_per_user if target.tokens_per_s_per_user else None
        found = max_rate_under_target(
            costs, i, o, percentile=target.percentile, ttft_ms=target.ttft_ms, tpot_ms=tpot, cached_share=cached,
            requests=SIZING_REQUESTS,
        )  # fmt: skip
        capacity = _estimate_capacity(record, self.spec, gpu, self.shape, attention, assumptions)
        utilisation = self.scenario.self_hosting.target_utilisation
        pct = found.percentile
        if found.meets:
            rate = min(capacity.requests_per_s, found.rate)
            at = simulate_poisson(costs, rate * utilisation, i, o, cached_share=cached, requests=SIZING_REQUESTS)
        else:
            at, rate = found.result, capacity.requests_per_s
        label = (
            f"ESTIMATE (roofline, not a measurement), simulated at {pct}: up to {found.rate:.3g} requests/s a "
            f"replica meet the target, batch {found.batch:.1f} on average (at most {held})"
            if found.meets
            else f"ESTIMATE (roofline, not a measurement): even an idle replica misses the target at {pct} "
            f"(TTFT {pct} {at.ttft_ms.at(pct):,.0f} ms, {1000 / at.tpot_ms.at(pct):,.1f} tokens/s per user)"
        )
        if what_if:
            speedup = assumptions.speculative_speedup
            label += f"; what-if: speculative decoding {speedup:g}x decode (assumed; {SPECULATIVE_SOURCE})"
        tpot_at = at.tpot_ms.at(pct)
        note = f"{label}; {capacity.note}"
        return _Sized(
            record=record,
            capacity=capacity.model_copy(update={"requests_per_s": rate, "note": note}),
            tokens_per_s_per_user=1000 / tpot_at if tpot_at > 0 else None,
            ttft_ms=at.ttft_ms.at(pct),
            meets_target=found.meets,
            evidence=label,
            evidence_kind="estimate",
            latency_note=f"simulated {pct} of continuous batching on the roofline's step costs "
            + (
                f"at {rate * utilisation:.3g} requests/s a replica (the sizing load)"
                if found.meets
                else f"on a nearly idle replica ({at.offered_rate:.3g} requests/s: the best it does)"
            )
            + f"; {SIMULATION_ERROR_NOTE}",
            simulated=at,
            rate_at_target=found.rate,
            percentile=pct,
        )

    def _estimate_at(
        self,
        gpu: GpuSpec,
        gpus: int,
        precision: str,
        attention: AttentionLayout,
        batch: int,
        assumptions: RooflineAssumptions,
    ) -> tuple[ThroughputRecord, float, float]:
        """The roofline record of one batch (fewer when the KV cache holds fewer), its per-user tokens/s and its
        TTFT in ms under load at the sizing utilisation (:func:`_loaded_ttft_ms`)."""
        s = self.shape
        record, speed = _estimate(self.spec, gpu, precision, gpus, batch, s, attention, assumptions)
        uncached = float(uncached_tokens(float(s.input_tokens), float(s.prefix_share), float(s.hit_rate)))
        ttft = _loaded_ttft_ms(
            speed,
            uncached,
            float(s.output_tokens),
            round(record.concurrency or batch),
            self.scenario.self_hosting.target_utilisation,
            chunk_tokens_for(gpu),
        )
        return record, speed.decode.tokens_per_s_per_user, ttft

    def _meets(self, speed: float, ttft: float) -> bool:
        t = self.target
        if t is None:
            return True
        return (t.ttft_ms is None or ttft <= t.ttft_ms) and (
            t.tokens_per_s_per_user is None or speed >= t.tokens_per_s_per_user
        )


def _supports(gpu: GpuSpec, precision: str) -> bool:
    """Whether the GPU runs ``precision`` as the spec says: FP8, INT8 and FP4 need tensor cores of their own or
    FP8's (an A100 has neither, so its "FP8" would be BF16 with upcast weights: left out); BF16, FP16 and
    weight-only INT4 (dequantised to BF16) run everywhere."""
    if precision in ("fp8", "int8", "fp4"):
        return gpu.effective_precision(precision) != "bf16"
    return True


# --- offers ---------------------------------------------------------------------------------------


def _price_kind(offer: DedicatedOffer | GpuVmOffer) -> PriceKind:
    if isinstance(offer, GpuVmOffer):
        if offer.pricing == "on_demand" and offer.commitment_months:
            return "committed"
        return offer.pricing
    return "committed" if offer.min_billed_hours else "on_demand"


def _replica_sizes(offer: DedicatedOffer | GpuVmOffer, per_gpu: bool) -> tuple[int, ...]:
    """GPUs per engine replica the offer can hold on one machine.

    A GPU VM: what divides its instance (a replica does not span separate VMs). A dedicated endpoint
    priced per GPU: any tensor-parallel size (its provider bills the GPUs a replica uses); priced per
    replica: what divides the provider's replica.
    """
    if isinstance(offer, GpuVmOffer):
        unit = offer.gpus_per_instance
    elif per_gpu:
        unit = max(TENSOR_PARALLEL)
    else:
        unit = offer.gpus_per_replica
    return tuple(g for g in TENSOR_PARALLEL if g <= unit and unit % g == 0)


def _offers(
    cat: Catalogs, search: _Search, spot: bool, skipped: list[Skipped]
) -> Iterator[tuple[PriceSheet, DedicatedOffer | GpuVmOffer, GpuSpec]]:
    as_of = search.scenario.price_date
    for sheet, offer in cat.prices.offers():
        if not isinstance(offer, DedicatedOffer | GpuVmOffer):
            continue
        if isinstance(offer, GpuVmOffer) and offer.pricing == "spot" and not spot:
            continue
        try:
            gpu = cat.gpus.get(offer.gpu)
        except InputError:
            reason = f"no GPU spec for {offer.gpu!r}"
            skipped.append(Skipped(provider=sheet.provider, offer=offer.id, reason=reason, kind="no_gpu_spec"))
            continue
        try:
            offer.version_at(as_of)
        except InputError as exc:
            reason = exc.problem.message
            skipped.append(Skipped(provider=sheet.provider, offer=offer.id, reason=reason, kind="no_price"))
            continue
        if isinstance(offer, DedicatedOffer) and offer.model and not _same_model(offer.model, search.spec, cat):
            reason = f"deploys only {offer.model}"
            skipped.append(Skipped(provider=sheet.provider, offer=offer.id, reason=reason, kind="other_model"))
            continue
        yield sheet, offer, gpu


def _same_model(name: str, spec: ModelSpec, cat: Catalogs) -> bool:
    found = cat.models.find(name)
    return found.id == spec.id if found else canonical_model(name) == canonical_model(spec.id)


def _priced(search: _Search, sheet: PriceSheet, offer: DedicatedOffer | GpuVmOffer, sized: _Sized) -> OptionCost:
    """The month's bill through the functions Compare uses (the one replicas formula, the one bill)."""
    s = search.scenario
    profile = s.evidence.load_profile
    if isinstance(offer, GpuVmOffer):
        return self_hosted_option(
            sheet, offer, s.price_date, sized.record, s.self_hosting, s.traffic, sized.capacity, s.currency, s.fx,
            profile,
        )  # fmt: skip
    return dedicated_option(
        sheet, offer, s.price_date, sized.record, s.self_hosting, s.traffic, sized.capacity, s.currency, s.fx, profile
    )


def find_deployments(
    scenario: Scenario,
    cat: Catalogs,
    model: str | None = None,
    target: LatencyTarget | None = None,
    *,
    spot: bool = False,
    precisions: tuple[str, ...] = DEFAULT_PRECISIONS,
    speculative_speedup: float | None = None,
) -> DeploymentSearch:
    """Every configuration of every GPU offer that holds ``model`` (default: :func:`deployment_model`),
    sized for the scenario's peak and priced for its month, cheapest first.

    ``target`` (default: the scenario's ``self_hosting.latency_target``) decides ``meets_target``;
    ``speculative_speedup`` adds what-if rows for estimated setups with decode that many times faster.
    A model that fits no offer at all is an :class:`InputError` saying what would.
    """
    cat = with_own_records(cat, scenario)
    spec, why = model_choice(scenario, cat, model)
    target = target if target is not None else scenario.self_hosting.latency_target
    if target is not None and target.ttft_ms is None and target.tokens_per_s_per_user is None:
        target = None
    shape = scenario.workload.scaled(scenario.token_factor(*model_names(scenario, cat, spec.id)))
    search = _Search(scenario, cat, spec, shape, target, speculative_speedup)
    precisions = searched_precisions(spec, precisions)
    skipped: list[Skipped] = []
    found: list[Deployment] = []
    what_ifs = (False, True) if speculative_speedup and speculative_speedup > 1 else (False,)
    tried: list[tuple[GpuSpec, int, str]] = []
    for sheet, offer, gpu in _offers(cat, search, spot, skipped):
        per_gpu = isinstance(offer, DedicatedOffer) and offer.version_at(scenario.price_date).per_gpu_hour is not None
        for precision in precisions:
            if not _supports(gpu, precision):
                continue
            sizes = [g for g in _replica_sizes(offer, per_gpu) if spec.attention_heads % g == 0]
            whole_nodes = isinstance(offer, GpuVmOffer) and offer.gpus_per_instance == NODE_GPUS
            if whole_nodes and not any(search.fits_on(gpu, g, precision, a) for g in sizes for a in _layouts(spec)):
                sizes += [NODE_GPUS * n for n in MULTI_NODE]
            tried += [(gpu, max(sizes), precision)] if sizes else []
            for g in sizes:
                for attention in _layouts(spec):
                    for what_if in what_ifs:
                        sized = search.replica(gpu, g, precision, attention, what_if)
                        if sized is None or (what_if and sized.evidence_kind != "estimate"):
                            continue
                        cost = _priced(search, sheet, offer, sized)
                        found.append(
                            _deployment(sheet, offer, gpu, g, precision, attention, what_if, spec, sized, cost)
                        )
    if not found and not tried:
        kinds = "GPU VM or dedicated" + ("" if spot else " (spot left out)")
        raise InputError(
            "as_of",
            f"no {kinds} offer in the price sheets can be priced on {scenario.price_date.isoformat()} "
            f"({len(skipped)} left out, for example {skipped[0].provider}/{skipped[0].offer}: {skipped[0].reason})"
            if skipped
            else f"the price sheets hold no {kinds} offer",
        )
    if not found:
        raise InputError("model", _fits_nowhere(search, tried))
    found.sort(key=lambda d: (d.monthly, not d.meets_target, -(d.tokens_per_s_per_user or 0.0), d.provider, d.offer))
    return DeploymentSearch(
        model=spec.id,
        model_reason=why,
        target=target,
        deployments=tuple(found),
        skipped=tuple(skipped),
        spot=spot,
        speculative_speedup=speculative_speedup if len(what_ifs) > 1 else None,
    )


def _deployment(
    sheet: PriceSheet,
    offer: DedicatedOffer | GpuVmOffer,
    gpu: GpuSpec,
    gpus: int,
    precision: str,
    attention: AttentionLayout,
    what_if: bool,
    spec: ModelSpec,
    sized: _Sized,
    cost: OptionCost,
) -> Deployment:
    feature = "prefix caching" + (" + speculative decoding (what-if)" if what_if else "")
    nodes = (
        f"; {gpus // NODE_GPUS} nodes of {NODE_GPUS}, estimated as one tensor-parallel group (across nodes engines "
        "run pipeline parallel, over the network: expect less per user)"
        if gpus > NODE_GPUS
        else ""
    )
    return Deployment(
        provider=sheet.provider,
        offer=offer.id,
        kind="gpu_vm" if isinstance(offer, GpuVmOffer) else "dedicated",
        price_kind=_price_kind(offer),
        gpu=gpu.id,
        gpus_per_replica=gpus,
        precision=precision,
        attention=attention,
        feature=feature,
        what_if=what_if,
        model=spec.id,
        replicas=cost.replicas or 0,
        gpus=cost.gpus or 0,
        monthly=cost.monthly,
        currency=cost.currency,
        requests_per_s_per_replica=sized.capacity.requests_per_s,
        tokens_per_s_per_user=sized.tokens_per_s_per_user,
        ttft_ms=sized.ttft_ms,
        meets_target=sized.meets_target,
        evidence=sized.evidence + nodes,
        evidence_kind=sized.evidence_kind,
        record_id=sized.record.id,
        batch=round(sized.record.in_flight) if sized.record.in_flight else None,
        latency_note=sized.latency_note,
        cost=cost,
        latency_percentile=sized.percentile,
        ttft_percentiles_ms=sized.simulated.ttft_ms if sized.simulated is not None else None,
        tpot_percentiles_ms=sized.simulated.tpot_ms if sized.simulated is not None else None,
        requests_per_s_at_target=sized.rate_at_target,
        mean_batch_at_target=sized.simulated.mean_batch if sized.simulated is not None else None,
    )


def _fits_nowhere(search: _Search, tried: list[tuple[GpuSpec, int, str]]) -> str:
    """Why no offer holds the model, and what would: the roomiest setup tried (most weights it could hold), its
    shortfall, and what :func:`~calculator.capacity.memory.fit` says would fit."""
    spec = search.spec
    gpu, gpus, precision = max(tried, key=lambda t: t[0].memory_gb * t[1] / bytes_per_weight(t[2]))
    room = fit(spec, gpu, precision, search.context, gpus, default_kv_dtype(precision))  # with what would fit
    shown = sorted({p.upper() for _, _, p in tried})
    return (
        f"{spec.id} fits no GPU offer in the price sheets for one sequence of {search.context:,} tokens "
        f"(tried {', '.join(shown)}): the roomiest, {gpus}x {gpu.id} at {precision.upper()}, is short by "
        f"{room.shortfall_gb:.1f} GB per GPU; would fit: {'; or '.join(room.suggestions) or 'a GPU with more memory'}"
    )
