"""The user's own prices: a negotiated per-token rate, a committed-use discount, a GPU price from their own
cloud contract.

One optional group on the scenario (``own_prices``), in the scenario's currency. Each option either replaces
the listed price of the offer the scenario chose (``serverless``, ``dedicated_gpu_hour`` /
``dedicated_replica_hour``, ``gpu_hour``) or takes a share off it (the ``*_discount`` fields, in percent).
The offer stays the one chosen (its model, caching rules, GPUs, billing); only its price is the user's, and
every figure computed with it says so (``price_source: own``), never citing a sheet version.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator

from calculator.catalog.field_docs import FIELD_DOCS
from calculator.catalog.prices import LongContextTier, Price, Source, TokenPrices

__all__ = ["OWN_SOURCE", "OwnPrices", "Percent", "is_own"]

OWN_SOURCE = "your own price"
"""How an own price's source begins: the document every figure computed with it cites."""

Percent = Annotated[Decimal, Field(ge=0, le=100, max_digits=9, decimal_places=4)]
"""A discount in percent of the listed price, 0 to 100."""


class OwnPrices(BaseModel):
    """Prices the user pays instead of the listed ones, with a name and a date ("ACME negotiated, 2026-12")."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=FIELD_DOCS, allow_inf_nan=False)

    name: Annotated[str, Field(min_length=1, max_length=120)] = "negotiated"
    """What the price is, as the user calls it (shown wherever the price is cited)."""
    date: dt.date | None = None
    """When the price was agreed or quoted; default: the scenario's price date."""
    serverless: TokenPrices | None = None
    """Per million tokens for the serverless offer chosen: input, cached_input, cache_write, output."""
    serverless_long_context: tuple[LongContextTier, ...] = ()
    """Higher prices for prompts above a length, as a provider's long-context tier bills them."""
    serverless_discount: Percent | None = None
    """Percent off the serverless offer's listed prices (every part, tiers included)."""
    dedicated_gpu_hour: Price | None = None
    """Per GPU-hour for the dedicated endpoint chosen."""
    dedicated_replica_hour: Price | None = None
    """Per replica-hour for the dedicated endpoint chosen (instead of per GPU-hour)."""
    dedicated_min_replicas: Annotated[int, Field(ge=0, le=10_000)] | None = None
    """The minimum number of replicas the contract bills, when it differs from the listed offer's."""
    dedicated_discount: Percent | None = None
    """Percent off the dedicated endpoint's listed hourly price."""
    gpu_hour: Price | None = None
    """Per GPU-hour for the GPU VMs chosen (the self-hosted option)."""
    gpu_vm_discount: Percent | None = None
    """Percent off the GPU VM's listed hourly price."""

    @model_validator(mode="after")
    def _one_way_per_option(self) -> OwnPrices:
        pairs = [
            ("serverless", self.serverless is not None, "serverless_discount", self.serverless_discount),
            (
                "dedicated_gpu_hour",
                self.dedicated_gpu_hour is not None or self.dedicated_replica_hour is not None,
                "dedicated_discount",
                self.dedicated_discount,
            ),
            ("gpu_hour", self.gpu_hour is not None, "gpu_vm_discount", self.gpu_vm_discount),
        ]
        for price, given, discount, value in pairs:
            if given and value is not None:
                raise ValueError(f"give {price} or {discount}, not both: a discount applies to the listed price")
        if self.dedicated_gpu_hour is not None and self.dedicated_replica_hour is not None:
            raise ValueError("give dedicated_gpu_hour or dedicated_replica_hour, not both")
        if self.serverless_long_context and self.serverless is None:
            raise ValueError("serverless_long_context needs the serverless prices it raises")
        thresholds = [t.above_tokens for t in self.serverless_long_context]
        if thresholds != sorted(set(thresholds)):
            raise ValueError(f"serverless_long_context tiers need increasing, distinct above_tokens; got {thresholds}")
        return self

    @property
    def empty(self) -> bool:
        return all(getattr(self, f) in (None, ()) for f in type(self).model_fields if f not in ("name", "date"))


def is_own(source: Source) -> bool:
    """Whether a price version is the user's own (made from ``own_prices``), not a version of a sheet."""
    return source.url is None and (source.document or "").startswith(OWN_SOURCE)
