"""A scenario resolved once: the offers and price versions in force, and the capacity evidence sized.

Everything downstream (the monthly bill, break-even, the charts, the PDF, the load profile and the
hybrid plan) reads a :class:`ResolvedScenario` instead of looking offers, records and GPUs up again,
so one answer fits each model to each GPU once and every page prices the same setup.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from calculator.capacity.replica_setup import attention_layouts, replica_setup
from calculator.capacity.saturation import SeriesCapacity, describe, read_series, series_of
from calculator.capacity.sizing import (
    ReplicaCapacity,
    check_usable,
    estimate_record,
    replica_capacity,
)
from calculator.catalog.catalogs import Catalogs
from calculator.catalog.gpus import GpuSpec
from calculator.catalog.measurements import RecordCatalog, ThroughputRecord
from calculator.catalog.models import ModelSpec
from calculator.catalog.prices import (
    DedicatedOffer,
    GpuVmOffer,
    PriceSheet,
    ServerlessOffer,
    ServerlessPriceVersion,
    canonical_model,
)
from calculator.errors import InputError, Problem
from calculator.pricing.own_prices import with_own_prices
from calculator.pricing.same_model import GpuModelChoice, gpu_model_choice, measured_record, model_names
from calculator.scenario.inputs import AUTO_RECORD, LEGACY_RECORD, EstimateSetup, TurnShape
from calculator.scenario.model import Scenario

if TYPE_CHECKING:  # the search imports this module; only its pick's type is needed here
    from calculator.pricing.cheapest import OfferPick

__all__ = [
    "OPTION_LABELS",
    "OwnedSide",
    "ResolvedScenario",
    "ServerlessSide",
    "resolve",
    "sizing_capacity",
    "sizing_record",
    "with_model_params",
    "with_own_records",
]

OPTION_LABELS = {"serverless": "Serverless API", "dedicated": "Dedicated endpoint", "self_hosted": "Self-hosted GPUs"}
Owned = Literal["dedicated", "self_hosted"]
_CHOICE = {"serverless": "serverless", "dedicated": "dedicated", "self_hosted": "gpu_vm"}


@dataclass(frozen=True)
class ServerlessSide:
    """The serverless offer and the price version in force, with the turn as its tokenizer counts it."""

    sheet: PriceSheet
    offer: ServerlessOffer
    version: ServerlessPriceVersion
    shape: TurnShape


@dataclass(frozen=True)
class OwnedSide:
    """A GPU offer (dedicated endpoint or GPU VM), the record it is sized from, and a replica's capacity."""

    kind: Owned
    sheet: PriceSheet
    offer: DedicatedOffer | GpuVmOffer
    record: ThroughputRecord
    """The measured (or roofline-estimated) setup one engine replica runs."""
    capacity: ReplicaCapacity
    shape: TurnShape
    series: SeriesCapacity | None = None
    """How the measured record was read from its run's load levels (saturated, or at least); None for an estimate."""
    setup: EstimateSetup | None = None
    """The roofline estimate's replica when the side is sized from one (the scenario's or ``auto``'s)."""

    @property
    def replica_gpus(self) -> int:
        return self.record.replica_gpus

    @property
    def model(self) -> str | None:
        if isinstance(self.offer, DedicatedOffer) and self.offer.model:
            return self.offer.model
        return self.record.model


