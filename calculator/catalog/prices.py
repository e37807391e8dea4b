"""Price sheets: offers, their dated price versions, and the as-of lookup.

A sheet is one YAML file per provider in ``price_sheets/``. Each offer is one of three kinds,
matching how inference is bought::

    serverless   per million tokens: input, cached input, cache write (per TTL), output,
                 optional cache storage per 1M tokens per hour, long-context tiers, batch discount
    dedicated    a reserved endpoint: per GPU-hour or per replica-hour, minimum replicas
    gpu_vm       a GPU virtual machine: per GPU-hour, whole instances, billing granularity

Each offer holds its price versions in date order; ``version_at(D)`` returns the version in
force on D, and a date before the first version is an error that names the dates that exist.
An offer may end (``retired``: end of sale or retirement, with the provider's successor): pricing it
on or after that date is an error naming the successor, while lists still show it, marked retired.
Every price is as old as the day its source was read: :func:`price_age_days` is the one rule for
that age, :data:`STALE_AFTER_DAYS` the age past which a front end warns.
Money is Decimal from the YAML on, so monthly totals can be exact to the cent.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Iterator
from decimal import Decimal
from functools import cached_property
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from calculator.catalog.datafile import DATA_DIR, DataFileError, load_model
from calculator.catalog.field_docs import FIELD_DOCS
from calculator.catalog.fx import CurrencyCode
from calculator.catalog.limits import CONTEXT, GPUS_PER_REPLICA, REPLICAS, TOKENS
from calculator.errors import InputError

__all__ = [
    "CacheTtl",
    "DedicatedOffer",
    "DedicatedPriceVersion",
    "GpuHourPriceVersion",
    "GpuVmOffer",
    "LongContextTier",
    "Offer",
    "OfferEnd",
    "RetiredOfferError",
    "STALE_AFTER_DAYS",
    "PriceCatalog",
    "PriceSheet",
    "ServerlessOffer",
    "ServerlessPriceVersion",
    "Source",
    "TokenPrices",
    "DEFAULT_SHEETS_DIR",
    "is_stale",
    "load_price_sheets",
    "price_age_days",
    "price_age_text",
]

DEFAULT_SHEETS_DIR = DATA_DIR / "price_sheets"

Slug = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._-]*$", max_length=80)]
Price = Annotated[Decimal, Field(ge=0, max_digits=14, decimal_places=6)]
"""A price in the sheet's currency; never negative."""
CacheTtl = Annotated[str, Field(pattern=r"^[1-9][0-9]*(m|h)$")]
"""A cache lifetime such as ``5m`` or ``1h``."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=FIELD_DOCS)


class Source(_Frozen):
    """Where a figure comes from, and when it was read."""

    url: str | None = None
    """The page the figure was read from."""
    document: str | None = Field(default=None, validate_default=True)
    """A document or file, when there is no URL (for example a seed article)."""
    read: dt.date
    """The date the figure was read from the source."""
    note: str | None = None
    """Caveats: a lower bound, a secondary source, a conflicting listing."""

    @field_validator("document")
    @classmethod
    def _url_or_document(cls, v: str | None, info: ValidationInfo) -> str | None:
        if v is None and info.data.get("url") is None:
            raise ValueError("a source needs a url or a document")
        return v

    @property
    def label(self) -> str:
        return f"{self.url or self.document} (read {self.read.isoformat()})"


STALE_AFTER_DAYS = 60
"""A price read longer ago than this is shown with a warning: sheets are re-read by hand, and list
prices at the providers here changed every few months in 2025 and 2026."""


def price_age_days(read: dt.date, on: dt.date) -> int:
    """How many days old a price read on ``read`` is on ``on`` (today, or the price date asked for).

    0 when it was read on or after that day: a price read later than the date it is used for is as
    fresh as a price can be for that date.
    """
    return max(0, (on - read).days)


def is_stale(read: dt.date, on: dt.date) -> bool:
    """Whether a price read on ``read`` is older than :data:`STALE_AFTER_DAYS` on ``on``."""
    return price_age_days(read, on) > STALE_AFTER_DAYS


def price_age_text(read: dt.date, on: dt.date, today: dt.date) -> str:
    """``read 41 days ago`` (``on`` is today), else ``read 41 days before 2026-10-01``."""
    days = price_age_days(read, on)
    if on == today:
        return "read today" if days == 0 else f"read {days} day{'s' if days != 1 else ''} ago"
    if days == 0:
        return f"read on or after {on.isoformat()}"
    return f"read {days} day{'s' if days != 1 else ''} before {on.isoformat()}"


def ttl_minutes(ttl: str) -> int:
    """``5m`` -> 5, ``1h`` -> 60."""
    number, unit = int(ttl[:-1]), ttl[-1]
    return number * (60 if unit == "h" else 1)


class TokenPrices(_Frozen):
    """Prices per million tokens."""

    input: Price
    """Uncached input tokens."""
    cached_input: Price | None = None
    """Input tokens read from the cache; absent when the offer gives no cache discount."""
    cache_write: dict[CacheTtl, Price] | None = None
    """Price per million tokens written to the cache, by cache lifetime (``5m``, ``1h``).
    Absent when caching is automatic and free to write."""
    output: Price
    """Output tokens, reasoning tokens included."""
    cache_storage_per_hour: Price | None = None
    """Storage of cached tokens per million tokens per hour (explicit context caching)."""

    @field_validator("cache_write")
    @classmethod
    def _some_ttl(cls, v: dict[str, Decimal] | None) -> dict[str, Decimal] | None:
        if v is not None and not v:
            raise ValueError("give at least one TTL price, for example {5m: 3.75}, or leave the field out")
        return v

    @property
    def default_ttl(self) -> str | None:
        """The shortest cache lifetime the offer sells, used unless a scenario picks another."""
        if not self.cache_write:
            return None
        return min(self.cache_write, key=ttl_minutes)

    def write_price(self, ttl: str | None = None) -> Decimal | None:
        if not self.cache_write:
            return None
        key = ttl or self.default_ttl
        if key not in self.cache_write:
            raise InputError("cache_ttl", f"{key!r} is not sold here; choose one of {', '.join(self.cache_write)}")
        return self.cache_write[key]


class LongContextTier(TokenPrices):
    """Prices for a whole request whose prompt is longer than ``above_tokens`` (a cliff, as billed)."""

    above_tokens: Annotated[int, CONTEXT]
    """The prompt length (cached and written tokens included) above which this tier applies."""


BatchPart = Literal["input", "cached_input", "cache_write", "output"]


class _Version(_Frozen):
    effective: dt.date
    """The first day this price applies."""
    source: Source
    note: str | None = None


class ServerlessPriceVersion(_Version):
    prices: TokenPrices
    long_context: tuple[LongContextTier, ...] = ()
    """Higher prices for long prompts, in increasing order of threshold."""
    batch_discount: Decimal | None = Field(default=None, gt=0, lt=1)
    """Share taken off the prices in ``batch_applies_to`` for batch requests (0.5 = half price)."""
    batch_applies_to: tuple[BatchPart, ...] = ("input", "output")

    @field_validator("long_context")
    @classmethod
    def _tiers_ordered(cls, v: tuple[LongContextTier, ...]) -> tuple[LongContextTier, ...]:
        thresholds = [t.above_tokens for t in v]
        if thresholds != sorted(set(thresholds)):
            raise ValueError(f"tiers must have increasing, distinct above_tokens; got {thresholds}")
        return v

    def prices_for_prompt(self, prompt_tokens: int | Decimal | float) -> TokenPrices:
        """The tier in force for a prompt of this many tokens: the highest threshold it passes."""
        chosen: TokenPrices = self.prices
        for tier in self.long_context:
            if prompt_tokens > tier.above_tokens:
                chosen = tier
        return chosen


class GpuHourPriceVersion(_Version):
    per_gpu_hour: Price


class DedicatedPriceVersion(_Version):
    per_gpu_hour: Price | None = None
    per_replica_hour: Price | None = None

    @field_validator("per_replica_hour")
    @classmethod
    def _exactly_one(cls, v: Decimal | None, info: ValidationInfo) -> Decimal | None:
        if (v is None) == (info.data.get("per_gpu_hour") is None):
            raise ValueError("give exactly one of per_gpu_hour and per_replica_hour")
        return v


class OfferEnd(_Frozen):
    """The day an offer stops being sold (end of sale or retirement), and what the provider offers instead."""

    date: dt.date
    """The first day the offer can no longer be bought (requests fail or go to another model)."""
    successor: Slug | None = None
    """The offer of the same kind in this sheet that replaces it, when the sheet lists one."""
    successor_model: str | None = None
    """The provider's recommended replacement, by the provider's name, when this sheet does not list it."""
    source: Source
    note: str | None = None

    def describe(self) -> str:
        """``retired on 2026-07-24 (successor: deepseek-v4-flash)``."""
        return f"retired on {self.date.isoformat()}" + (f" ({self.successor_text})" if self.successor_text else "")

    @property
    def successor_text(self) -> str:
        if self.successor:
            return f"successor: {self.successor}"
        if self.successor_model:
            return f"the provider's replacement: {self.successor_model}, not in this sheet"
        return ""


class RetiredOfferError(InputError):
    """An offer priced on or after the day it stopped being sold."""


def _check_versions_ordered(versions: tuple[_Version, ...]) -> None:
    for before, after in zip(versions, versions[1:], strict=False):
        if after.effective <= before.effective:
            same = "on the same date" if after.effective == before.effective else "out of order"
            raise ValueError(
                f"versions must be in increasing date order: {after.effective} follows {before.effective} ({same})"
            )


class _OfferBase(_Frozen):
    id: Slug
    """Unique within the sheet and kind; used on the command line and in scenarios."""
    region: str | None = None
    """Where the provider says it serves this offer (EU, US, global ...)."""
    notes: str | None = None
    retired: OfferEnd | None = None
    """Set when the provider stopped selling the offer: prices stay for dates before it."""

    versions: tuple[_Version, ...]

    @model_validator(mode="after")
    def _ends_after_it_starts(self) -> _OfferBase:
        if self.retired is not None:
            if self.retired.date <= self.versions[0].effective:
                raise ValueError(
                    f"retired.date {self.retired.date} must come after the first price version "
                    f"({self.versions[0].effective})"
                )
            if self.retired.successor == self.id:
                raise ValueError("retired.successor names the offer itself; give the offer that replaces it")
        return self

    def retired_on(self, when: dt.date) -> bool:
        """Whether the offer is no longer sold on ``when``."""
        return self.retired is not None and when >= self.retired.date

    def version_at(self, when: dt.date) -> _Version:
        """The version in force on ``when``; an error on or after the offer's end, naming its successor."""
        if self.retired is not None and self.retired_on(when):
            raise RetiredOfferError(
                "as_of",
                f"{self.label} was {self.retired.describe()}, so it cannot be priced on {when.isoformat()}: "
                f"choose another offer, or a price date before {self.retired.date.isoformat()}",
                code="retired_offer",
            )
        return self.listed_version(when)

    def listed_version(self, when: dt.date) -> _Version:
        """The last version in effect on ``when``, also after the offer's end: what a list shows, marked
        retired; pricing goes through :meth:`version_at`, which refuses a retired offer."""
        in_force = [v for v in self.versions if v.effective <= when]
        if not in_force:
            dates = ", ".join(v.effective.isoformat() for v in self.versions)
            raise InputError(
                "as_of",
                f"{self.label} has no price before {self.versions[0].effective.isoformat()} "
                f"(asked for {when.isoformat()}); price versions start on: {dates}",
            )
        return in_force[-1]

    @property
    def label(self) -> str:
        return self.id

    @property
    def latest(self) -> _Version:
        return self.versions[-1]


