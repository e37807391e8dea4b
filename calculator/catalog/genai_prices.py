"""Price proposals from pydantic's ``genai-prices`` package, diffed against our curated sheets.

``genai-prices`` (optional: ``pip install 'inference-cost-calculator[genai-prices]'``) ships its price
data inside the package, as Python objects in ``genai_prices.data.providers``. This module reads that
bundled list directly and never the package's snapshot machinery: ``genai_prices.UpdatePrices`` can
replace the snapshot with prices fetched from GitHub, and nothing here starts it or reads the
snapshot, so the result depends only on the installed package version (no network access).

For each provider we have a sheet for, every serverless offer is matched to a genai-prices model
(its own matching rules on our model name, id and base model, then the canonical name) and the price
in force on the as-of date is turned into a proposed :class:`~calculator.catalog.prices.ServerlessPriceVersion`
(source: document ``genai-prices <version> package data``, read on the date the list's comments say the
model's price was checked, else the list's own date). The diff says, per model:

    same       every price genai-prices gives equals the version of ours in force
    changed    some price differs: each field with our value and theirs
    new        genai-prices has a current, token-priced model our sheet lacks (see :func:`is_current`)
    missing    we have the offer; genai-prices has no such model (or no such provider)
    retired    we retired the offer; the list still prices it (reported, never proposed)
    older      the list prices it differently, but its date is not after our newest reading (nothing proposed)

A refresh never makes a sheet worse: a retired offer gets no version, a list no newer than our own reading
proposes nothing, and a long-context tier of ours the list does not give is kept, not deleted.

Fields genai-prices does not describe (cache storage, a batch discount when it has no batch prices,
a cached-input price it leaves out) are kept from our version and named in ``kept``; they never
count as changes. Nothing is written unless asked: :func:`write_proposals` only appends a version
(with an effective date after our latest) to an offer or a new offer to a sheet, leaves every existing
line alone, checks that the edited file holds exactly the old data plus the additions, validates the
whole sheet with :func:`~calculator.catalog.prices.load_price_sheet` and replaces the file by a rename.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import yaml

from calculator.catalog.datafile import DataFileError, check_writable, parse_yaml
from calculator.catalog.prices import (
    DEFAULT_SHEETS_DIR,
    PriceCatalog,
    PriceSheet,
    ServerlessOffer,
    ServerlessPriceVersion,
    canonical_model,
    load_price_sheet,
    ttl_minutes,
)
from calculator.catalog.staged_write import write_all
from calculator.errors import InputError

if TYPE_CHECKING:
    from genai_prices.types import ModelInfo, ModelPrice, Provider

__all__ = [
    "CURRENT_WITHIN_DAYS",
    "DiffEntry",
    "FieldChange",
    "GenaiData",
    "ImportReport",
    "Proposal",
    "Status",
    "WriteResult",
    "diff_sheets",
    "is_current",
    "latest_check",
    "load_genai_data",
    "propose",
    "write_proposals",
]

Status = Literal["same", "changed", "new", "missing", "retired", "older"]
PROVIDER_ALIASES: dict[str, str] = {}
"""Our sheet's provider slug -> genai-prices provider id, where they differ (none today)."""
TOKEN_KEYS = ("input_mtok", "cache_read_mtok", "cache_write_mtok", "cache_write_1h_mtok", "output_mtok")
_PART_OF_KEY = {
    "input_mtok": "input",
    "cache_read_mtok": "cached_input",
    "cache_write_mtok": "cache_write",
    "cache_write_1h_mtok": "cache_write",
    "output_mtok": "output",
}
_CHECKED = re.compile(
    r"\b(?:checked|verified|as of|last updated)\b.{0,80}?(\d{4}-\d{2}-\d{2})", re.IGNORECASE | re.DOTALL
)
CURRENT_WITHIN_DAYS = 365
"""A model the list dates (a price start or a check) within this many days of the as-of date counts as sold now."""
_QUANTUM = Decimal("0.000001")
BATCH_ROUNDING = Decimal("0.025")
"""A part's batch share may differ this much from the input's and still count as the same discount
(providers publish rounded batch prices: OpenAI's cached input 0.13 for 0.125)."""


# --- reading the package ---------------------------------------------------------------------------


@dataclass(frozen=True)
class GenaiData:
    """A price list as genai-prices models it: by default the package's bundled providers and its version;
    ``sheets refresh`` also builds one from a downloaded ``data.json`` or LiteLLM's cost map
    (:mod:`calculator.catalog.price_lists`), which then names itself and the date it was read."""

    version: str
    providers: tuple[Provider, ...]
    list_name: str = "genai-prices"
    """How notes and reasons name the list."""
    source_document: str | None = None
    """The document each proposal cites; default: the installed package's data."""
    source_url: str | None = None
    read: dt.date | None = None
    """The list's own date: given with ``--read-on``, the day a server sent it, or the latest day its data
    says a price was checked. A model's own check date, when earlier, dates that model's proposal."""
    batch_prices_partial: bool = False
    """A batch price the list leaves out is unknown, not the standard price: its part keeps ours (LiteLLM)."""

    @property
    def document(self) -> str:
        return self.source_document or f"genai-prices {self.version} package data"

    def provider(self, provider_id: str) -> Provider | None:
        wanted = PROVIDER_ALIASES.get(provider_id, provider_id)
        return next((p for p in self.providers if p.id == wanted), None)