@dataclass(frozen=True)
class ResolvedScenario:
    scenario: Scenario
    catalogs: Catalogs
    as_of: dt.date
    serverless: ServerlessSide | None
    dedicated: OwnedSide | None
    self_hosted: OwnedSide | None
    dropped: tuple[tuple[str, InputError], ...] = ()
    """Options (by their scenario field: serverless, dedicated, gpu_vm) that cannot be priced as set, and why."""
    warnings: tuple[Problem, ...] = ()
    """What the answer should be read with (different models, best-case hit rate), for each front end to say."""
    gpu_model: GpuModelChoice | None = None
    """What ``self_hosting.record: auto`` has the GPU options run and why; None when the scenario names a
    record or an estimate itself."""
    picks: tuple[OfferPick, ...] = ()
    """What each ``offer: cheapest`` became (:mod:`calculator.pricing.cheapest`); ``scenario`` holds the picks."""

    def owned(self, kind: Owned) -> OwnedSide | None:
        return self.dedicated if kind == "dedicated" else self.self_hosted

    def with_scenario(self, scenario: Scenario) -> ResolvedScenario:
        """The same catalogues resolved for a changed scenario (a sweep point, another shape).

        What :func:`resolve` would give, without looking up again what the change cannot move: a new
        workload sizes each GPU option's replica again on the same offers and records, and traffic or
        hosting terms that size nothing keep the sides as they are. A sweep prices twenty such points.
        """
        if self.picks:  # a sweep keeps the configurations 'cheapest' picked: it prices them at other points
            kept: dict[str, object] = {p.kind: getattr(self.scenario, p.kind) for p in self.picks}
            asked = {k: v for k, v in kept.items() if (c := getattr(scenario, k)) is not None and c.cheapest}
            scenario = scenario.model_copy(update=asked)
        if self.dropped or not _same_lookups(self, scenario):
            return resolve(scenario, self.catalogs, drop_unpriceable=bool(self.dropped))
        if scenario.workload == self.scenario.workload:
            return replace(self, scenario=scenario)
        serverless = self.serverless
        if serverless is not None:
            factor = scenario.token_factor(serverless.offer.model, serverless.offer.base_model)
            serverless = replace(serverless, shape=scenario.workload.scaled(factor))
        # the model choice reads only what _same_lookups held equal: this resolution's stands
        names = self.gpu_model.names if self.gpu_model is not None else ()
        sides = {
            kind: None if side is None else _resized(side, scenario, self.catalogs, names)
            for kind, side in (("dedicated", self.dedicated), ("self_hosted", self.self_hosted))
        }
        resolved = replace(self, scenario=scenario, serverless=serverless)
        resolved = replace(resolved, dedicated=sides["dedicated"], self_hosted=sides["self_hosted"])
        return replace(resolved, warnings=tuple(_warnings(resolved)))

    @property
    def options(self) -> tuple[str, ...]:
        found = {"serverless": self.serverless, "dedicated": self.dedicated, "self_hosted": self.self_hosted}
        return tuple(k for k, v in found.items() if v is not None)


def with_own_records(cat: Catalogs, scenario: Scenario) -> Catalogs:
    """The catalogues with the scenario's own measurement records first (one with a bundled id replaces it)."""
    own = scenario.evidence.records
    if not own:
        return cat
    ids = {r.id for r in own}
    records = RecordCatalog(records=own + tuple(r for r in cat.records.records if r.id not in ids))
    return replace(cat, records=records)


def with_model_params(record: ThroughputRecord, cat: Catalogs) -> ThroughputRecord:
    """The record with its model spec's parameter counts where it does not state them.

    Benchmark tools' result files never say them, and sizing needs them; the spec (``models/``) does.
    """
    if record.params_total_b is not None and record.params_active_b is not None:
        return record
    spec = cat.models.find(record.model) if record.model else None
    if spec is None:
        return record
    return record.model_copy(
        update={
            "params_total_b": record.params_total_b or spec.params_total_b,
            "params_active_b": record.params_active_b or spec.params_active_b,
        }
    )


def sizing_record(scenario: Scenario, cat: Catalogs) -> ThroughputRecord:
    """The measured record the scenario sizes GPUs from: the level of the named record's run that is its capacity
    (:func:`sizing_capacity`), not necessarily the named level itself."""
    return sizing_capacity(scenario, cat).record


def sizing_capacity(scenario: Scenario, cat: Catalogs) -> SeriesCapacity:
    """The capacity of the run the scenario's record belongs to: the busiest level meeting its latency target,
    or without one the run's saturation point; labelled "at least" when that level kept up with its load.

    The presets name the SGLang 4x H200 rate-4 level, which served what it was offered (4.04 of 4 req/s): the
    run's rate-8 level, which served 6.92 of 8, is where that setup saturated, and the presets size from it.
    """
    hosting = scenario.self_hosting
    return read_series(_series(scenario, cat, cat.records.get(hosting.record)), hosting.latency_target)


def _series(scenario: Scenario, cat: Catalogs, record: ThroughputRecord) -> tuple[ThroughputRecord, ...]:
    """``record``'s run among the catalogue's records: the user's own levels read with their own, the published
    with the published (a user's run is never completed with a published one of the same setup, or the reverse)."""
    own = {r.id for r in scenario.evidence.records}
    pool = [r for r in cat.records.records if (r.id in own) == (record.id in own)]
    return series_of(record, pool)