class ServerlessOffer(_OfferBase):
    kind: Literal["serverless"]
    id: Slug = ""
    model: str
    """The model as the provider names it."""
    base_model: str | None = None
    """The model's common name across providers (for example ``llama-3.3-70b``), to compare like with like."""
    open_weights: bool
    """Whether anyone can download the weights; a closed model cannot be self-hosted."""
    min_cacheable_tokens: Annotated[int, TOKENS] = 0
    """Prompts shorter than this are not cached at all (often 1,024)."""
    cache_increment_tokens: Annotated[int, CONTEXT] = 1
    """The cache holds prefixes in whole blocks of this many tokens."""
    versions: tuple[ServerlessPriceVersion, ...] = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _default_id(cls, data: object) -> object:
        if isinstance(data, dict) and not data.get("id") and isinstance(data.get("model"), str):
            data = {**data, "id": re.sub(r"[^a-z0-9._-]+", "-", data["model"].lower()).strip("-")}
        return data

    @field_validator("versions")
    @classmethod
    def _ordered(cls, v: tuple[ServerlessPriceVersion, ...]) -> tuple[ServerlessPriceVersion, ...]:
        _check_versions_ordered(v)
        return v

    def version_at(self, when: dt.date) -> ServerlessPriceVersion:
        version = super().version_at(when)
        assert isinstance(version, ServerlessPriceVersion)
        return version

    @property
    def label(self) -> str:
        return self.model

    @property
    def canonical_model(self) -> str:
        return canonical_model(self.base_model or self.model)