def load_genai_data() -> GenaiData:
    """The price data bundled in the installed ``genai-prices`` (never fetched; see the module docstring)."""
    try:
        from importlib.metadata import version

        from genai_prices.data import providers
    except ImportError:
        raise InputError(
            "genai-prices",
            "the genai-prices package is not installed; install it with "
            "pip install 'inference-cost-calculator[genai-prices]' (or pip install genai-prices)",
        ) from None
    return GenaiData(
        version=version("genai-prices"),
        providers=tuple(providers),
        read=latest_check(providers),
    )


def latest_check(providers: Iterable[Provider]) -> dt.date | None:
    """The latest day a list's comments say a price was checked: the list is at least that new.

    The installed package's release date is not recorded inside it (its files carry no real dates), so
    this is the package data's own date, a lower bound of its release."""
    found = [
        d
        for p in providers
        for text in (p.price_comments, *(m.price_comments for m in p.models))
        if (d := _checked_date(text)) is not None
    ]
    return max(found) if found else None


# --- one model -> one proposed version ---------------------------------------------------------------


@dataclass(frozen=True)
class Proposal:
    """A genai-prices model's price on the as-of date, as a version for our sheet."""

    provider: str
    genai_id: str
    genai_name: str | None
    version: ServerlessPriceVersion
    start_date: dt.date | None
    """When genai-prices says this price started, where it says."""
    deprecated: bool
    kept: tuple[str, ...] = ()
    """Fields copied from our version because genai-prices does not give them."""
    ignored: tuple[str, ...] = ()
    """genai-prices price keys with no place in our sheets (web searches, audio, images ...)."""


def _of(name: str) -> str:
    """The list's name as a possessive: genai-prices', LiteLLM's."""
    return name + ("'" if name.endswith("s") else "'s")


def _dec(value: Decimal) -> Decimal:
    """Sheets keep at most 6 decimal places."""
    return Decimal(value).quantize(_QUANTUM).normalize()


def _as_tiers(value: Any) -> tuple[Decimal, list[tuple[int, Decimal]]] | None:
    """(base, [(start, price)]) of a flat or tiered genai price; None when absent."""
    if value is None:
        return None
    base = getattr(value, "base", None)
    if base is not None:
        return _dec(base), [(int(t.start), _dec(t.price)) for t in value.tiers]
    return _dec(value), []


def _at(tiers: tuple[Decimal, list[tuple[int, Decimal]]], threshold: int | None) -> Decimal:
    base, steps = tiers
    price = base
    if threshold is not None:
        for start, tier_price in steps:
            if start <= threshold:
                price = tier_price
    return price


def _checked_date(*texts: str | None) -> dt.date | None:
    """The latest 'checked (verified, as of) ... YYYY-MM-DD' date in the list's comments (model first, then
    provider)."""
    for text in texts:
        if not text:
            continue
        found = []
        for match in _CHECKED.finditer(text):
            try:
                found.append(dt.date.fromisoformat(match.group(1)))
            except ValueError:
                continue
        if found:
            return max(found)
    return None


def _resolve(model: ModelInfo, as_of: dt.date) -> tuple[ModelPrice, dt.date | None, list[str]]:
    """The price in force on ``as_of``: genai-prices' own resolution, sampled over the day so a time-of-day
    price (off-peak discounts) resolves to the one in force for most hours, named in the notes."""
    from genai_prices.types import ConditionalPrice, StartDateConstraint

    samples = [
        dt.datetime.combine(as_of, dt.time(0, 0), tzinfo=dt.UTC) + dt.timedelta(minutes=30 * i) for i in range(48)
    ]
    resolved = [model.get_prices(ts) for ts in samples]
    counts = Counter(id(p) for p in resolved)
    chosen_id, _ = counts.most_common(1)[0]
    chosen = next(p for p in resolved if id(p) == chosen_id)
    notes = []
    if len(counts) > 1:
        others = ", ".join(str(p) for p in {id(p): p for p in resolved if id(p) != chosen_id}.values())
        notes.append(
            f"genai-prices has time-of-day prices; this is the one in force {counts[chosen_id] / 2:g} hours a day "
            f"(UTC), the rest of the day: {others}"
        )
    start: dt.date | None = None
    if isinstance(model.prices, list):
        for conditional in model.prices:
            if (
                isinstance(conditional, ConditionalPrice)
                and conditional.prices is chosen
                and isinstance(conditional.constraint, StartDateConstraint)
            ):
                start = conditional.constraint.start_date
    return chosen, start, notes


def _batch_keys(model: ModelInfo, as_of: dt.date) -> set[str] | None:
    """The token price keys the batch variants in force on ``as_of`` give; None without any."""
    noon = dt.datetime.combine(as_of, dt.time(12, 0), tzinfo=dt.UTC)
    variants = [
        v
        for v in model.price_variants or ()
        if v.when == {"processing": "batch"} and (v.constraint is None or v.constraint.active(noon))
    ]
    if not variants:
        return None
    return {k for v in variants for k in TOKEN_KEYS if getattr(v.prices, k, None) is not None}