def _owned(kind: Owned, scenario: Scenario, cat: Catalogs, measured: ThroughputRecord | None) -> OwnedSide | None:
    field = "dedicated" if kind == "dedicated" else "gpu_vm"
    choice = scenario.dedicated if kind == "dedicated" else scenario.gpu_vm
    if choice is None:
        return None
    if choice.cheapest:
        raise InputError(
            f"{field}.offer",
            "'cheapest' is picked by the deployment search, which runs before pricing (the command line and the app "
            "run it; a script calls calculator.planning.with_cheapest_offers first)",
            code="cheapest_unresolved",
        )
    sheet, offer = cat.prices.offer(choice.provider, choice.offer, field)
    assert isinstance(offer, DedicatedOffer | GpuVmOffer)
    offer.version_at(scenario.price_date)
    own = choice.estimate is not None or choice.record is not None
    setup = choice.estimate if own else scenario.self_hosting.estimate
    shape = scenario.workload
    names: tuple[str, ...] = (setup.model,) if setup is not None else ()
    if own and setup is not None:  # a picked setup of the model auto chose goes by that model's names too
        names = model_names(scenario, cat, setup.model)
    if own and choice.record is not None:
        measured = _sizing_from(scenario, cat, choice.record)
    elif setup is None and scenario.self_hosting.record == AUTO_RECORD:
        measured, setup, names = _same_model_sizing(scenario, cat, offer)
    if setup is not None:
        shape = shape.scaled(scenario.token_factor(*names))
        record = estimate_record(
            setup,
            cat.models.get(setup.model),
            cat.gpus.get(offer.gpu),
            float(shape.input_tokens),
            float(shape.prefix_share),
            float(shape.hit_rate),
            float(shape.output_tokens),
            attention=setup.attention,
        )
    else:
        record = measured if measured is not None else sizing_record(scenario, cat)
        shape = shape.scaled(scenario.token_factor(record.model, *names))
    record = with_model_params(record, cat)
    check_usable(record)
    return _sized(kind, scenario, cat, sheet, offer, record, shape, setup)


def _same_model_sizing(
    scenario: Scenario, cat: Catalogs, offer: DedicatedOffer | GpuVmOffer
) -> tuple[ThroughputRecord | None, EstimateSetup | None, tuple[str, ...]]:
    """``record: auto`` on ``offer``: (a measured record, or the estimate's replica, and the model's names).

    The model is :func:`~calculator.pricing.same_model.gpu_model_choice`'s; a measurement of it sizes the
    replicas when the records hold one (the latency target picks its level as for a named record), else
    the roofline estimates the fewest GPUs of the offer's type that hold it. With no open model to run,
    the record every scenario used before ``auto``."""
    choice = gpu_model_choice(scenario, cat)
    assert choice is not None
    if choice.spec is None:
        return _sizing_from(scenario, cat, LEGACY_RECORD), None, ()
    gpu = cat.gpus.get(offer.gpu)
    shape = scenario.workload.scaled(scenario.token_factor(*choice.names))
    context = max(int(shape.input_tokens + shape.output_tokens), 1)
    found = measured_record(choice.spec, cat, scenario.evidence.records, gpu, context)
    if found is not None:
        return _sizing_from(scenario, cat, found.id), None, choice.names
    return None, _faster_layout(replica_setup(choice.spec, gpu, context), choice.spec, gpu, shape), choice.names


def _faster_layout(setup: EstimateSetup, spec: ModelSpec, gpu: GpuSpec, shape: TurnShape) -> EstimateSetup:
    """``setup`` in the attention layout whose estimate serves more requests/s for the turn ``shape``; tensor
    parallel on a tie, on one GPU, and for a model with one layout. An engineer serving DeepSeek-V3 or Kimi K2
    on a node turns data-parallel attention on for throughput (the latent is no longer copied on each GPU,
    so the batch grows), and deploy ranks both: the estimate Compare prices should not be the slower one."""
    layouts = attention_layouts(spec)
    if setup.gpus_per_replica == 1 or len(layouts) == 1:
        return setup
    best, most = setup, -1.0
    for layout in layouts:
        candidate = setup.model_copy(update={"attention": layout})
        try:
            served = estimate_record(
                candidate, spec, gpu, float(shape.input_tokens), float(shape.prefix_share), float(shape.hit_rate),
                float(shape.output_tokens), attention=layout,
            ).requests_per_s  # fmt: skip
        except InputError:  # the layout cannot hold one sequence of the turn
            continue
        if served > most:
            best, most = candidate, served
    return best


