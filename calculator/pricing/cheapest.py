"""``offer: cheapest``: the GPU options the deployment search ranks first, priced as Deploy bills them.

A scenario that names no dedicated endpoint or GPU VM offer (``dedicated: {offer: cheapest}``) asks "what does
owning GPUs cost at best?". :func:`~calculator.pricing.resolve.resolve` answers before it prices anything:

- with ``self_hosting.record: auto`` and no estimate (the GPU options run the serverless model, sized from the
  best evidence), the deployment search (:func:`~calculator.pricing.deployments.find_deployments`) ranks every
  offer, GPU count per replica, precision and attention layout; for each option kind asked for, the cheapest
  configuration of that kind that meets the latency target becomes the option, with the setup it was sized
  from pinned on the choice (``estimate`` or ``record``), so Compare's bill is Deploy's row to the cent;
- with a sizing the user chose (a record, or an estimate setup), the cheapest offer of the kind that can run
  that setup, priced by the same resolution.

Without a target every configuration counts; when none meets it, the cheapest of the kind is used and the
pick says so. A record or estimate the user pinned is never replaced by the search's.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict

from calculator.catalog.catalogs import Catalogs
from calculator.catalog.prices import DedicatedOffer, GpuVmOffer
from calculator.errors import InputError
from calculator.pricing.deployments import Deployment, DeploymentSearch, find_deployments, model_choice
from calculator.pricing.same_model import model_names
from calculator.scenario.inputs import AUTO_RECORD, EstimateSetup
from calculator.scenario.model import DedicatedChoice, GpuVmChoice, Scenario

__all__ = ["OfferPick", "asks_cheapest", "picked_choice", "with_cheapest_offers"]

OwnedKind = Literal["dedicated", "gpu_vm"]
_WORDS = {"dedicated": "dedicated endpoint", "gpu_vm": "GPU VM"}
_OPTION = {"dedicated": "dedicated", "gpu_vm": "self_hosted"}


class OfferPick(BaseModel):
    """Which configuration ``offer: cheapest`` became for one option, and why."""

    model_config = ConfigDict(frozen=True)

    kind: OwnedKind
    provider: str
    offer: str
    label: str
    """The configuration in words: offer, GPUs per replica, precision, attention layout."""
    monthly: Decimal
    rank: int
    """Its place in the ranking the pick was made from (1 = the cheapest)."""
    of: int
    meets_target: bool
    reason: str
    deployment: Deployment | None = None
    """The deployment search's row, when the search made the pick."""


def asks_cheapest(scenario: Scenario) -> bool:
    return any(c is not None and c.cheapest for c in (scenario.dedicated, scenario.gpu_vm))


def picked_choice(d: Deployment) -> DedicatedChoice | GpuVmChoice:
    """The scenario choice that prices ``d`` as the search did: its offer, sized from its record or setup."""
    if d.evidence_kind == "measurement":
        sizing: dict[str, object] = {"record": d.record_id}
    else:
        setup = EstimateSetup(
            model=d.model,
            precision=d.precision,
            gpus_per_replica=d.gpus_per_replica,
            max_batch=d.batch,
            attention=d.attention,
        )
        sizing = {"estimate": setup}
    kind = DedicatedChoice if d.kind == "dedicated" else GpuVmChoice
    return kind.model_validate({"provider": d.provider, "offer": d.offer, **sizing})


def _searched(search: DeploymentSearch, kind: OwnedKind) -> OfferPick | None:
    rows = [d for d in search.deployments if d.kind == kind and not d.what_if]
    if not rows:
        return None
    meeting = [d for d in search.meeting if not d.what_if]
    ranked = meeting if meeting else [d for d in search.deployments if not d.what_if]
    mine = [d for d in ranked if d.kind == kind]
    chosen = mine[0] if mine else rows[0]
    ok = chosen.meets_target or search.target is None
    target = "meeting the latency target" if search.target is not None else "(no latency target)"
    rank = ranked.index(chosen) + 1 if chosen in ranked else len(ranked) + 1
    if ok:
        reason = (
            f"the cheapest {_WORDS[kind]} configuration {target}: #{rank} of {len(ranked)} the deployment search "
            f"ranks for {search.model}"
        )
    else:
        reason = f"no {_WORDS[kind]} configuration meets the latency target; the cheapest one of {search.model}"
    return OfferPick(
        kind=kind, provider=chosen.provider, offer=chosen.offer, label=chosen.label, monthly=chosen.monthly,
        rank=rank, of=len(ranked), meets_target=ok, reason=reason, deployment=chosen,
    )  # fmt: skip


def _record_gpu(scenario: Scenario, cat: Catalogs) -> str | None:
    """The GPU of the record the user sized from, when they named one."""
    from calculator.pricing.resolve import sizing_record, with_own_records

    if scenario.self_hosting.estimate is not None or scenario.self_hosting.record == AUTO_RECORD:
        return None
    try:
        return sizing_record(scenario, with_own_records(cat, scenario)).gpu
    except InputError:
        return None