def _batch(
    model: ModelInfo, standard: ModelPrice, as_of: dt.date, name: str = "genai-prices", given_only: bool = False
) -> tuple[Decimal | None, tuple[str, ...], list[str]] | None:
    """(discount, parts, notes) from genai-prices' batch variant; None when it has no batch prices on as_of.

    A key the variant leaves out is billed at the standard price (genai-prices' rule), unless ``given_only``:
    then it is left out of the comparison (LiteLLM leaves out batch prices it does not know)."""
    given = _batch_keys(model, as_of)
    if given is None:
        return None
    noon = dt.datetime.combine(as_of, dt.time(12, 0), tzinfo=dt.UTC)
    batch = model.get_prices(noon, {"processing": "batch"})
    shares: dict[str, set[Decimal]] = {}
    for key in TOKEN_KEYS:
        std, cut = _as_tiers(getattr(standard, key)), _as_tiers(getattr(batch, key))
        if std is None or cut is None or (given_only and key not in given):
            continue
        for threshold in [None, *sorted({s for s, _ in std[1]} | {s for s, _ in cut[1]})]:
            full, reduced = _at(std, threshold), _at(cut, threshold)
            if full > 0:
                shares.setdefault(_PART_OF_KEY[key], set()).add((1 - reduced / full).quantize(_QUANTUM))
    discounted = {part: s for part, s in shares.items() if s != {Decimal(0)}}
    if "input" not in discounted or len(discounted["input"]) != 1:
        return None, (), [f"{_of(name)} batch prices do not take one share off input; batch discount not set"]
    (discount,) = discounted["input"]
    if not (0 < discount < 1):
        return None, (), [f"{_of(name)} batch discount {discount} is outside 0..1; not set"]
    notes, parts = [], []
    for part in ("input", "cached_input", "cache_write", "output"):
        if part not in discounted:
            continue
        if all(abs(share - discount) <= BATCH_ROUNDING for share in discounted[part]):
            parts.append(part)
            if discounted[part] != {discount}:
                listed = ", ".join(str(x.normalize()) for x in sorted(discounted[part]))
                notes.append(f"{_of(name)} batch {part} price is rounded ({listed} off)")
        else:
            notes.append(f"{_of(name)} batch {part} price is not {discount} off; left out of batch_applies_to")
    return discount.normalize(), tuple(parts), notes


def _write_ttls(ours: ServerlessPriceVersion | None, has_1h: bool) -> tuple[str, ...]:
    """The lifetime genai-prices' plain ``cache_write_mtok`` stands for in our sheet: the shortest we sell
    (other than the 1h it prices apart). Our other lifetimes are kept, never given the short one's price
    (Anthropic's 1h write costs 2x input, its 5m write 1.25x)."""
    sold = sorted((ours.prices.cache_write or {}) if ours else {}, key=ttl_minutes)
    short = [t for t in sold if not (has_1h and t == "1h")]
    return (short[0] if short else "5m",)


def _by_ttl(prices: dict[str, Decimal]) -> dict[str, Decimal]:
    return dict(sorted(prices.items(), key=lambda kv: ttl_minutes(kv[0])))


def _merge_tiers(ours: ServerlessPriceVersion, theirs: list[dict[str, Any]], kept: list[str]) -> list[dict[str, Any]]:
    """The list's long-context tiers, filled in from ours where it leaves a price out, plus every tier of ours
    at a threshold the list does not give: a list without tiers does not prove the provider dropped one."""
    given = {t["above_tokens"]: t for t in theirs}
    for mine in ours.long_context:
        tier = given.get(mine.above_tokens)
        if tier is None:
            given[mine.above_tokens] = {"above_tokens": mine.above_tokens, **mine.model_dump(exclude_none=True)}
            kept.append(f"long_context[>{mine.above_tokens}]")
            continue
        if "cached_input" not in tier and mine.cached_input is not None:
            tier["cached_input"] = mine.cached_input
        if mine.cache_write:
            tier["cache_write"] = _by_ttl({**mine.cache_write, **tier.get("cache_write", {})})
        if mine.cache_storage_per_hour is not None:
            tier["cache_storage_per_hour"] = mine.cache_storage_per_hour
    return [given[t] for t in sorted(given)]