def _sizing_from(scenario: Scenario, cat: Catalogs, record_id: str) -> ThroughputRecord:
    """:func:`sizing_record` for the scenario as if it named ``record_id``."""
    hosting = scenario.self_hosting.model_copy(update={"record": record_id})
    return sizing_record(scenario.model_copy(update={"self_hosting": hosting}), cat)


def _sized(
    kind: Owned,
    scenario: Scenario,
    cat: Catalogs,
    sheet: PriceSheet,
    offer: DedicatedOffer | GpuVmOffer,
    record: ThroughputRecord,
    shape: TurnShape,
    setup: EstimateSetup | None = None,
    series: SeriesCapacity | None = None,
) -> OwnedSide:
    """The side with a replica of ``record``'s setup sized for the turn ``shape`` (``setup``: the estimate's;
    ``series``: the record's run as already read, which no workload moves)."""
    assert record.gpu is not None
    capacity = replica_capacity(
        record,
        cat.gpus.get(record.gpu),
        float(shape.input_tokens),
        float(shape.prefix_share),
        float(shape.hit_rate),
        float(shape.output_tokens),
        target_gpu=cat.gpus.get(offer.gpu),
        # a data-parallel-attention estimate is already of this turn and layout: the architecture's conversion
        # would re-fit its batch with the latent copied on every GPU (tensor parallel), so it is left out
        model=cat.models.find(record.model) if record.model and not (setup and setup.attention == "dp") else None,
    )
    if setup is not None:
        capacity = capacity.model_copy(update={"note": f"{record.notes} (roofline, not a measurement)"})
    else:
        if series is None or series.record.id != record.id:
            series = describe(record, _series(scenario, cat, record), scenario.self_hosting.latency_target)
        note = series.sentence
        if record.publisher:  # the bundled library: who published it and where, as deploy says it
            note += f" Measured (published by {record.publisher}: {record.source.url or record.source.document})."
        if series.bound == "at_least":
            # The target utilisation is headroom below a replica's limit, and billing applies it to every
            # option alike (one rule). Below a level that kept up with its load the limit is unknown, so the
            # derating still applies but is said to double-count: sizing from a saturated level is the fix.
            note += " The target utilisation derates this lower bound again: the replicas are likely more than needed."
        capacity = capacity.model_copy(update={"note": f"{note} Sizing: {capacity.note}", "bound": series.bound})
    return OwnedSide(kind, sheet, offer, record, capacity, shape, series, setup)


def _resized(side: OwnedSide, scenario: Scenario, cat: Catalogs, names: tuple[str, ...]) -> OwnedSide:
    """``side`` for the scenario's workload: a measured record stays (its choice reads no workload), a
    roofline estimate is made again for the new turn. ``names``: every name its model choice goes by."""
    if side.setup is not None:
        found = _owned(side.kind, scenario, cat, None)
        assert found is not None
        return found
    shape = scenario.workload.scaled(scenario.token_factor(side.record.model, *names))
    return _sized(side.kind, scenario, cat, side.sheet, side.offer, side.record, shape, series=side.series)


_SIZING = ("record", "model", "estimate", "latency_target")
"""The hosting terms :func:`resolve` reads; the others (utilisation, spares, the engineer) only price."""


def _same_lookups(res: ResolvedScenario, scenario: Scenario) -> bool:
    """Whether ``scenario`` chooses the same offers, price date, records and token factors ``res`` resolved."""
    old = res.scenario
    same = (
        scenario.price_date == res.as_of
        and scenario.serverless == old.serverless
        and scenario.dedicated == old.dedicated
        and scenario.gpu_vm == old.gpu_vm
        and scenario.token_factors == old.token_factors
        and scenario.evidence.records == old.evidence.records
        and scenario.own_prices == old.own_prices
    )
    return same and all(getattr(scenario.self_hosting, f) == getattr(old.self_hosting, f) for f in _SIZING)


