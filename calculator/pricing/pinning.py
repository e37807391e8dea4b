"""Scenarios pinned to their prices: what a saved estimate was priced with, and what changed since.

Saving a scenario records, per option, the price version it used and the monthly cost then.
Reopening it says "priced with the sheets of D; with today's prices it costs X (Y% more or less)"
and lists each price that changed, so last quarter's estimate can be explained, not just redone.
An offer retired since is one of those changes: it is named with its successor and left out of
today's prices (it cannot be bought today), not a reason to refuse the rest.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ConfigDict

from calculator.catalog.prices import DedicatedOffer, GpuVmOffer, ServerlessOffer
from calculator.errors import InputError
from calculator.pricing.compare import Catalogs, Comparison, compare
from calculator.scenario.model import PinnedPrice, Scenario

__all__ = ["PriceChange", "Repricing", "RetiredSince", "pin_prices", "reprice"]

_SCENARIO_FIELD = {"serverless": "serverless", "dedicated": "dedicated", "self_hosted": "gpu_vm"}


def _figures(offer: Any, effective: dt.date) -> dict[str, Decimal]:
    version = offer.version_at(effective)
    if isinstance(offer, ServerlessOffer):
        p = version.prices
        out = {"input": p.input, "output": p.output}
        if p.cached_input is not None:
            out["cached_input"] = p.cached_input
        for ttl, price in (p.cache_write or {}).items():
            out[f"cache_write_{ttl}"] = price
        if p.cache_storage_per_hour is not None:
            out["cache_storage_per_hour"] = p.cache_storage_per_hour
        return out
    if isinstance(offer, DedicatedOffer) and version.per_replica_hour is not None:
        return {"per_replica_hour": version.per_replica_hour}
    assert isinstance(offer, DedicatedOffer | GpuVmOffer)
    assert version.per_gpu_hour is not None
    return {"per_gpu_hour": version.per_gpu_hour}


def _offer(cat: Catalogs, option: str, provider: str, offer_id: str) -> Any:
    kind = {"serverless": "serverless", "dedicated": "dedicated", "self_hosted": "gpu_vm"}[option]
    return cat.prices.offer(provider, offer_id, kind)[1]


def pin_prices(scenario: Scenario, cat: Catalogs, result: Comparison | None = None) -> Scenario:
    """The scenario with its price date fixed and each option's price version recorded."""
    result = result or compare(scenario, cat)
    pins = []
    for option in result.options:
        ref = option.prices[0]
        offer = _offer(cat, option.option, option.provider, option.offer)
        pins.append(
            PinnedPrice(
                option=option.option,
                provider=option.provider,
                offer=option.offer,
                effective=ref.effective,
                currency=ref.currency,
                prices=_figures(offer, ref.effective),
                monthly=option.monthly,
            )
        )
    return scenario.model_copy(update={"as_of": result.as_of, "prices_used": tuple(pins)})


class PriceChange(BaseModel):
    model_config = ConfigDict(frozen=True)

    option: str
    provider: str
    offer: str
    field: str
    before: Decimal | None
    after: Decimal | None
    effective_before: dt.date
    effective_after: dt.date

    @property
    def change_share(self) -> float | None:
        if self.before in (None, 0) or self.after is None:
            return None
        return float(self.after / self.before - 1)


class RetiredSince(BaseModel):
    """An offer a saved scenario used that is no longer sold today."""

    model_config = ConfigDict(frozen=True)

    option: str
    provider: str
    offer: str
    date: dt.date
    """The first day it was no longer sold."""
    successor: str
    """Its successor as the sheet names it (``successor: X``), or empty when the provider names none."""
    effective_before: dt.date


class Repricing(BaseModel):
    """A pinned scenario against today's sheets."""

    model_config = ConfigDict(frozen=True)

    priced_on: dt.date
    today: dt.date
    monthly_then: dict[str, Decimal]
    monthly_now: dict[str, Decimal]
    changes: tuple[PriceChange, ...]
    retired: tuple[RetiredSince, ...] = ()
    """Offers retired since the scenario was saved: not priced today."""


def reprice(scenario: Scenario, cat: Catalogs, today: dt.date | None = None) -> Repricing:
    """Compare a pinned scenario's saved prices and costs with today's."""
    if not scenario.prices_used or scenario.as_of is None:
        raise InputError("prices_used", "this scenario was not saved with its prices; save it again to pin them")
    today = today or dt.date.today()
    changes = []
    retired = []
    for pin in scenario.prices_used:
        offer = _offer(cat, pin.option, pin.provider, pin.offer)
        if offer.retired is not None and offer.retired_on(today):
            retired.append(
                RetiredSince(
                    option=pin.option,
                    provider=pin.provider,
                    offer=pin.offer,
                    date=offer.retired.date,
                    successor=offer.retired.successor_text,
                    effective_before=pin.effective,
                )
            )
            continue
        current = offer.version_at(today)
        figures = _figures(offer, today)
        for field in sorted(set(pin.prices) | set(figures)):
            before, after = pin.prices.get(field), figures.get(field)
            if before != after:
                changes.append(
                    PriceChange(
                        option=pin.option,
                        provider=pin.provider,
                        offer=pin.offer,
                        field=field,
                        before=before,
                        after=after,
                        effective_before=pin.effective,
                        effective_after=current.effective,
                    )
                )
    still_sold = scenario.model_copy(update={"as_of": today, **{_SCENARIO_FIELD[r.option]: None for r in retired}})
    sold_now = still_sold.serverless or still_sold.dedicated or still_sold.gpu_vm
    now = compare(still_sold, cat).options if sold_now else ()
    return Repricing(
        priced_on=scenario.as_of,
        today=today,
        monthly_then={p.option: p.monthly for p in scenario.prices_used},
        monthly_now={o.option: o.monthly for o in now},
        changes=tuple(changes),
        retired=tuple(retired),
    )