def propose(
    provider_id: str,
    model: ModelInfo,
    as_of: dt.date,
    data: GenaiData,
    *,
    ours: ServerlessPriceVersion | None = None,
    provider_comments: str | None = None,
    pricing_url: str | None = None,
    today: dt.date | None = None,
) -> Proposal | None:
    """The version genai-prices implies on ``as_of``; None for a model without input and output token prices.

    ``ours`` (our version in force) supplies what genai-prices does not give, and the cache lifetime(s) its
    single cache-write price stands for.
    """
    today = today or dt.date.today()
    name = data.list_name
    price, start, notes = _resolve(model, as_of)
    tiers = {key: _as_tiers(getattr(price, key)) for key in TOKEN_KEYS}
    if tiers["input_mtok"] is None or tiers["output_mtok"] is None:
        return None
    ignored = tuple(
        sorted(k for k, v in price.__dict__.items() if v is not None and not k.startswith("_") and k not in TOKEN_KEYS)
    )
    kept: list[str] = []
    write_ttls = _write_ttls(ours, tiers["cache_write_1h_mtok"] is not None)

    def level(threshold: int | None) -> dict[str, Any]:
        def get(key: str) -> Decimal | None:
            t = tiers[key]
            return None if t is None else _at(t, threshold)

        prices: dict[str, Any] = {"input": get("input_mtok"), "output": get("output_mtok")}
        cached = get("cache_read_mtok")
        if cached is not None:
            prices["cached_input"] = cached
        write: dict[str, Decimal] = {}
        short_write = get("cache_write_mtok")
        if short_write is not None:
            write.update({ttl: short_write for ttl in write_ttls})
        long_write = get("cache_write_1h_mtok")
        if long_write is not None:
            write["1h"] = long_write
        if write:
            prices["cache_write"] = _by_ttl(write)
        return prices

    base = level(None)
    thresholds = sorted({start for t in tiers.values() if t is not None for start, _ in t[1]})
    long_context = [{"above_tokens": threshold, **level(threshold)} for threshold in thresholds]

    our_prices = ours.prices if ours else None
    if our_prices is not None:
        if "cached_input" not in base and our_prices.cached_input is not None:
            base["cached_input"] = our_prices.cached_input
            kept.append("cached_input")
        if "cache_write" not in base and our_prices.cache_write:
            base["cache_write"] = dict(our_prices.cache_write)
            kept.append("cache_write")
        elif "cache_write" in base and our_prices.cache_write:
            unpriced = {ttl: v for ttl, v in our_prices.cache_write.items() if ttl not in base["cache_write"]}
            if unpriced:
                base["cache_write"] = _by_ttl({**base["cache_write"], **unpriced})
                kept.extend(f"cache_write.{ttl}" for ttl in unpriced)
        if our_prices.cache_storage_per_hour is not None:
            base["cache_storage_per_hour"] = our_prices.cache_storage_per_hour
            kept.append("cache_storage_per_hour")
        if ours is not None:
            long_context = _merge_tiers(ours, long_context, kept)

    version: dict[str, Any] = {"prices": base}
    if long_context:
        version["long_context"] = long_context
    batch = _batch(model, price, as_of, name, given_only=data.batch_prices_partial)
    if batch is not None:
        discount, parts, batch_notes = batch
        notes.extend(batch_notes)
        if discount is not None:
            if data.batch_prices_partial and ours is not None and ours.batch_discount is not None:
                given = {_PART_OF_KEY[k] for k in _batch_keys(model, as_of) or ()}
                unknown = [p for p in ours.batch_applies_to if p not in given and p not in parts]
                if unknown:
                    parts = tuple(
                        p for p in ("input", "cached_input", "cache_write", "output") if p in {*parts, *unknown}
                    )
                    kept.append(f"batch_applies_to ({', '.join(unknown)})")
            version["batch_discount"] = discount
            version["batch_applies_to"] = parts
    elif ours is not None and ours.batch_discount is not None:
        version["batch_discount"] = ours.batch_discount
        version["batch_applies_to"] = ours.batch_applies_to
        kept.append("batch_discount")

    checked = _checked_date(model.price_comments, provider_comments)
    if checked is not None and data.read is not None and checked > data.read:
        checked = None  # a date past the list's own is a scheduled change, not a check
    read = checked or data.read or today
    where = f" (checked {checked.isoformat()} per its comments)" if checked else ""
    effective = start or as_of
    lines = [f"Proposal imported from {data.document}, model {model.id!r}{where}; not checked by hand."]
    if start is None:
        lines.append(f"{name} gives no start date for this price: effective is the import date {as_of}.")
    else:
        lines.append(f"{name} dates this price from {start.isoformat()}.")
    if kept:
        lines.append(f"Kept from our previous version ({name} does not give them): {', '.join(kept)}.")
    lines.extend(n if n.endswith(".") else n + "." for n in notes)
    source_note = "Proposal, not a reviewed source."
    if pricing_url:
        source_note += f" {name} cites {pricing_url}."
    if model.price_comments:
        source_note += f" Its comment: {model.price_comments.strip()}"
    version.update(
        effective=effective,
        note=" ".join(lines),
        source={"url": data.source_url, "document": data.document, "read": read, "note": source_note},
    )
    return Proposal(
        provider=provider_id,
        genai_id=model.id,
        genai_name=model.name,
        version=ServerlessPriceVersion.model_validate(version),
        start_date=start,
        deprecated=bool(model.deprecated),
        kept=tuple(kept),
        ignored=ignored,
    )


# --- the diff --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FieldChange:
    field: str
    old: Any
    new: Any


@dataclass
class DiffEntry:
    provider: str
    status: Status
    model: str
    """Our model name, or genai-prices' id for a new model."""
    offer_id: str | None = None
    genai_id: str | None = None
    old: ServerlessPriceVersion | None = None
    """Our version in force on the as-of date."""
    proposal: Proposal | None = None
    changes: list[FieldChange] = field(default_factory=list)
    writable: bool = False
    reason: str | None = None
    """Why the entry cannot be written (or why it is missing)."""
    write_effective: dt.date | None = None
    ours_read: dt.date | None = None
    """The newest day any version of our offer was read from its source (what a list must be newer than)."""
    ours_source: str | None = None
    """The source of our version in force, as the sheet cites it."""