class DedicatedOffer(_OfferBase):
    kind: Literal["dedicated"]
    gpu: Slug
    """GPU type, an id from ``gpu_specs/``."""
    gpus_per_replica: Annotated[int, GPUS_PER_REPLICA] = 1
    model: str | None = None
    """The model deployed, when the offer is for one model; absent when you bring any open model."""
    min_replicas: Annotated[int, REPLICAS] = 1
    min_billed_hours: int = Field(default=0, ge=0, le=int(REPLICAS.high) * 744)
    """A commitment: hours per month billed even when not used (at most every replica all month)."""
    versions: tuple[DedicatedPriceVersion, ...] = Field(min_length=1)

    @field_validator("versions")
    @classmethod
    def _ordered(cls, v: tuple[DedicatedPriceVersion, ...]) -> tuple[DedicatedPriceVersion, ...]:
        _check_versions_ordered(v)
        return v

    def version_at(self, when: dt.date) -> DedicatedPriceVersion:
        version = super().version_at(when)
        assert isinstance(version, DedicatedPriceVersion)
        return version

    def replica_hour_price(self, when: dt.date) -> Decimal:
        v = self.version_at(when)
        if v.per_replica_hour is not None:
            return v.per_replica_hour
        assert v.per_gpu_hour is not None
        return v.per_gpu_hour * self.gpus_per_replica