def _for_pinned_sizing(scenario: Scenario, cat: Catalogs, kind: OwnedKind) -> OfferPick | None:
    """The cheapest offer of ``kind`` that runs the sizing the user chose, each priced by the one resolution."""
    from calculator.pricing.compare import owned_options
    from calculator.pricing.resolve import resolve

    priced: list[tuple[Decimal, str, str]] = []
    why: InputError | None = None  # what kept the first offer out, said when every offer is kept out
    wanted = DedicatedOffer if kind == "dedicated" else GpuVmOffer
    gpu = _record_gpu(scenario, cat)  # a measurement holds on its own GPU: offers of that GPU, when any sell it
    offers = [(sh, o) for sh, o in cat.prices.offers(kind) if isinstance(o, wanted)]
    if gpu is not None and any(o.gpu == gpu for _, o in offers):
        offers = [(sh, o) for sh, o in offers if o.gpu == gpu]
    for sheet, offer in offers:
        if isinstance(offer, GpuVmOffer) and offer.pricing == "spot":
            continue
        if offer.retired_on(scenario.price_date):
            continue
        choice = (DedicatedChoice if kind == "dedicated" else GpuVmChoice)(provider=sheet.provider, offer=offer.id)
        other = "gpu_vm" if kind == "dedicated" else "dedicated"
        probe = scenario.model_copy(update={kind: choice, other: None, "serverless": None})
        res = resolve(probe, cat, drop_unpriceable=True)
        cost = owned_options(res).get(_OPTION[kind])
        if cost is not None:
            priced.append((cost.monthly, sheet.provider, offer.id))
        elif why is None and res.dropped:
            why = res.dropped[0][1]
    if not priced:
        if why is not None and not why.field.startswith(kind):
            raise why  # the sizing itself cannot be met (a latency target no level meets): that, not the offers
        return None
    priced.sort()
    monthly, provider, offer_id = priced[0]
    sizing = "your record" if scenario.self_hosting.record != AUTO_RECORD else "your estimate setup"
    return OfferPick(
        kind=kind, provider=provider, offer=offer_id, label=f"{provider}/{offer_id}", monthly=monthly, rank=1,
        of=len(priced), meets_target=True,
        reason=f"the cheapest of {len(priced)} {_WORDS[kind]} offers that run {sizing}",
    )  # fmt: skip


_SEARCHES: dict[str, DeploymentSearch] = {}
_SEARCHES_KEPT = 32


def _search(scenario: Scenario, cat: Catalogs) -> DeploymentSearch:
    """The deployment search for ``scenario``, kept for the next call that would search the same: the serverless
    offer enters only through the model the GPU options run and its token factor (another API for the same
    model, or another closed model with the same substitute, searches the same configurations)."""
    spec, _ = model_choice(scenario, cat)
    factor = scenario.token_factor(*model_names(scenario, cat, spec.id))
    rest = scenario.model_copy(update={"serverless": None, "name": "-", "description": None, "prices_used": ()})
    records = ",".join(r.id for r in cat.records.records)
    key = "|".join(
        (str(id(cat.prices)), str(id(cat.gpus)), str(id(cat.models)), records, spec.id, str(factor),
         rest.model_dump_json())
    )  # fmt: skip
    found = _SEARCHES.get(key)
    if found is None:
        found = find_deployments(scenario, cat)
        if len(_SEARCHES) >= _SEARCHES_KEPT:
            _SEARCHES.pop(next(iter(_SEARCHES)))
        _SEARCHES[key] = found
    return found


def with_cheapest_offers(scenario: Scenario, cat: Catalogs) -> tuple[Scenario, tuple[OfferPick, ...]]:
    """``scenario`` with each ``offer: cheapest`` replaced by its pick (the scenario itself when none asks), and
    the picks. An option no configuration can serve is an :class:`InputError` naming it and why."""
    choices: tuple[tuple[OwnedKind, DedicatedChoice | GpuVmChoice | None], ...] = (
        ("dedicated", scenario.dedicated),
        ("gpu_vm", scenario.gpu_vm),
    )
    asked = [kind for kind, choice in choices if choice is not None and choice.cheapest]
    if not asked:
        return scenario, ()
    h = scenario.self_hosting
    pinned = h.estimate is not None or h.record != AUTO_RECORD
    search: DeploymentSearch | None = None
    if not pinned:
        try:
            search = _search(scenario, cat)
        except InputError as exc:
            if exc.field != "model":  # a date with no price, an unknown model named: that input's problem
                raise
            raise InputError(
                f"{asked[0]}.offer",
                f"'cheapest' runs the deployment search, which found none: {exc.problem.text()}",
                "an offer by name (provider and offer), or a model the GPU offers can hold",
                code="cheapest_none",
            ) from exc
    update: dict[str, object] = {}
    picks = []
    for kind in asked:
        pick = _searched(search, kind) if search is not None else _for_pinned_sizing(scenario, cat, kind)
        if pick is None:
            model = search.model if search is not None else "the sizing you chose"
            raise InputError(
                f"{kind}.offer",
                f"'cheapest' found no {_WORDS[kind]} offer that runs {model} on {scenario.price_date}",
                "an offer by name, or leave the option out",
                code="cheapest_none",
            )
        chosen = picked_choice(pick.deployment) if pick.deployment is not None else None
        if chosen is None:
            kind_cls = DedicatedChoice if kind == "dedicated" else GpuVmChoice
            chosen = kind_cls(provider=pick.provider, offer=pick.offer)
        update[kind] = chosen
        picks.append(pick)
    return scenario.model_copy(update=update), tuple(picks)