@dataclass
class ImportReport:
    package_version: str
    document: str
    as_of: dt.date
    entries: list[DiffEntry]
    providers_without_sheet: list[str]
    """genai-prices providers we have no sheet for (not compared, cannot be written)."""
    not_current: dict[str, list[str]] = field(default_factory=dict)
    """List models of our providers that no offer matches and that the list gives no sign of being sold
    now (see :func:`is_current`), by provider: counted, not listed as new."""

    def by_status(self, status: Status) -> list[DiffEntry]:
        return [e for e in self.entries if e.status == status]


def _flat(version: ServerlessPriceVersion) -> dict[str, Any]:
    """Comparable fields: ``input``, ``cache_write.5m``, ``long_context[>200000].output``, ``batch_discount`` ..."""
    out: dict[str, Any] = {}

    def prices(prefix: str, p: Any) -> None:
        for name in ("input", "cached_input", "output", "cache_storage_per_hour"):
            value = getattr(p, name)
            if value is not None:
                out[prefix + name] = Decimal(value)
        for ttl, value in (p.cache_write or {}).items():
            out[f"{prefix}cache_write.{ttl}"] = Decimal(value)

    prices("", version.prices)
    for tier in version.long_context:
        prices(f"long_context[>{tier.above_tokens}].", tier)
    if version.batch_discount is not None:
        out["batch_discount"] = Decimal(version.batch_discount)
        out["batch_applies_to"] = ",".join(version.batch_applies_to)
    return out


