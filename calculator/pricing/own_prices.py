"""The scenario's own prices put in place of the listed ones, so every figure downstream uses them.

:func:`with_own_prices` gives the catalogues with each chosen offer's price versions replaced by one version
holding the user's price (or the listed price less the user's discount), in force on the scenario's price
date and cited as the user's (:data:`OWN_SOURCE`), never as a sheet version. The offer keeps everything else
(model, caching rules, GPUs, billing granularity), so the turn, the bill for owned GPUs and the break-evens
read it as any offer. Own prices are in the scenario's currency and are converted to the sheet's here, so the
usual conversion gives them back.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from typing import Any, TypeVar

from pydantic import BaseModel

from calculator.catalog.catalogs import Catalogs
from calculator.catalog.prices import (
    DedicatedOffer,
    DedicatedPriceVersion,
    GpuHourPriceVersion,
    GpuVmOffer,
    LongContextTier,
    PriceCatalog,
    PriceSheet,
    ServerlessOffer,
    ServerlessPriceVersion,
    Source,
    TokenPrices,
)
from calculator.scenario.model import Scenario
from calculator.scenario.own_prices import OWN_SOURCE, OwnPrices

__all__ = ["with_own_prices"]

_QUANTUM = Decimal("0.000001")
_M = TypeVar("_M", bound=BaseModel)


def _source(own: OwnPrices, scenario: Scenario, listed: Source | None, discount: Decimal | None) -> Source:
    document = f"{OWN_SOURCE}: {own.name}"
    note = "Entered by the user; not a sheet version."
    if listed is not None and discount is not None:
        document += f", {discount.normalize():f}% off the listed price"
        note += f" The listed price: {listed.label}."
    return Source(document=document, read=own.date or scenario.price_date, note=note)


def _money(value: Decimal, scenario: Scenario, sheet: PriceSheet) -> Decimal:
    """An own price (scenario currency) in the sheet's currency, unrounded: the conversion back to the scenario's
    currency then gives the user's figure to the cent (1.40 yen is not a whole number of millionths of a dollar)."""
    return scenario.fx.convert(value, scenario.currency, sheet.currency)


def _built(cls: type[_M], data: dict[str, Any], exact: bool) -> _M:
    """``cls`` from ``data``: validated, or, for converted prices with more places than a sheet keeps, built
    from values :class:`~calculator.scenario.own_prices.OwnPrices` already checked."""
    return cls.model_validate(data) if exact else cls.model_construct(**data)


