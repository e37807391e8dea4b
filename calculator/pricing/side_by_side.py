"""Several serverless offers priced in one scenario: "which API is cheapest for this turn".

The scenario's own serverless offer comes first; each other one is priced in the same scenario (the same turn,
traffic and GPU options), so its month, its no-reuse and reused-prefix turn and its break-evens with the owned
options read as the first one's do. Own per-token prices belong to the scenario's own offer: the others are
priced as their sheets list them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from calculator.catalog.catalogs import Catalogs
from calculator.catalog.prices import canonical_model
from calculator.pricing.compare import Comparison, Crossing, compare
from calculator.pricing.option import OptionCost

__all__ = ["ServerlessRow", "serverless_side_by_side"]


@dataclass(frozen=True)
class ServerlessRow:
    """One serverless offer priced in the scenario: its option, its comparison, and where it crosses the GPUs."""

    option: str
    """``serverless`` for the scenario's own choice, ``serverless:PROVIDER/OFFER`` for each other one."""
    cost: OptionCost
    result: Comparison
    same_model: bool
    """Whether it serves the scenario's own serverless model (another model is the user's explicit choice)."""

    @property
    def crossings(self) -> list[Crossing]:
        return [c for c in self.result.crossings if "serverless" in (c.a, c.b)]


def serverless_side_by_side(
    result: Comparison, catalogs: Catalogs, others: Iterable[tuple[str, str]]
) -> list[ServerlessRow]:
    """``result``'s serverless offer and each of ``others`` (provider, model or offer id), in that order; an
    offer already listed is not priced twice."""
    first = result.option("serverless")
    scenario = result.scenario
    if first is None or scenario.serverless is None:
        return []
    model = canonical_model(first.model or "")
    rows = [ServerlessRow("serverless", first, result, True)]
    own = scenario.own_prices
    if own is not None:
        own = own.model_copy(update={"serverless": None, "serverless_long_context": (), "serverless_discount": None})
    seen = {(first.provider, first.offer)}
    for provider, name in others:
        sheet, offer = catalogs.prices.serverless(provider, name)
        if (sheet.provider, offer.id) in seen:
            continue
        seen.add((sheet.provider, offer.id))
        choice = scenario.serverless.model_copy(update={"provider": sheet.provider, "model": offer.id})
        other = compare(scenario.model_copy(update={"serverless": choice, "own_prices": own}), catalogs)
        found = other.option("serverless")
        if found is not None:
            same = canonical_model(found.model or "") == model
            rows.append(ServerlessRow(f"serverless:{found.provider}/{found.offer}", found, other, same))
    return rows