def _serverless(scenario: Scenario, cat: Catalogs) -> ServerlessSide | None:
    if scenario.serverless is None:
        return None
    sheet, offer = cat.prices.serverless(scenario.serverless.provider, scenario.serverless.model)
    version = offer.version_at(scenario.price_date)
    shape = scenario.workload.scaled(scenario.token_factor(offer.model, offer.base_model))
    return ServerlessSide(sheet, offer, version, shape)


def resolve(scenario: Scenario, cat: Catalogs, *, drop_unpriceable: bool = False) -> ResolvedScenario:
    """Look up every chosen offer and its price version, and size the GPU options, once.

    ``drop_unpriceable``: an offer with no price version on the price date, or a GPU setup that cannot
    hold the model, is an answer about that option, not a reason to refuse the others: it is left out
    and listed in ``dropped``. Otherwise the first such problem is raised.
    """
    dropped: list[tuple[str, InputError]] = []
    picks: tuple[OfferPick, ...] = ()
    if any(c is not None and c.cheapest for c in (scenario.dedicated, scenario.gpu_vm)):
        from calculator.pricing.cheapest import with_cheapest_offers

        try:
            scenario, picks = with_cheapest_offers(scenario, cat)
        except InputError as exc:
            if not drop_unpriceable:
                raise
            asked = [f for f in ("dedicated", "gpu_vm") if (c := getattr(scenario, f)) is not None and c.cheapest]
            dropped += [(field, exc) for field in asked]
            scenario = scenario.model_copy(update=dict.fromkeys(asked))
    cat = with_own_prices(with_own_records(cat, scenario), scenario)
    measured: ThroughputRecord | None = None
    sides: dict[str, ServerlessSide | OwnedSide | None] = {}
    for option in ("serverless", "dedicated", "self_hosted"):
        try:
            if option == "serverless":
                sides[option] = _serverless(scenario, cat)
                continue
            named = scenario.self_hosting.estimate is None and scenario.self_hosting.record != AUTO_RECORD
            if getattr(scenario, _CHOICE[option]) is not None and named:
                measured = measured or sizing_record(scenario, cat)
            sides[option] = _owned("dedicated" if option == "dedicated" else "self_hosted", scenario, cat, measured)
        except InputError as exc:
            if not drop_unpriceable:
                raise
            dropped.append((_CHOICE[option], exc))
            sides[option] = None
            scenario = scenario.model_copy(update={_CHOICE[option]: None})
    serverless = sides["serverless"]
    dedicated, self_hosted = sides["dedicated"], sides["self_hosted"]
    assert serverless is None or isinstance(serverless, ServerlessSide)
    assert dedicated is None or isinstance(dedicated, OwnedSide)
    assert self_hosted is None or isinstance(self_hosted, OwnedSide)
    resolved = ResolvedScenario(
        scenario=scenario,
        catalogs=cat,
        as_of=scenario.price_date,
        serverless=serverless,
        dedicated=dedicated,
        self_hosted=self_hosted,
        dropped=tuple(dropped),
        gpu_model=_gpu_model(scenario, cat, dropped),
        picks=picks,
    )
    return replace(resolved, warnings=tuple(_warnings(resolved)))


def _gpu_model(scenario: Scenario, cat: Catalogs, dropped: list[tuple[str, InputError]]) -> GpuModelChoice | None:
    try:
        return gpu_model_choice(scenario, cat)
    except InputError:  # an unknown self_hosting.model: the GPU options were dropped for it already
        if not dropped:
            raise
        return None