def _changes(old: ServerlessPriceVersion, new: ServerlessPriceVersion) -> list[FieldChange]:
    a, b = _flat(old), _flat(new)
    return [FieldChange(k, a.get(k), b.get(k)) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


def _match(provider: Provider, offer: ServerlessOffer, all_providers: Sequence[Provider]) -> ModelInfo | None:
    names = [offer.model, offer.id, *([offer.base_model] if offer.base_model else [])]
    for name in names:
        for m in provider.models:  # an exact id first: genai-prices' match rules are prefix-based
            if m.id.lower() == name.lower():
                return m
    for name in names:
        found = provider.find_model(name.lower(), all_providers=list(all_providers))
        if found is not None and found in provider.models:
            return found
    wanted = {canonical_model(n) for n in names}
    return next((m for m in provider.models if {canonical_model(m.id), canonical_model(m.name or m.id)} & wanted), None)


def diff_sheets(
    catalog: PriceCatalog,
    as_of: dt.date | None = None,
    *,
    providers: Iterable[str] | None = None,
    models: Iterable[str] | None = None,
    data: GenaiData | None = None,
    today: dt.date | None = None,
) -> ImportReport:
    """Compare genai-prices with our serverless offers on ``as_of`` (default today).

    ``providers`` limits the comparison to these sheets (an unknown one is an InputError); ``models``
    to these model names (ours or genai-prices' ids, case-insensitive).
    """
    today = today or dt.date.today()
    as_of = as_of or today
    data = data or load_genai_data()
    wanted = [catalog.sheet(p).provider for p in providers] if providers else catalog.providers
    only = {m.lower() for m in models} if models else None
    entries: list[DiffEntry] = []
    not_current: dict[str, list[str]] = {}
    sold_elsewhere = _known_models(catalog)
    for provider_id in wanted:
        sheet = catalog.sheet(provider_id)
        ours = [o for o in sheet.offers if isinstance(o, ServerlessOffer)]
        gp = data.provider(provider_id)
        if gp is None:
            for offer in ours:
                if only is None or offer.model.lower() in only or offer.id in only:
                    entries.append(
                        DiffEntry(
                            provider_id,
                            "missing",
                            offer.model,
                            offer_id=offer.id,
                            reason=f"{data.list_name} has no provider {provider_id!r}",
                        )
                    )
            continue
        matched: set[str] = set()
        for offer in ours:
            model = _match(gp, offer, data.providers)
            if (
                only is not None
                and not ({offer.model.lower(), offer.id} | ({model.id.lower()} if model else set())) & only
            ):
                continue
            if model is None:
                entries.append(
                    DiffEntry(
                        provider_id,
                        "missing",
                        offer.model,
                        offer_id=offer.id,
                        reason=f"{_of(data.list_name)} {provider_id} has no model matching {offer.model!r}",
                    )
                )
                continue
            matched.add(model.id)
            try:
                listed = offer.listed_version(as_of)  # a retired offer is compared as listed, never proposed
            except InputError:
                listed = None
            current = listed if isinstance(listed, ServerlessPriceVersion) else None
            proposal = propose(
                provider_id,
                model,
                as_of,
                data,
                ours=current or offer.versions[-1],
                provider_comments=gp.price_comments,
                pricing_url=gp.pricing_urls[0] if gp.pricing_urls else None,
                today=today,
            )
            if proposal is None:
                entries.append(
                    DiffEntry(
                        provider_id,
                        "missing",
                        offer.model,
                        offer_id=offer.id,
                        genai_id=model.id,
                        reason=f"{_of(data.list_name)} {model.id!r} has no input and output token prices on {as_of}",
                    )
                )
                continue
            changes = _changes(current, proposal.version) if current else []
            status: Status = "changed" if current is None or changes else "same"
            newest = max(v.source.read for v in offer.versions)
            entry = DiffEntry(
                provider_id,
                status,
                offer.model,
                offer_id=offer.id,
                genai_id=model.id,
                old=current,
                proposal=proposal,
                changes=changes,
                ours_read=newest,
                ours_source=(current or offer.versions[-1]).source.url
                or (current or offer.versions[-1]).source.document,
            )
            listed_on = proposal.version.source.read
            if offer.retired is not None:  # a price for a model no longer sold here is never an improvement
                entry.status = "retired"
                entry.reason = (
                    f"retired here on {offer.retired.date.isoformat()}, still listed there "
                    f"({data.list_name} {model.id!r}); no version proposed"
                )
            elif status == "changed" and listed_on <= newest:
                entry.status = "older"
                entry.reason = (
                    f"{data.list_name} dates this price {listed_on.isoformat()}, not after our newest reading "
                    f"({newest.isoformat()}); nothing proposed"
                )
            elif status == "changed":
                latest = offer.versions[-1].effective
                effective = proposal.version.effective if proposal.version.effective > latest else as_of
                if effective > latest:
                    entry.writable, entry.write_effective = True, effective
                else:
                    entry.reason = (
                        f"our latest version of {offer.model} is effective {latest}; a new version needs a later "
                        "date (choose a later price date)"
                    )
            entries.append(entry)
        taken_ids = {o.id for o in ours}
        for model in gp.models if ours else ():  # a sheet without serverless offers sells something else
            if model.id in matched or model.deprecated:
                continue
            if only is not None and model.id.lower() not in only:
                continue
            if not is_current(model, as_of, gp.price_comments, sold_elsewhere):
                not_current.setdefault(provider_id, []).append(model.id)
                continue
            proposal = propose(
                provider_id,
                model,
                as_of,
                data,
                provider_comments=gp.price_comments,
                pricing_url=gp.pricing_urls[0] if gp.pricing_urls else None,
                today=today,
            )
            if proposal is None:
                continue
            entry = DiffEntry(provider_id, "new", model.id, genai_id=model.id, proposal=proposal)
            offer_id = _slug(model.id)
            if offer_id in taken_ids:
                entry.reason = f"our sheet already has an offer with the id {offer_id!r}"
            else:
                entry.writable, entry.write_effective = True, proposal.version.effective
            entries.append(entry)
    ours_ids = {PROVIDER_ALIASES.get(p, p) for p in catalog.providers}
    return ImportReport(
        package_version=data.version,
        document=data.document,
        as_of=as_of,
        entries=entries,
        providers_without_sheet=sorted(p.id for p in data.providers if p.id not in ours_ids),
        not_current=not_current,
    )


def _known_models(catalog: PriceCatalog) -> set[str]:
    """Canonical names of the models some sheet of ours sells or the calculator has a spec for."""
    names = {o.canonical_model for _, o in catalog.offers("serverless") if isinstance(o, ServerlessOffer)}
    with contextlib.suppress(DataFileError):  # without specs, only the sheets' models count
        names |= {canonical_model(n) for m in _model_specs().models for n in (m.id, *m.aliases)}
    return names


def is_current(model: ModelInfo, as_of: dt.date, provider_comments: str | None, known: set[str]) -> bool:
    """Whether a list model our sheet lacks is worth listing as new: a model another offer of ours sells or
    the calculator has a spec for; one the list gives batch prices for on ``as_of`` (genai-prices keeps
    batch variants for the models in the providers' current batch tables only); or one it dates within
    :data:`CURRENT_WITHIN_DAYS` (a price start or a checked date). Lists keep long-retired models undated
    and unflagged (OpenAI's ada and davinci in genai-prices), so such a model is counted, not listed."""
    if {canonical_model(model.id), canonical_model(model.name or model.id)} & known:
        return True
    if _batch_keys(model, as_of):
        return True
    dates = [d for d in (_checked_date(model.price_comments),) if d is not None]
    if isinstance(model.prices, list):
        from genai_prices.types import StartDateConstraint

        dates += [c.constraint.start_date for c in model.prices if isinstance(c.constraint, StartDateConstraint)]
    return any(0 <= (as_of - d).days <= CURRENT_WITHIN_DAYS for d in dates)


def _slug(model: str) -> str:
    return re.sub(r"[^a-z0-9._-]+", "-", model.lower()).strip("-")[:80]


# --- writing -------------------------------------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    """Decimals as plain numbers, and no anchors: a shared date object must not become ``&id001``."""

    def ignore_aliases(self, data: Any) -> bool:
        return True

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)  # lists indented under their key, as in the curated sheets


def _represent_decimal(dumper: yaml.SafeDumper, value: Decimal) -> yaml.ScalarNode:
    text = format(value, "f")
    if "." not in text:
        text += ".00"
    elif len(text.split(".")[1]) < 2:
        text += "0"
    return dumper.represent_scalar("tag:yaml.org,2002:float", text)


