"""A serverless API for a month: turns x the reused turn's cost, plus cache storage where charged."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
import numpy.typing as npt

from calculator.catalog.prices import PriceSheet, ServerlessOffer, ServerlessPriceVersion
from calculator.pricing.option import OptionCost, as_decimal, cents, parts_adding_up
from calculator.pricing.turn import cacheable_prefix, price_ref, price_turn
from calculator.scenario.inputs import HOURS_PER_MONTH, Fx, Traffic, TurnShape

__all__ = ["serverless_monthly_array", "serverless_option", "storage_monthly"]

Arr = npt.NDArray[np.float64]


def storage_monthly(
    offer: ServerlessOffer, version: ServerlessPriceVersion, shape: TurnShape, distinct_prefixes: int, hold_hours: float
) -> Decimal | None:
    """Monthly cache storage: distinct prefixes held x their tokens x hours x price per 1M per hour.

    Storage is shared by every turn that reads the prefix, so it is a monthly cost, not a per-turn one.
    None when the offer charges no storage.
    """
    price = version.prices_for_prompt(shape.input_tokens).cache_storage_per_hour
    if price is None:
        return None
    prefix_tokens = cacheable_prefix(offer, Decimal(shape.input_tokens), Decimal(shape.prefix_share))
    return price * prefix_tokens / Decimal(1_000_000) * distinct_prefixes * as_decimal(hold_hours)


def serverless_monthly_array(
    offer: ServerlessOffer, as_of: dt.date, shape: TurnShape, volume: Arr, fx_factor: float, storage: float
) -> Arr:
    per_turn = float(price_turn(offer, offer.version_at(as_of), shape).cost_per_turn)
    return (np.asarray(volume, dtype=np.float64) * per_turn + storage) * fx_factor


def serverless_option(
    sheet: PriceSheet,
    offer: ServerlessOffer,
    as_of: dt.date,
    shape: TurnShape,
    traffic: Traffic,
    currency: str,
    fx: Fx,
    distinct_prefixes: int = 0,
    prefix_hold_hours: float = HOURS_PER_MONTH,
) -> OptionCost:
    version = offer.version_at(as_of)
    turn = price_turn(offer, version, shape)
    tokens = turn.parts.total * traffic.turns_per_month
    breakdown = {
        "uncached_input": turn.parts.uncached_input * traffic.turns_per_month,
        "cache_write": turn.parts.cache_write * traffic.turns_per_month,
        "cached_input": turn.parts.cached_input * traffic.turns_per_month,
        "output": turn.parts.output * traffic.turns_per_month,
    }
    notes = []
    storage = storage_monthly(offer, version, shape, distinct_prefixes, prefix_hold_hours)
    if storage is not None and distinct_prefixes > 0:
        breakdown["cache_storage"] = storage
        notes.append(
            f"cache storage: {distinct_prefixes} distinct prefix(es) of "
            f"{float(shape.input_tokens * shape.prefix_share):.0f} tokens held {prefix_hold_hours:g} h a month"
        )
    elif storage is not None:
        notes.append("this offer charges cache storage per hour; set the distinct prefixes held to include it")
    storage = storage or Decimal(0)
    total = tokens + storage
    monthly = cents(fx.convert(total, sheet.currency, currency))
    converted = parts_adding_up({k: fx.convert(v, sheet.currency, currency) for k, v in breakdown.items()}, monthly)
    per_1000 = fx.convert(turn.parts.total * 1000, sheet.currency, currency)
    return OptionCost(
        option="serverless",
        provider=sheet.provider,
        offer=offer.id,
        model=offer.model,
        currency=currency,
        monthly=monthly,
        cost_per_1000_turns=per_1000,
        breakdown=converted,
        prices=(price_ref(sheet, offer, version),),
        notes=tuple(notes),
    )