BILLING_SECONDS = {"second": 1, "minute": 60, "hour": 3600}


class GpuVmOffer(_OfferBase):
    kind: Literal["gpu_vm"]
    gpu: Slug
    """GPU type, an id from ``gpu_specs/``."""
    gpus_per_instance: Annotated[int, GPUS_PER_REPLICA] = 1
    """GPUs in the smallest instance you can rent (8 where only whole nodes are sold)."""
    billing: Literal["second", "minute", "hour"]
    """Billing granularity: each period of use is rounded up to this."""
    min_billed_seconds: int = Field(default=0, ge=0, le=744 * 3600)
    """A minimum charge per start (for example 60 s)."""
    pricing: Literal["on_demand", "reserved", "spot"] = "on_demand"
    commitment_months: int | None = Field(default=None, ge=1)
    versions: tuple[GpuHourPriceVersion, ...] = Field(min_length=1)

    @field_validator("versions")
    @classmethod
    def _ordered(cls, v: tuple[GpuHourPriceVersion, ...]) -> tuple[GpuHourPriceVersion, ...]:
        _check_versions_ordered(v)
        return v

    def version_at(self, when: dt.date) -> GpuHourPriceVersion:
        version = super().version_at(when)
        assert isinstance(version, GpuHourPriceVersion)
        return version

    @property
    def billing_seconds(self) -> int:
        return BILLING_SECONDS[self.billing]


Offer = Annotated[ServerlessOffer | DedicatedOffer | GpuVmOffer, Field(discriminator="kind")]


@functools.lru_cache(maxsize=4096)  # a sweep asks for the same few names a thousand times
def canonical_model(name: str) -> str:
    """A model's name reduced for comparison: case, vendor prefix and serving suffixes dropped."""
    base = name.strip().lower().split("/")[-1]
    base = re.sub(r"[-_ ](instruct|chat|turbo|versatile|fp8|bf16|it)\b", "", base)
    base = re.sub(r"^(meta-)?llama", "llama", base)
    return re.sub(r"[_ ]", "-", base)


