"""The turn: one request's tokens, how many of them the cache serves, and what it costs.

A turn has ``I`` input tokens and ``O`` output tokens. ``s`` (prefix share) of the input repeats an
earlier prompt's start; ``h`` (hit rate) is the chance that start is still cached::

    prefix P  = I * s, rounded down to the provider's cache unit, 0 below its minimum
    cached  C = P * h, rounded down to whole cache units; 0 where the offer gives no cache
                discount (it bills those tokens as plain input, so the bill shows them as input)
    uncached U = I - C
    written W = w * min(U, P), whole tokens, only where the offer charges cache writes (the
                part of this prompt the next turn will read back; in an agent loop, U)
    cost      = (U - W) * p_input + W * p_write + C * p_cached + O * p_output   (prices per 1M)

Token counts are whole tokens, as providers bill them: a cache serves whole blocks (OpenAI 128
tokens, DeepSeek 64), never part of one, so an expected count is rounded down (:func:`whole_units`).

Long-context tiers are a cliff: when the prompt ``I`` passes a threshold the whole request,
output included, is priced at the tier's rates. A batch discount takes its share off the prices
it covers. The same function prices one turn exactly (Decimal) or a whole sweep (numpy arrays),
so charts and the command line cannot drift apart.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict

from calculator.catalog.prices import (
    DedicatedOffer,
    DedicatedPriceVersion,
    GpuHourPriceVersion,
    GpuVmOffer,
    PriceSheet,
    ServerlessOffer,
    ServerlessPriceVersion,
    TokenPrices,
    price_age_days,
)
from calculator.errors import InputError
from calculator.scenario.inputs import TurnShape
from calculator.scenario.own_prices import is_own

__all__ = [
    "CostParts",
    "PriceRef",
    "TurnCost",
    "TurnComparison",
    "TurnShape",
    "compare_turn",
    "cost_parts",
    "cache_rules",
    "cacheable_prefix",
    "check_shape_values",
    "price_ref",
    "price_turn",
    "turn_cost_array",
    "whole_units",
]

MILLION = Decimal(1_000_000)
Arr = npt.NDArray[np.float64]


class CostParts(BaseModel):
    """A turn's cost split by what is billed (in the sheet's currency)."""

    model_config = ConfigDict(frozen=True)

    uncached_input: Decimal
    cache_write: Decimal
    cached_input: Decimal
    output: Decimal

    @property
    def total(self) -> Decimal:
        return self.uncached_input + self.cache_write + self.cached_input + self.output


class PriceRef(BaseModel):
    """The dated price version a figure was computed with."""

    model_config = ConfigDict(frozen=True)

    provider: str
    kind: str
    offer: str
    model: str | None = None
    gpu: str | None = None
    currency: str
    effective: dt.date
    source: str
    read: dt.date
    note: str | None = None
    price_source: Literal["sheet", "own"] = "sheet"
    """``own``: the user's own price (entered, or a listed price less their discount), not a sheet version."""

    def age_days(self, on: dt.date) -> int:
        """How old the price is on ``on`` (today or the price date): days since its source was read."""
        return price_age_days(self.read, on)


class TurnCost(BaseModel):
    model_config = ConfigDict(frozen=True)

    shape: TurnShape
    cached_tokens: Decimal
    uncached_tokens: Decimal
    written_tokens: Decimal
    tier: int | None
    """Index of the long-context tier that priced the request, None for base prices."""
    parts: CostParts

    @property
    def cost_per_turn(self) -> Decimal:
        return self.parts.total


class TurnComparison(BaseModel):
    """The reused-prefix turn beside the no-reuse turn: the product's headline."""

    model_config = ConfigDict(frozen=True)

    no_reuse: TurnCost
    reused: TurnCost
    price: PriceRef

    @property
    def saving_share(self) -> Decimal:
        base = self.no_reuse.cost_per_turn
        return (base - self.reused.cost_per_turn) / base if base else Decimal(0)


def price_ref(
    sheet: PriceSheet,
    offer: ServerlessOffer | DedicatedOffer | GpuVmOffer,
    version: ServerlessPriceVersion | DedicatedPriceVersion | GpuHourPriceVersion,
) -> PriceRef:
    """The dated version a figure used, for any kind of offer (a GPU offer names its GPU)."""
    return PriceRef(
        provider=sheet.provider,
        kind=offer.kind,
        offer=offer.id,
        model=getattr(offer, "model", None),
        gpu=getattr(offer, "gpu", None),
        currency=sheet.currency,
        effective=version.effective,
        source=version.source.url or version.source.document or "",
        read=version.source.read,
        note=version.note,
        price_source="own" if is_own(version.source) else "sheet",
    )