def _warnings(res: ResolvedScenario) -> list[Problem]:
    scenario = res.scenario
    warnings: list[Problem] = []

    def warn(field: str, message: str, code: str) -> None:
        warnings.append(Problem(field, message, severity="warning", code=code))

    models: dict[str, str] = {}
    if res.serverless:
        models["serverless"] = res.serverless.offer.model
    for side in (res.dedicated, res.self_hosted):
        if side is not None and side.model:
            models[side.kind] = side.model
    canon = {k: _model_key(res, k, v) for k, v in models.items()}
    if len(set(canon.values())) > 1:
        listing = "; ".join(f"{OPTION_LABELS[k]} runs {v}" for k, v in models.items())
        warn(
            "models",
            f"The options run different models ({listing}): quality differs too, not only cost.",
            "different_models",
        )
        scaled = {k: scenario.token_factor(v) for k, v in models.items() if scenario.token_factor(v) != 1}
        if scaled:
            listing = "; ".join(f"{OPTION_LABELS[k]} x{float(f):.2f}" for k, f in scaled.items())
            warn("token_factors", f"Token counts scaled for other tokenizers: {listing}.", "tokenizer_scaled")
        else:
            warn(
                "token_factors",
                "The same text is often 10 to 30% more or fewer tokens under another model's tokenizer.",
                "tokenizer_factors",
            )
    owned = res.dedicated or res.self_hosted
    if res.serverless and not res.serverless.offer.open_weights and owned is not None:
        # the front ends add how to choose another (their ADVICE for closed_model)
        whose = (
            "the default throughput record, not a choice of yours"
            if res.gpu_model is not None and res.gpu_model.chosen == "default"
            else "your choice of substitute"
        )
        warn(
            "serverless.model",
            f"{res.serverless.offer.model} is a closed model: it cannot be self-hosted, so the GPU options "
            f"price a different (open) model, {owned.model or 'not named'} ({whose}).",
            "closed_model",
        )
    warnings.extend(_same_model_notes(res))
    if res.serverless and scenario.workload.prefix_share > 0 and res.serverless.version.prices.cached_input is None:
        warn(
            "serverless",
            f"{res.serverless.offer.model} on {res.serverless.sheet.name} bills cached input at the full input "
            "price: the repeated prompt start saves nothing on this API (it still saves prefill on your own GPUs).",
            "no_cache_discount",
        )
    if scenario.workload.hit_rate == 1 and scenario.workload.prefix_share > 0:
        warn(
            "workload.hit_rate",
            "Hit rate 1 is the best case, not a measured rate: caches evict and requests routed to a replica "
            "without the prefix miss.",
            "best_case_hit_rate",
        )
    return warnings


def _model_key(res: ResolvedScenario, kind: str, name: str) -> str:
    """What two options' models are compared by: the spec ``record: auto`` runs for the serverless model
    counts as that model (named in its own note), else the spec a name finds, else the reduced name."""
    choice = res.gpu_model
    spec = choice.spec if choice is not None and choice.stands_for else None
    if kind != "serverless" and spec is not None and spec.id == name and res.serverless is not None:
        return _model_key(res, "serverless", res.serverless.offer.model)
    offer = res.serverless.offer if kind == "serverless" and res.serverless else None
    for candidate in (offer.base_model if offer else None, name):
        found = res.catalogs.models.find(candidate) if candidate else None
        if found is not None:
            return found.id
    return canonical_model(name)


def _same_model_notes(res: ResolvedScenario) -> list[Problem]:
    """What ``record: auto`` chose, in words: the nearest spec it runs, the estimate it sized from, the
    record it fell back to. Each front end shows them with the other warnings."""
    choice, notes = res.gpu_model, []
    sides = [s for s in (res.dedicated, res.self_hosted) if s is not None]
    if choice is None or not sides:
        return []
    if choice.spec is not None and choice.stands_for and not choice.exact:
        notes.append(
            Problem(
                "self_hosting.model",
                f"No model spec for {choice.stands_for}: the GPU options run {choice.spec.label}, its nearest "
                "spec (a point release keeps the architecture as a rule).",
                severity="warning",
                code="nearest_model_spec",
            )
        )
    if choice.chosen == "default" and not (res.serverless and not res.serverless.offer.open_weights):
        notes.append(
            Problem(
                "self_hosting.model",
                f"The GPU options cannot run the serverless model: {choice.reason}. They are sized from the "
                f"default record {LEGACY_RECORD} instead.",
                severity="warning",
                code="no_same_model",
            )
        )
    for side in sides:
        if side.setup is not None:
            setup = side.setup
            notes.append(
                Problem(
                    "self_hosting.record",
                    f"{OPTION_LABELS[side.kind]}: no measurement of {setup.model} on {side.offer.gpu} in the records, "
                    f"so a roofline estimate sizes it ({setup.precision.upper()}, {setup.gpus_per_replica} GPU(s) per "
                    "replica, the fewest that hold the model"
                    + (
                        ", data-parallel attention, which serves more here than tensor parallel"
                        if setup.attention == "dp"
                        else ""
                    )
                    + "): an estimate, not a measurement.",
                    severity="warning",
                    code="estimated_capacity",
                )
            )
    return notes