def _scaled(prices: dict[str, Any], factor: Decimal, money: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in prices.items():
        if isinstance(value, dict):
            out[key] = {k: money(v * factor) for k, v in value.items()}
        elif isinstance(value, Decimal) and key != "above_tokens":
            out[key] = money(value * factor)
        else:
            out[key] = value
    return out


def _serverless(own: OwnPrices, scenario: Scenario, sheet: PriceSheet, offer: ServerlessOffer) -> ServerlessOffer:
    as_of = scenario.price_date

    def money(v: Decimal) -> Decimal:
        return _money(v, scenario, sheet)

    if own.serverless is not None:
        exact = scenario.currency == sheet.currency
        prices = _built(TokenPrices, _scaled(own.serverless.model_dump(), Decimal(1), money), exact)
        tiers = tuple(
            _built(LongContextTier, _scaled(t.model_dump(), Decimal(1), money), exact)
            for t in own.serverless_long_context
        )
        version = _built(
            ServerlessPriceVersion,
            {
                "effective": as_of,
                "source": _source(own, scenario, None, None),
                "note": None,
                "prices": prices,
                "long_context": tiers,
                "batch_discount": None,
                "batch_applies_to": ("input", "output"),
            },
            exact,
        )
    else:
        assert own.serverless_discount is not None
        listed = offer.version_at(as_of)  # a discount on an offer no longer sold is refused, naming it
        factor = 1 - own.serverless_discount / 100
        data = listed.model_dump(exclude_none=True)
        data["prices"] = _scaled(data["prices"], factor, lambda v: v.quantize(_QUANTUM).normalize())
        data["long_context"] = [
            _scaled(t, factor, lambda v: v.quantize(_QUANTUM).normalize()) for t in data.get("long_context", ())
        ]
        data.update(
            effective=as_of,
            source=_source(own, scenario, listed.source, own.serverless_discount),
            note=f"The listed version of {listed.effective.isoformat()} less {own.serverless_discount}%.",
        )
        version = ServerlessPriceVersion.model_validate(data)
    return offer.model_copy(update={"versions": (version,), "retired": None})


def _hourly(
    own: OwnPrices, scenario: Scenario, sheet: PriceSheet, offer: DedicatedOffer | GpuVmOffer
) -> DedicatedOffer | GpuVmOffer:
    as_of = scenario.price_date
    if isinstance(offer, DedicatedOffer):
        price, per_replica, discount = own.dedicated_gpu_hour, own.dedicated_replica_hour, own.dedicated_discount
    else:
        price, per_replica, discount = own.gpu_hour, None, own.gpu_vm_discount
    update: dict[str, Any] = {"retired": None}
    if isinstance(offer, DedicatedOffer) and own.dedicated_min_replicas is not None:
        update["min_replicas"] = own.dedicated_min_replicas
    if price is None and per_replica is None and discount is None:
        return offer.model_copy(update=update)  # only the minimum changed: the listed versions stand
    if discount is not None:
        listed = offer.version_at(as_of)
        factor = 1 - discount / 100
        source = _source(own, scenario, listed.source, discount)
        values = {
            k: (v * factor).quantize(_QUANTUM).normalize()
            for k, v in listed.model_dump(include={"per_gpu_hour", "per_replica_hour"}, exclude_none=True).items()
        }
    else:
        source = _source(own, scenario, None, None)
        given = {"per_gpu_hour": price} if price is not None else {"per_replica_hour": per_replica}
        values = {k: _money(v, scenario, sheet) for k, v in given.items() if v is not None}
    cls: type[DedicatedPriceVersion | GpuHourPriceVersion]
    cls = DedicatedPriceVersion if isinstance(offer, DedicatedOffer) else GpuHourPriceVersion
    if cls is DedicatedPriceVersion:
        values = {"per_gpu_hour": None, "per_replica_hour": None, **values}
    exact = discount is not None or scenario.currency == sheet.currency
    version = _built(cls, {"effective": as_of, "source": source, "note": None, **values}, exact)
    return offer.model_copy(update={**update, "versions": (version,)})


def with_own_prices(cat: Catalogs, scenario: Scenario) -> Catalogs:
    """The catalogues with the chosen offers priced at the scenario's own prices (unchanged without any)."""
    own = scenario.own_prices
    if own is None or own.empty:
        return cat
    replaced: dict[tuple[str, str, str], Any] = {}
    if scenario.serverless is not None and (own.serverless is not None or own.serverless_discount is not None):
        sheet, offer = cat.prices.serverless(scenario.serverless.provider, scenario.serverless.model)
        replaced[(sheet.provider, offer.kind, offer.id)] = _serverless(own, scenario, sheet, offer)
    dedicated = (own.dedicated_gpu_hour, own.dedicated_replica_hour, own.dedicated_discount, own.dedicated_min_replicas)
    if scenario.dedicated is not None and any(v is not None for v in dedicated):
        sheet, found = cat.prices.offer(scenario.dedicated.provider, scenario.dedicated.offer, "dedicated")
        assert isinstance(found, DedicatedOffer)
        replaced[(sheet.provider, found.kind, found.id)] = _hourly(own, scenario, sheet, found)
    if scenario.gpu_vm is not None and (own.gpu_hour is not None or own.gpu_vm_discount is not None):
        sheet, found = cat.prices.offer(scenario.gpu_vm.provider, scenario.gpu_vm.offer, "gpu_vm")
        assert isinstance(found, GpuVmOffer)
        replaced[(sheet.provider, found.kind, found.id)] = _hourly(own, scenario, sheet, found)
    if not replaced:
        return cat
    sheets = tuple(
        sheet.model_copy(
            update={"offers": tuple(replaced.get((sheet.provider, o.kind, o.id), o) for o in sheet.offers)}
        )
        if any(key[0] == sheet.provider for key in replaced)
        else sheet
        for sheet in cat.prices.sheets
    )
    return replace(cat, prices=PriceCatalog(sheets=sheets))