def _rate(prices: TokenPrices, part: str, version: ServerlessPriceVersion, batch: bool, ttl: str | None) -> Decimal:
    # A part the offer does not price separately is billed as plain input, batch discount included:
    # otherwise a batch turn with reuse could cost more than the same turn without it.
    billed_as = part
    if part == "cached_input" and prices.cached_input is None or part == "cache_write" and not prices.cache_write:
        billed_as = "input"
    if billed_as == "cache_write":
        value = prices.write_price(ttl)
        assert value is not None
    else:
        value = getattr(prices, billed_as)
    if batch and version.batch_discount is not None and billed_as in version.batch_applies_to:
        value = value * (1 - version.batch_discount)
    return Decimal(value)


_PARTS = ("input", "cache_write", "cached_input", "output")


def _tier_rates(version: ServerlessPriceVersion, shape: TurnShape) -> list[dict[str, Decimal]]:
    """Rates of the base prices, then of each long-context tier, per billed part."""
    levels: list[TokenPrices] = [version.prices, *version.long_context]
    return [{p: _rate(level, p, version, shape.batch, shape.cache_ttl) for p in _PARTS} for level in levels]


def cost_parts(
    offer: ServerlessOffer,
    version: ServerlessPriceVersion,
    shape: TurnShape,
    *,
    input_tokens: Arr | None = None,
    prefix_share: Arr | None = None,
    hit_rate: Arr | None = None,
    output_tokens: Arr | None = None,
) -> tuple[dict[str, Any], dict[str, Any], Any]:
    """Token split and cost parts of a turn, exactly (Decimal) or over arrays.

    Pass any of ``input_tokens``, ``prefix_share``, ``hit_rate``, ``output_tokens`` as numpy
    arrays to sweep them; the other values come from ``shape``. Returns (tokens, parts, tier):
    tokens has ``cached``, ``uncached``, ``written``; parts the four billed parts; tier the
    long-context tier index (-1 = base prices).
    """
    sweep = any(x is not None for x in (input_tokens, prefix_share, hit_rate, output_tokens))
    rates = _tier_rates(version, shape)
    levels: list[TokenPrices] = [version.prices, *version.long_context]
    discounts = [level.cached_input is not None for level in levels]
    charges_writes = any(level.cache_write for level in levels)
    unit = offer.cache_increment_tokens
    if not sweep:
        i = Decimal(shape.input_tokens)
        s, h, o = Decimal(shape.prefix_share), Decimal(shape.hit_rate), Decimal(shape.output_tokens)
        w = Decimal(shape.cache_write_share)
        tier = -1
        for index, threshold in enumerate(t.above_tokens for t in version.long_context):
            if i > threshold:
                tier = index
        prefix = cacheable_prefix(offer, i, s)
        cached = whole_units(prefix * h, unit) if discounts[tier + 1] else Decimal(0)
        uncached = i - cached
        written = whole_units(w * min(uncached, prefix), 1) if charges_writes else Decimal(0)
        r = rates[tier + 1]
        parts = {
            "uncached_input": (uncached - written) * r["input"] / MILLION,
            "cache_write": written * r["cache_write"] / MILLION,
            "cached_input": cached * r["cached_input"] / MILLION,
            "output": o * r["output"] / MILLION,
        }
        return {"cached": cached, "uncached": uncached, "written": written}, parts, tier

    fi = np.asarray(input_tokens if input_tokens is not None else float(shape.input_tokens), dtype=np.float64)
    fs = np.asarray(prefix_share if prefix_share is not None else float(shape.prefix_share), dtype=np.float64)
    fh = np.asarray(hit_rate if hit_rate is not None else float(shape.hit_rate), dtype=np.float64)
    fo = np.asarray(output_tokens if output_tokens is not None else float(shape.output_tokens), dtype=np.float64)
    fw = float(shape.cache_write_share)
    ftier = np.full(np.broadcast(fi, fs, fh, fo).shape, -1, dtype=np.int64)
    for index, tier_prices in enumerate(version.long_context):
        ftier = np.where(fi > tier_prices.above_tokens, index, ftier)
    fprefix = _floor_units(fi * fs, unit)
    fprefix = np.where(fprefix < offer.min_cacheable_tokens, 0.0, fprefix)
    fcached = np.where(np.array(discounts)[ftier + 1], _floor_units(fprefix * fh, unit), 0.0)
    funcached = fi - fcached
    fwritten = _floor_units(fw * np.minimum(funcached, fprefix), 1) if charges_writes else np.zeros_like(funcached)
    table = np.array([[float(level[p]) for p in _PARTS] for level in rates])  # (levels, parts)
    chosen = table[ftier + 1]  # broadcast to (..., parts)
    fparts = {
        "uncached_input": (funcached - fwritten) * chosen[..., 0] / 1e6,
        "cache_write": fwritten * chosen[..., 1] / 1e6,
        "cached_input": fcached * chosen[..., 2] / 1e6,
        "output": fo * chosen[..., 3] / 1e6,
    }
    return {"cached": fcached, "uncached": funcached, "written": fwritten}, fparts, ftier


