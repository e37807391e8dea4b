"""``offer: cheapest``: the GPU options the deployment search ranks first, priced by Compare as Deploy bills them.

A scenario that names no dedicated endpoint or GPU VM offer (``dedicated: {offer: cheapest}``) asks "what does
owning GPUs cost at best?". The answer is the deployment search's (:func:`~calculator.planning.deployments.
find_deployments`): every offer, GPU count per replica, precision and attention layout, each sized from the
best evidence and billed as Compare bills. For each option kind asked for, the cheapest configuration of that
kind that meets the scenario's latency target becomes the option, with the setup it was sized from pinned on
the choice (``estimate`` or ``record``), so Compare's bill is Deploy's row to the cent. Without a target every
configuration counts; when none meets it, the cheapest of the kind is used and the pick says so.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from calculator.catalog.catalogs import Catalogs
from calculator.errors import InputError
from calculator.planning.deployments import Deployment, DeploymentSearch, find_deployments
from calculator.scenario.inputs import EstimateSetup
from calculator.scenario.model import DedicatedChoice, GpuVmChoice, Scenario

__all__ = ["OfferPick", "picked_choice", "with_cheapest_offers"]

OwnedKind = Literal["dedicated", "gpu_vm"]
_WORDS = {"dedicated": "dedicated endpoint", "gpu_vm": "GPU VM"}


class OfferPick(BaseModel):
    """Which configuration ``offer: cheapest`` became for one option, and why."""

    model_config = ConfigDict(frozen=True)

    kind: OwnedKind
    deployment: Deployment
    rank: int
    """Its place in the deployment search's ranking (1 = the cheapest configuration overall)."""
    of: int
    """Configurations ranked (those meeting the target, or all when none does)."""
    meets_target: bool
    reason: str


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


def _pick(search: DeploymentSearch, kind: OwnedKind) -> OfferPick | None:
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
    return OfferPick(kind=kind, deployment=chosen, rank=rank, of=len(ranked), meets_target=ok, reason=reason)


def with_cheapest_offers(scenario: Scenario, cat: Catalogs) -> tuple[Scenario, tuple[OfferPick, ...]]:
    """``scenario`` with each ``offer: cheapest`` replaced by the configuration the deployment search picks (the
    scenario itself when none asks), and what was picked. An option no configuration can serve is an
    :class:`InputError` naming it and why."""
    choices: tuple[tuple[OwnedKind, DedicatedChoice | GpuVmChoice | None], ...] = (
        ("dedicated", scenario.dedicated),
        ("gpu_vm", scenario.gpu_vm),
    )
    asked = [kind for kind, choice in choices if choice is not None and choice.cheapest]
    if not asked:
        return scenario, ()
    try:
        search = find_deployments(scenario, cat)
    except InputError as exc:
        raise InputError(
            f"{asked[0]}.offer",
            f"'cheapest' runs the deployment search, which found none: {exc.problem.text()}",
            "an offer by name (provider and offer), or a model the GPU offers can hold",
        ) from exc
    update: dict[str, object] = {}
    picks = []
    for kind in asked:
        pick = _pick(search, kind)
        if pick is None:
            raise InputError(
                f"{kind}.offer",
                f"'cheapest' found no {_WORDS[kind]} offer that holds {search.model} on {scenario.price_date}",
                "an offer by name, or leave the option out",
            )
        update[kind] = picked_choice(pick.deployment)
        picks.append(pick)
    return scenario.model_copy(update=update), tuple(picks)