class PriceSheet(_Frozen):
    """One provider's offers, all priced in one currency."""

    schema_version: Literal[1]
    provider: Slug
    """Must equal the file name without ``.yaml``."""
    name: str
    currency: CurrencyCode
    """The sheet's prices stay in it; a scenario shown in another converts through the dollar."""
    url: str | None = None
    notes: str | None = None
    offers: tuple[Offer, ...] = Field(min_length=1)

    @field_validator("offers")
    @classmethod
    def _unique_ids(cls, v: tuple[Offer, ...]) -> tuple[Offer, ...]:
        seen: set[tuple[str, str]] = set()
        for offer in v:
            key = (offer.kind, offer.id)
            if key in seen:
                raise ValueError(f"two {offer.kind} offers share the id {offer.id!r}; ids must be unique")
            seen.add(key)
        for offer in v:
            successor = offer.retired.successor if offer.retired else None
            if successor is not None and (offer.kind, successor) not in seen:
                raise ValueError(
                    f"offer {offer.id!r}: retired.successor {successor!r} is not a {offer.kind} offer of this sheet; "
                    "give one of its ids, or name the model in retired.successor_model"
                )
        return v


class PriceCatalog(BaseModel):
    """All loaded sheets, with lookups that fail with a message naming what exists."""

    model_config = ConfigDict(frozen=True)
    sheets: tuple[PriceSheet, ...]

    @cached_property
    def _by_provider(self) -> dict[str, PriceSheet]:
        return {s.provider: s for s in self.sheets}

    @property
    def providers(self) -> list[str]:
        return sorted(self._by_provider)

    def sheet(self, provider: str) -> PriceSheet:
        try:
            return self._by_provider[provider.lower()]
        except KeyError:
            raise InputError("provider", f"unknown provider {provider!r}; known: {', '.join(self.providers)}") from None

    def offers(self, kind: str | None = None) -> Iterator[tuple[PriceSheet, Offer]]:
        for sheet in self.sheets:
            for offer in sheet.offers:
                if kind is None or offer.kind == kind:
                    yield sheet, offer

    def serverless(self, provider: str, model: str) -> tuple[PriceSheet, ServerlessOffer]:
        sheet = self.sheet(provider)
        found = [o for o in sheet.offers if isinstance(o, ServerlessOffer)]
        for offer in found:
            if model.lower() in (offer.model.lower(), offer.id):
                return sheet, offer
        names = ", ".join(o.model for o in found) or "none"
        raise InputError("model", f"{provider} has no serverless offer for {model!r}; it offers: {names}")

    def offer(self, provider: str, offer_id: str, kind: str) -> tuple[PriceSheet, Offer]:
        sheet = self.sheet(provider)
        found = [o for o in sheet.offers if o.kind == kind]
        for offer in found:
            if offer.id == offer_id.lower():
                return sheet, offer
        names = ", ".join(o.id for o in found) or "none"
        raise InputError("offer", f"{provider} has no {kind} offer {offer_id!r}; its {kind} offers: {names}")


def load_price_sheet(path: Path) -> PriceSheet:
    sheet = load_model(path, PriceSheet)
    if sheet.provider != path.stem:
        raise DataFileError([f"{path}:1: provider: {sheet.provider!r} must match the file name {path.stem!r}"])
    return sheet


def load_price_sheets(directory: Path | None = None) -> PriceCatalog:
    """Load every ``*.yaml`` sheet; all broken files are reported together, not one per run."""
    directory = directory or DEFAULT_SHEETS_DIR
    paths = sorted(directory.glob("*.yaml"))
    if not paths:
        raise DataFileError([f"{directory}: no price sheets (*.yaml) found"])
    sheets, problems = [], []
    for path in paths:
        try:
            sheets.append(load_price_sheet(path))
        except DataFileError as exc:
            problems.extend(exc.lines)
    if problems:
        raise DataFileError(problems)
    return PriceCatalog(sheets=tuple(sheets))