def whole_units(tokens: Decimal, unit: int) -> Decimal:
    """``tokens`` rounded down to whole ``unit``-token blocks (1: whole tokens): what a provider bills."""
    return (tokens // unit) * unit


def _floor_units(tokens: Arr, unit: int) -> Arr:
    # the array twin of whole_units; a relative tolerance keeps 0.9 x 20,000 = 17,999.999... at 18,000
    blocks = np.asarray(tokens, dtype=np.float64) / unit
    floored: Arr = np.floor(blocks + 1e-9 * np.maximum(1.0, np.abs(blocks))) * unit
    return floored


def cacheable_prefix(offer: ServerlessOffer, input_tokens: Decimal, prefix_share: Decimal) -> Decimal:
    """The repeated start the offer can cache: whole cache blocks, none below its minimum length."""
    prefix = whole_units(input_tokens * prefix_share, offer.cache_increment_tokens)
    return prefix if prefix >= offer.min_cacheable_tokens else Decimal(0)


def price_turn(offer: ServerlessOffer, version: ServerlessPriceVersion, shape: TurnShape) -> TurnCost:
    """One turn priced exactly."""
    if shape.cache_ttl is not None:
        version.prices.write_price(shape.cache_ttl)  # rejects a TTL the offer does not sell
    tokens, parts, tier = cost_parts(offer, version, shape)
    return TurnCost(
        shape=shape,
        cached_tokens=tokens["cached"],
        uncached_tokens=tokens["uncached"],
        written_tokens=tokens["written"],
        tier=None if tier < 0 else tier,
        parts=CostParts(**parts),
    )


def compare_turn(sheet: PriceSheet, offer: ServerlessOffer, as_of: dt.date, shape: TurnShape) -> TurnComparison:
    """The reused-prefix turn beside the no-reuse turn, with the price version used."""
    version = offer.version_at(as_of)
    return TurnComparison(
        no_reuse=price_turn(offer, version, shape.without_reuse()),
        reused=price_turn(offer, version, shape),
        price=price_ref(sheet, offer, version),
    )


def turn_cost_array(
    offer: ServerlessOffer,
    version: ServerlessPriceVersion,
    shape: TurnShape,
    **sweep: Arr,
) -> Arr:
    """Cost per turn over arrays (floats), for charts; see :func:`cost_parts` for the names."""
    _, parts, _ = cost_parts(offer, version, shape, **sweep)
    total: Arr = parts["uncached_input"] + parts["cache_write"] + parts["cached_input"] + parts["output"]
    return total


def check_shape_values(**values: float) -> None:
    """Reject a share or token count outside what is allowed, naming it (for array inputs)."""
    for name, value in values.items():
        if value < 0:
            raise InputError(name, f"must be 0 or more, got {value}")
        if name in {"prefix_share", "hit_rate", "cache_write_share"} and value > 1:
            raise InputError(name, f"must be between 0 and 1, got {value}")


CacheRule = Literal["automatic", "explicit_write", "storage", "none"]


def cache_rules(version: ServerlessPriceVersion) -> list[CacheRule]:
    """How the offer bills caching, as a user would describe it."""
    p = version.prices
    rules: list[CacheRule] = []
    if p.cache_write:
        rules.append("explicit_write")
    elif p.cached_input is not None:
        rules.append("automatic")
    if p.cache_storage_per_hour is not None:
        rules.append("storage")
    return rules or ["none"]