def _represent_list(dumper: yaml.SafeDumper, value: list[Any]) -> yaml.SequenceNode:
    flow = all(isinstance(v, str) for v in value)  # batch_applies_to: [input, output]
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=flow)


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = ">" if len(value) > 60 and "\n" not in value and value == value.strip() else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(Decimal, _represent_decimal)
_Dumper.add_representer(list, _represent_list)
_Dumper.add_representer(str, _represent_str)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _version_dict(version: ServerlessPriceVersion, effective: dt.date) -> dict[str, Any]:
    dumped = version.model_dump(mode="python", exclude_none=True)
    out: dict[str, Any] = {"effective": effective}
    if "note" in dumped:
        out["note"] = dumped["note"]
    out["source"] = dumped["source"]
    out["prices"] = dumped["prices"]
    if dumped.get("long_context"):
        out["long_context"] = [{"above_tokens": t.pop("above_tokens"), **t} for t in dumped["long_context"]]
    if dumped.get("batch_discount") is not None:
        out["batch_discount"] = dumped["batch_discount"]
        if tuple(dumped["batch_applies_to"]) != ("input", "output"):
            out["batch_applies_to"] = dumped["batch_applies_to"]
    return _plain(out)  # type: ignore[no-any-return]


@functools.cache
def _open_weights(model_id: str) -> bool:
    """Open weights when the calculator has an architecture spec for the model (the open models it can
    self-host); otherwise marked closed, and the offer's notes say it was not checked."""
    try:
        return model_id in _model_specs()
    except DataFileError:
        return False


@functools.cache
def _model_specs() -> Any:
    from calculator.catalog.models import load_model_specs

    return load_model_specs()


def _offer_dict(entry: DiffEntry) -> dict[str, Any]:
    assert entry.proposal is not None and entry.write_effective is not None
    p = entry.proposal
    open_weights = _open_weights(p.genai_id)
    notes = f"Imported from {p.version.source.document} (genai-prices model {p.genai_id!r}"
    notes += f", {p.genai_name!r})." if p.genai_name else ")."
    notes += (
        f" open_weights: {str(open_weights).lower()} "
        + ("(a model spec in models/ matches)." if open_weights else "(not given by genai-prices; check it).")
        + " Minimum cacheable length, cache increment and region not set (genai-prices does not give them)."
    )
    return {
        "kind": "serverless",
        "model": p.genai_id,
        "open_weights": open_weights,
        "notes": notes,
        "versions": [_version_dict(p.version, entry.write_effective)],
    }


def _dump_item(data: dict[str, Any], indent: int) -> str:
    text = yaml.dump([data], Dumper=_Dumper, sort_keys=False, width=100, allow_unicode=True, default_flow_style=False)
    return "".join((" " * indent + line) if line.strip() else line for line in text.splitlines(keepends=True))


def _node_end(node: yaml.Node) -> tuple[int, int]:
    ends = [(node.end_mark.line, node.end_mark.column)] if isinstance(node, yaml.ScalarNode) else []
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            ends += [_node_end(k), _node_end(v)]
    elif isinstance(node, yaml.SequenceNode):
        ends += [_node_end(v) for v in node.value]
    return max(ends) if ends else (node.end_mark.line, node.end_mark.column)


def _after(node: yaml.Node) -> int:
    """The line index just after ``node``'s last text (its trailing comments stay below the insertion)."""
    line, column = _node_end(node)
    return line if column == 0 else line + 1


def _dash_column(lines: list[str], item: yaml.Node) -> int:
    text = lines[item.start_mark.line]
    dash = text.rfind("-", 0, item.start_mark.column)
    if dash < 0:
        raise DataFileError([f"line {item.start_mark.line + 1}: cannot find the list item to append after"])
    return dash


def _value(mapping: yaml.Node, key: str) -> yaml.Node | None:
    if not isinstance(mapping, yaml.MappingNode):
        return None
    return next((v for k, v in mapping.value if getattr(k, "value", None) == key), None)


@dataclass(frozen=True)
class WriteResult:
    provider: str
    path: Path
    versions_added: tuple[str, ...]
    """Our offer ids that got a new version."""
    offers_added: tuple[str, ...]


def _offer_key(raw: dict[str, Any]) -> str:
    ident = raw.get("id") or _slug(str(raw.get("model", "")))
    return str(ident)


def _edit_sheet(path: Path, entries: list[DiffEntry]) -> tuple[str, WriteResult]:
    text = path.read_text(encoding="utf-8")
    if not text.endswith("\n"):
        text += "\n"
    lines = text.splitlines(keepends=True)
    before = parse_yaml(text, str(path))
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    offers_node = _value(root, "offers") if root is not None else None
    if not isinstance(offers_node, yaml.SequenceNode) or not offers_node.value:
        raise DataFileError([f"{path}: no offers list to append to"])
    raw_offers = before["offers"]
    inserts: list[tuple[int, int, str]] = []  # (line, order, text)
    expected_versions: dict[int, list[dict[str, Any]]] = {}  # what the edited file must add, to check it
    expected_offers: list[dict[str, Any]] = []
    added_versions, added_offers = [], []
    for order, entry in enumerate(entries):
        assert entry.proposal is not None and entry.write_effective is not None
        if entry.status == "changed":
            index = next(
                (
                    i
                    for i, raw in enumerate(raw_offers)
                    if raw.get("kind") == "serverless" and _offer_key(raw) == entry.offer_id
                ),
                None,
            )
            if index is None:
                raise DataFileError([f"{path}: offer {entry.offer_id!r} not found"])
            versions = _value(offers_node.value[index], "versions")
            if not isinstance(versions, yaml.SequenceNode) or not versions.value:
                raise DataFileError([f"{path}: offer {entry.offer_id!r} has no versions list"])
            last = versions.value[-1]
            item = _version_dict(entry.proposal.version, entry.write_effective)
            indent = _dash_column(lines, last)
            inserts.append((_after(last), order, _dump_item(item, indent)))
            expected_versions.setdefault(index, []).append(item)
            added_versions.append(str(entry.offer_id))
        else:
            last = offers_node.value[-1]
            item = _offer_dict(entry)
            inserts.append((_after(offers_node), 10_000 + order, _dump_item(item, _dash_column(lines, last))))
            expected_offers.append(item)
            added_offers.append(_slug(entry.model))
    for line, _, chunk in sorted(inserts, key=lambda x: (x[0], x[1]), reverse=True):
        lines.insert(line, chunk)
    new_text = "".join(lines)
    _check_additions(path, before, parse_yaml(new_text, str(path)), expected_versions, expected_offers)
    return new_text, WriteResult(
        provider=path.stem, path=path, versions_added=tuple(added_versions), offers_added=tuple(added_offers)
    )


def _check_additions(
    path: Path, before: Any, after: Any, versions: dict[int, list[dict[str, Any]]], offers: list[dict[str, Any]]
) -> None:
    """The edited sheet must be the old data plus exactly the additions; anything else aborts the write."""
    after_norm = yaml.safe_load(yaml.dump(after, Dumper=_Dumper))
    rebuilt = yaml.safe_load(yaml.dump(before, Dumper=_Dumper))
    for index, items in versions.items():
        rebuilt["offers"][index]["versions"].extend(items)
    rebuilt["offers"].extend(offers)
    rebuilt = yaml.safe_load(yaml.dump(rebuilt, Dumper=_Dumper))
    if after_norm != rebuilt:
        raise DataFileError([f"{path}: the edit would change more than the appended entries; nothing written"])


def write_proposals(report: ImportReport, sheets_dir: Path | None = None) -> list[WriteResult]:
    """Append every writable changed entry as a new version and every writable new entry as a new offer.

    Every sheet's edited text is made and checked before the first is written: it goes to a temporary
    ``<provider>.yaml`` beside the sheet, is validated with :func:`~calculator.catalog.prices.load_price_sheet`
    and checked to keep every existing version; only then is each written over its sheet by
    :func:`~calculator.catalog.staged_write.write_all`, all of them or none (it keeps their permissions), so a
    proposal that fails its check, a full disk or a read-only sheet leaves every sheet as it was. Entries
    that cannot be written are left out (see ``reason``).
    """
    sheets_dir = sheets_dir or DEFAULT_SHEETS_DIR
    by_provider: dict[str, list[DiffEntry]] = {}
    for entry in report.entries:
        if entry.writable and entry.status in ("changed", "new"):
            by_provider.setdefault(entry.provider, []).append(entry)
    for provider in by_provider:  # every sheet writable before the first is changed
        try:
            check_writable(sheets_dir / f"{provider}.yaml")
        except OSError as exc:
            raise DataFileError([f"{sheets_dir / f'{provider}.yaml'}: cannot write: {exc.strerror or exc}"]) from None
    edited: list[tuple[Path, str, WriteResult]] = []
    for provider, entries in by_provider.items():
        path = sheets_dir / f"{provider}.yaml"
        old_sheet = load_price_sheet(path)
        new_text, result = _edit_sheet(path, entries)
        tmp_dir = Path(tempfile.mkdtemp(prefix=".genai-import-", dir=sheets_dir))
        try:
            tmp = tmp_dir / path.name
            tmp.write_text(new_text, encoding="utf-8")
            new_sheet = load_price_sheet(tmp)
            _check_sheet(old_sheet, new_sheet, path)
        except OSError as exc:
            raise DataFileError([f"{path}: cannot write: {exc.strerror or exc}"]) from None
        finally:
            shutil.rmtree(tmp_dir, ignore_errors=True)
        edited.append((path, new_text, result))
    write_all([(path, new_text) for path, new_text, _ in edited])  # every sheet or none
    return [result for _, _, result in edited]


def _check_sheet(old: PriceSheet, new: PriceSheet, path: Path) -> None:
    new_offers = {(o.kind, o.id): o for o in new.offers}
    for offer in old.offers:
        now = new_offers.get((offer.kind, offer.id))
        if now is None or now.versions[: len(offer.versions)] != offer.versions:
            raise DataFileError([f"{path}: offer {offer.id!r} would lose or change a version; nothing written"])
        if now.model_dump(exclude={"versions"}) != offer.model_dump(exclude={"versions"}):
            raise DataFileError([f"{path}: offer {offer.id!r} would change; nothing written"])
