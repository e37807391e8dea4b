"""Public price lists read from a file or URL, as proposals for our serverless offers (``sheets refresh``).

Two well-kept formats are read:

- genai-prices' ``data.json`` (pydantic/genai-prices, ``prices/data.json``): a JSON array of providers,
  each with ``id``, ``api_pattern`` and ``models``, prices per million tokens.
- LiteLLM's model cost map (BerriAI/litellm, ``model_prices_and_context_window.json``; the litellm package
  ships it as ``model_prices_and_context_window_backup.json``): a JSON object of model name ->
  ``litellm_provider``, ``input_cost_per_token``, ... prices per token.

The format is told from the content, not the file name; anything else is refused, naming the file. Every
price a list gives is checked before anything is compared (a number, not negative, at most
:data:`MAX_PRICE_PER_MTOK` per million tokens) and a problem names the file and the entry's path. Both
lists become a :class:`~calculator.catalog.genai_prices.GenaiData`, so one diff and one writer
(:mod:`calculator.catalog.genai_prices`) serve ``sheets import-genai-prices`` and ``sheets refresh``.

A list never invents its source or its date: each proposal cites the list (its URL, its file name, or the
installed package and its version) and the list's own date, and :attr:`ListText.read_basis` says where
that date came from: given by the user (``--read-on``), the HTTP ``Date`` header of the response (its
``Last-Modified`` when the server sends no ``Date``), or the latest day the list's data says a price was
checked (genai-prices writes "checked"/"verified on" dates in its comments). A file's timestamp is never
a list's date (a file unpacked from a wheel is dated 1980-01-01 or 2020-02-02): a list that dates nothing
itself is refused unless the date is given.

``--from genai-prices`` and ``--from litellm`` name the installed packages' bundled lists
(:func:`installed_list`): genai-prices' Python data, and the cost map the litellm package ships.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import email.utils
import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from calculator.catalog.datafile import DataFileError
from calculator.catalog.download import download, shown_url
from calculator.catalog.genai_prices import (
    DiffEntry,
    GenaiData,
    ImportReport,
    diff_sheets,
    latest_check,
    load_genai_data,
)
from calculator.catalog.limits import TOKENS
from calculator.catalog.prices import PriceCatalog
from calculator.errors import InputError

if TYPE_CHECKING:
    from genai_prices.types import ModelInfo, ModelPrice

__all__ = [
    "FETCH_TIMEOUT_S",
    "LITELLM_PROVIDERS",
    "MAX_LIST_BYTES",
    "MAX_PRICE_PER_MTOK",
    "ListText",
    "PriceList",
    "Refresh",
    "installed_list",
    "parse_list",
    "read_list",
    "refresh",
]

MAX_LIST_BYTES = 32 * 1024 * 1024
"""Largest list read: LiteLLM's map is about 3.5 MB, genai-prices' data.json under 0.5 MB."""
FETCH_TIMEOUT_S = 30.0
"""Seconds to wait for a server to connect or send more of the list."""
MAX_PRICE_PER_MTOK = Decimal("99999999")
"""The largest price a sheet can hold (8 digits before the point); a larger one is a broken list."""
ReadBasis = Literal["given", "HTTP Date header", "HTTP Last-Modified header", "not dated", "the list's data"]
Format = Literal["genai-prices", "litellm"]
INSTALLED: tuple[Format, ...] = ("genai-prices", "litellm")
"""``--from`` names that read an installed package's bundled list rather than a file."""
LITELLM_MAP = "model_prices_and_context_window_backup.json"
"""The cost map inside the litellm package (the copy it falls back to without the network)."""

LITELLM_PROVIDERS: dict[str, str] = {
    "openai": "openai",
    "anthropic": "anthropic",
    "deepseek": "deepseek",
    "fireworks_ai": "fireworks",
    "gemini": "google",  # the Gemini API; vertex_ai-* entries are Google Cloud's prices, another sheet
    "groq": "groq",
    "together_ai": "together",
    "deepinfra": "deepinfra",
    "nebius": "nebius",
    "zai": "zai",
    "huggingface": "huggingface",
}
"""LiteLLM's ``litellm_provider`` -> our sheet's provider slug."""
_LITELLM_MODES = {None, "chat", "completion", "responses"}
_LITELLM_KEY = re.compile(
    r"^(?P<part>input_cost_per_token|output_cost_per_token|cache_read_input_token_cost"
    r"|cache_creation_input_token_cost(?:_above_1hr)?)(?:_above_(?P<k>\d+)k_tokens)?(?P<batch>_batches)?$"
)
_LITELLM_PART = {
    "input_cost_per_token": "input_mtok",
    "output_cost_per_token": "output_mtok",
    "cache_read_input_token_cost": "cache_read_mtok",
    "cache_creation_input_token_cost": "cache_write_mtok",
    "cache_creation_input_token_cost_above_1hr": "cache_write_1h_mtok",
}
_QUANTUM = Decimal("0.000001")
_MAX_K_DIGITS = len(str(int(TOKENS.high) // 1000))
"""A long-context threshold in thousands of tokens has at most this many digits (no context is longer)."""


# --- reading --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ListText:
    """A list's bytes as read, where from, and when."""

    location: str
    """The path or URL as given."""
    url: str | None
    body: bytes
    read: dt.date | None
    """The list's date so far; None for a file read without ``--read-on`` (the content may date itself)."""
    read_basis: ReadBasis
    last_modified: dt.date | None = None
    """The server's ``Last-Modified`` date, when it sent one (shown, never used as the read date
    unless the server sent no ``Date``)."""


def _is_url(source: str) -> bool:
    return re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", source) is not None


def read_list(
    source: str,
    read_on: dt.date | None = None,
    *,
    max_bytes: int = MAX_LIST_BYTES,
    timeout: float = FETCH_TIMEOUT_S,
) -> ListText:
    """The list at ``source`` (a path, or an http(s) URL) and the date it was read (``read_on`` wins)."""
    if _is_url(source):
        return _fetch(source, read_on, max_bytes=max_bytes, timeout=timeout)
    path = Path(source)
    try:
        info = path.stat()
        if not path.is_file():
            raise InputError("price_list.source", f"{source}: not a file")
        if info.st_size > max_bytes:
            raise InputError(
                "price_list.source", f"{source}: {info.st_size:,} bytes; a price list is at most {max_bytes:,}"
            )
        body = path.read_bytes()
    except FileNotFoundError:
        raise InputError("price_list.source", f"{source}: no such file") from None
    except OSError as exc:
        raise InputError("price_list.source", f"{source}: cannot read: {exc.strerror or exc}") from None
    if read_on is not None:
        return ListText(source, None, body, read_on, "given")
    return ListText(source, None, body, None, "not dated")  # never the file's timestamp


def _header_date(value: str | None) -> dt.date | None:
    if not value:
        return None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo and not dt.datetime.min.replace(tzinfo=dt.UTC) + dt.timedelta(days=1) < when < (
        dt.datetime.max.replace(tzinfo=dt.UTC) - dt.timedelta(days=1)
    ):
        return None  # year 1 or 9999 in a far time zone: no day in UTC, so no date the list was read
    return (when if when.tzinfo else when.replace(tzinfo=dt.UTC)).astimezone(dt.UTC).date()


def _fetch(url: str, read_on: dt.date | None, *, max_bytes: int, timeout: float) -> ListText:
    got = download(url, "price_list.source", max_bytes=max_bytes, timeout=timeout)
    body, headers = got.body, got.headers
    url = shown_url(url)  # as cited and shown: without a secret
    modified = _header_date(headers.get("last-modified"))
    if read_on is not None:
        return ListText(url, url, body, read_on, "given", modified)
    served = _header_date(headers.get("date"))
    if served is not None:
        return ListText(url, url, body, served, "HTTP Date header", modified)
    if modified is not None:
        return ListText(url, url, body, modified, "HTTP Last-Modified header", modified)
    raise InputError(
        "price_list.read_on",
        f"{url}: the server sent neither a Date nor a Last-Modified header; give the date the list was read",
    )


# --- parsing and checking ------------------------------------------------------------------------------


@dataclass(frozen=True)
class PriceList:
    """A list read and checked, in the form the diff reads."""

    format: Format
    name: str
    """``genai-prices data.json`` or ``LiteLLM model cost map``."""
    text: ListText
    data: GenaiData
    other_providers: dict[str, int] = dataclasses.field(default_factory=dict)
    """Token-priced entries of list providers we have no sheet for, by the list's provider name."""
    not_token_priced: int = 0
    """Entries the list prices otherwise (embeddings, images, audio ...), not compared."""
    duplicates: int = 0
    """Entries naming a model already listed for the same provider (the first one is used)."""


def _problem(text: ListText, where: str, message: str) -> DataFileError:
    return DataFileError([f"{text.location}: {where}: {message}"])


def _load_json(text: ListText) -> Any:
    def refuse_constant(name: str) -> Any:
        raise _problem(text, "JSON", f"{name} is not a number a price list may hold")

    try:
        decoded = text.body.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataFileError([f"{text.location}: not UTF-8 text (byte {exc.start})"]) from None
    try:
        return json.loads(decoded, parse_float=Decimal, parse_constant=refuse_constant)
    except DataFileError:
        raise
    except json.JSONDecodeError as exc:
        raise DataFileError(
            [f"{text.location}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"]
        ) from None
    except (ValueError, RecursionError) as exc:  # an integer of thousands of digits, or nesting past the stack
        raise DataFileError([f"{text.location}: not a JSON price list this calculator reads ({exc})"]) from None


def _price(text: ListText, where: str, value: Any, per_token: bool = False) -> Decimal:
    """A checked price per million tokens."""
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        raise _problem(text, where, f"expected a number, got {json.dumps(value, default=str)[:40]}")
    number = Decimal(value)
    if number < 0:
        raise _problem(text, where, f"{value} is negative; a price is 0 or more")
    limit = MAX_PRICE_PER_MTOK / 1_000_000 if per_token else MAX_PRICE_PER_MTOK
    if number > limit:
        unit = "per token" if per_token else "per million tokens"
        raise _problem(text, where, f"{value} is not a price (at most {limit} {unit})")
    return (number * 1_000_000 if per_token else number).quantize(_QUANTUM).normalize()


def _detect(text: ListText, raw: Any) -> Format:
    if isinstance(raw, list) and raw and all(isinstance(p, dict) and "models" in p for p in raw):
        return "genai-prices"
    if isinstance(raw, dict) and any(
        isinstance(v, dict) and ("litellm_provider" in v or any(_LITELLM_KEY.match(k) for k in v)) for v in raw.values()
    ):
        return "litellm"
    raise DataFileError(
        [
            f"{text.location}: not a price list this calculator reads; expected genai-prices' data.json "
            "(a JSON array of providers with models) or LiteLLM's model cost map (a JSON object of models with "
            "litellm_provider and input_cost_per_token)"
        ]
    )


def parse_list(text: ListText) -> PriceList:
    """Detect the list's format, check every price it gives and map it for the diff."""
    raw = _load_json(text)
    if _detect(text, raw) == "genai-prices":
        return _genai_list(text, raw)
    return _litellm_list(text, raw)


def _undated(text: ListText, what: str) -> InputError:
    return InputError(
        "price_list.read_on",
        f"{text.location}: {what} gives no date of its own, and a file's timestamp is not the list's date; "
        "give --read-on DATE (the day the list was published or downloaded)",
    )


def _dated(text: ListText, providers: Iterable[Any], what: str) -> ListText:
    """``text`` with the list's own date: the one given or sent, else the latest check its data names."""
    if text.read is not None:
        return text
    checked = latest_check(providers)
    if checked is None:
        raise _undated(text, what)
    return dataclasses.replace(text, read=checked, read_basis="the list's data")


def installed_list(name: str, read_on: dt.date | None = None) -> PriceList:
    """The list an installed package bundles: ``genai-prices`` (its Python data) or ``litellm`` (its cost map).

    genai-prices dates its data by the checks its comments name; LiteLLM's map names no date, and no package
    records its release date, so ``litellm`` needs ``read_on``."""
    from importlib.metadata import PackageNotFoundError, version

    if name == "genai-prices":
        data = load_genai_data()
        text = ListText(
            f"genai-prices {data.version} (installed package)",
            None,
            b"",
            read_on or data.read,
            "given" if read_on else "the list's data",
        )
        if text.read is None:
            raise _undated(text, "its data")
        dated = dataclasses.replace(data, read=text.read)
        return PriceList("genai-prices", f"genai-prices {data.version} package data", text, dated)
    if name != "litellm":
        raise InputError("price_list.source", f"{name!r} is no installed list; give genai-prices, litellm or a file")
    folder = _litellm_folder()
    try:
        release = version("litellm")
    except PackageNotFoundError:
        folder = None
    if folder is None or not (folder / LITELLM_MAP).is_file():
        raise InputError(
            "price_list.source",
            "--from litellm reads the cost map the litellm package ships, and litellm is not installed here "
            "(pip install litellm); or download model_prices_and_context_window.json from BerriAI/litellm and "
            "give it: --from FILE --read-on DATE",
        )
    path = folder / LITELLM_MAP
    if read_on is None:
        raise InputError(
            "price_list.read_on",
            f"litellm {release}'s cost map ({path}) gives no date of its own and the package records no release "
            f"date; give --read-on DATE, the day litellm {release} was released (its PyPI page)",
        )
    parsed = parse_list(read_list(str(path), read_on))
    document = f"LiteLLM model cost map (litellm {release} package)"
    text = dataclasses.replace(parsed.text, location=f"litellm {release} (installed package, {LITELLM_MAP})")
    data = dataclasses.replace(parsed.data, source_document=document)
    return dataclasses.replace(parsed, name=f"LiteLLM model cost map (litellm {release})", text=text, data=data)


def _litellm_folder() -> Path | None:
    """Where the litellm package is installed, found without importing it (an import takes seconds)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    return Path(locations[0]) if locations else None


def _where(text: ListText) -> tuple[str | None, str]:
    """(url, document) a proposal cites: the URL, or the file's name."""
    return (text.url, "") if text.url else (None, f" (file {Path(text.location).name})")


# genai-prices' data.json


def _check_genai_prices(text: ListText, where: str, prices: Any) -> None:
    if prices is None:
        return
    if not isinstance(prices, dict):
        raise _problem(text, where, "expected an object of prices per million tokens")
    for key, value in prices.items():
        at = f"{where}.{key}"
        if isinstance(value, dict):
            _price(text, f"{at}.base", value.get("base"))
            tiers = value.get("tiers")
            if not isinstance(tiers, list):
                raise _problem(text, f"{at}.tiers", "expected a list of {start, price}")
            for i, tier in enumerate(tiers):
                if not isinstance(tier, dict):
                    raise _problem(text, f"{at}.tiers[{i}]", "expected {start, price}")
                start = tier.get("start")
                if isinstance(start, bool) or not isinstance(start, int) or not 0 <= start <= 100_000_000:
                    raise _problem(text, f"{at}.tiers[{i}].start", "expected a whole number of tokens")
                _price(text, f"{at}.tiers[{i}].price", tier.get("price"))
        elif value is not None:
            _price(text, at, value)


def _check_genai(text: ListText, raw: list[Any]) -> None:
    for i, provider in enumerate(raw):
        pid = provider.get("id")
        if not isinstance(pid, str):
            raise _problem(text, f"[{i}].id", "expected the provider's id as text")
        models = provider.get("models")
        if not isinstance(models, list):
            raise _problem(text, f"{pid}.models", "expected a list of models")
        for j, model in enumerate(models):
            if not isinstance(model, dict):
                raise _problem(text, f"{pid}.models[{j}]", "expected an object")
            mid = model.get("id")
            at = f"{pid}.{mid if isinstance(mid, str) else f'models[{j}]'}"
            prices = model.get("prices")
            if isinstance(prices, list):
                for k, conditional in enumerate(prices):
                    if not isinstance(conditional, dict):
                        raise _problem(text, f"{at}.prices[{k}]", "expected {constraint, prices}")
                    _check_genai_prices(text, f"{at}.prices[{k}].prices", conditional.get("prices"))
            else:
                _check_genai_prices(text, f"{at}.prices", prices)
            variants = model.get("price_variants")
            if isinstance(variants, list):
                for k, variant in enumerate(variants):
                    if not isinstance(variant, dict):
                        raise _problem(text, f"{at}.price_variants[{k}]", "expected {when, prices}")
                    _check_genai_prices(text, f"{at}.price_variants[{k}].prices", variant.get("prices"))


def _genai_list(text: ListText, raw: list[Any]) -> PriceList:
    _check_genai(text, raw)
    try:
        from genai_prices.types import _providers_from_raw
    except ImportError:
        raise InputError(
            "price_list.source",
            f"{text.location} is genai-prices' data.json; reading it needs the genai-prices package "
            "(pip install 'inference-cost-calculator[genai-prices]')",
        ) from None
    try:
        providers = _providers_from_raw(raw)
    except Exception as exc:  # pydantic's ValidationError, or the package's own asserts on a clause
        errors = getattr(exc, "errors", None)
        if callable(errors):
            first = errors()[0]
            place = ".".join(str(p) for p in first.get("loc", ())) or "data"
            raise _problem(text, place, str(first.get("msg", exc))) from None
        raise DataFileError([f"{text.location}: not a genai-prices data.json this calculator reads ({exc})"]) from None
    text = _dated(text, providers, "this genai-prices data.json")
    url, in_file = _where(text)
    data = GenaiData(
        version="data.json",
        providers=tuple(providers),
        list_name="genai-prices",
        source_document=f"genai-prices data.json{in_file}",
        source_url=url,
        read=text.read,
    )
    return PriceList("genai-prices", "genai-prices data.json", text, data)


# LiteLLM's model cost map


def _litellm_prices(text: ListText, name: str, entry: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(standard, batch) genai-prices price keys of one entry, each a price or {base, tiers}."""
    found: dict[tuple[bool, str], dict[int | None, Decimal]] = {}
    for key, value in entry.items():
        match = _LITELLM_KEY.match(key)
        if match is None:
            continue
        where = f"{json.dumps(name[:80])}.{key if len(key) <= 80 else key[:60] + '...'}"
        if match["k"] and len(match["k"].lstrip("0")) > _MAX_K_DIGITS:  # read as digits: int() refuses 4,300
            raise _problem(text, where, f"a threshold of {len(match['k']):,} digits; {TOKENS.allowed} is allowed")
        price = _price(text, where, value, per_token=True)
        start = int(match["k"]) * 1000 if match["k"] else None
        found.setdefault((bool(match["batch"]), _LITELLM_PART[match["part"]]), {})[start] = price
    out: tuple[dict[str, Any], dict[str, Any]] = ({}, {})
    for (batch, key), by_start in found.items():
        base = by_start.pop(None, None)
        if base is None:
            continue  # a long-context price without its base price: nothing to attach it to
        if key in ("cache_write_mtok", "cache_write_1h_mtok") and base == 0 and not any(by_start.values()):
            continue  # LiteLLM writes 0 where writing the cache is free: our sheets leave cache_write out
        out[batch][key] = {"base": base, "tiers": sorted(by_start.items())} if by_start else base
    return out


def _model_price(prices: dict[str, Any]) -> ModelPrice:
    from genai_prices.types import ModelPrice, Tier, TieredPrices

    built: dict[str, Decimal | TieredPrices] = {}
    for key, value in prices.items():
        if isinstance(value, dict):
            built[key] = TieredPrices(base=value["base"], tiers=[Tier(start=s, price=p) for s, p in value["tiers"]])
        else:
            built[key] = value
    return ModelPrice(**built)


def _litellm_model(
    model_id: str, name: str, entry: dict[str, Any], prices: tuple[dict[str, Any], dict[str, Any]], read: dt.date
) -> ModelInfo:
    from genai_prices.types import ClauseEquals, ModelInfo, PriceVariant

    standard, batch = prices
    retired = None
    comments = None
    raw_date = entry.get("deprecation_date")
    if isinstance(raw_date, str):
        try:
            retired = dt.date.fromisoformat(raw_date)
            comments = f"LiteLLM lists a deprecation date of {retired.isoformat()} (entry {name!r})."
        except ValueError:
            retired = None
    variants = [PriceVariant(when={"processing": "batch"}, prices=_model_price(batch))] if batch else None
    return ModelInfo(
        id=model_id,
        match=ClauseEquals(equals=model_id.lower()),
        name=name,
        price_comments=comments,
        deprecated=retired is not None and retired <= read,
        prices=_model_price(standard),
        price_variants=variants,
    )


def _litellm_list(text: ListText, raw: dict[str, Any]) -> PriceList:
    try:
        from genai_prices.types import Provider
    except ImportError:
        raise InputError(
            "price_list.source",
            f"{text.location} is LiteLLM's cost map; comparing it needs the genai-prices package's price model "
            "(pip install 'inference-cost-calculator[genai-prices]')",
        ) from None
    models: dict[str, dict[str, ModelInfo]] = {}
    other: Counter[str] = Counter()
    not_token_priced = duplicates = 0
    read = text.read
    if read is None:
        raise _undated(text, "LiteLLM's cost map")
    for name, entry in raw.items():
        if name == "sample_spec":  # LiteLLM's description of the fields, not a model
            continue
        if not isinstance(entry, dict):
            raise _problem(text, json.dumps(name), "expected an object of prices")
        provider = entry.get("litellm_provider")
        if provider is not None and not isinstance(provider, str):
            raise _problem(text, f"{json.dumps(name)}.litellm_provider", "expected the provider's name as text")
        mode = entry.get("mode")
        if mode is not None and not isinstance(mode, str):
            raise _problem(text, f"{json.dumps(name)}.mode", "expected text such as chat")
        standard, batch = _litellm_prices(text, name, entry)  # every entry's prices are checked
        if mode not in _LITELLM_MODES or "input_mtok" not in standard or "output_mtok" not in standard:
            not_token_priced += 1
            continue
        ours = LITELLM_PROVIDERS.get(provider or "")
        if ours is None:
            other[provider or "(no provider)"] += 1
            continue
        model_id = name[len(provider) + 1 :] if provider and name.startswith(f"{provider}/") else name
        if model_id.lower() in models.setdefault(ours, {}):
            duplicates += 1
            continue
        models[ours][model_id.lower()] = _litellm_model(model_id, name, entry, (standard, batch), read)
    url, in_file = _where(text)
    data = GenaiData(
        version="model cost map",
        providers=tuple(
            Provider(id=p, name=p, api_pattern="", models=list(found.values())) for p, found in sorted(models.items())
        ),
        list_name="LiteLLM",
        source_document=f"LiteLLM model cost map{in_file}",
        source_url=url,
        read=read,
        batch_prices_partial=True,
    )
    return PriceList(
        "litellm", "LiteLLM model cost map", text, data, dict(sorted(other.items())), not_token_priced, duplicates
    )


# --- the refresh ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Refresh:
    """A list compared with our sheets: new versions proposed for the offers whose prices differ."""

    price_list: PriceList
    report: ImportReport

    def _of(self, status: str) -> list[DiffEntry]:
        return [e for e in self.report.entries if e.status == status]

    @property
    def proposals(self) -> list[DiffEntry]:
        return self._of("changed")

    @property
    def same(self) -> list[DiffEntry]:
        return self._of("same")

    @property
    def missing(self) -> list[DiffEntry]:
        """Our offers the list does not price (or has no such provider)."""
        return self._of("missing")

    @property
    def retired(self) -> list[DiffEntry]:
        """Offers retired here that the list still prices: reported, never proposed."""
        return self._of("retired")

    @property
    def older(self) -> list[DiffEntry]:
        """Offers the list prices differently but dates no later than our newest reading: nothing proposed."""
        return self._of("older")

    @property
    def tiers_kept(self) -> dict[str, list[str]]:
        """Long-context tiers of ours the list does not give, by ``provider offer``: kept, not deleted."""
        kept = {}
        for e in [*self.proposals, *self.same]:
            tiers = [k for k in (e.proposal.kept if e.proposal else ()) if k.startswith("long_context[")]
            if tiers:
                kept[f"{e.provider} {e.offer_id}"] = tiers
        return kept

    @property
    def unmatched(self) -> dict[str, int]:
        """List models of our providers that no offer of ours matches, by provider (summarised, not proposed)."""
        counts = Counter(e.provider for e in self._of("new"))
        for provider, names in self.report.not_current.items():
            counts[provider] += len(names)
        return dict(sorted(counts.items()))

    @property
    def other_providers(self) -> dict[str, int]:
        """The list's entries for providers we have no sheet for, by the list's provider name."""
        if self.price_list.other_providers:
            return self.price_list.other_providers
        counts = {}
        for provider_id in self.report.providers_without_sheet:
            provider = self.price_list.data.provider(provider_id)
            counts[provider_id] = len(provider.models) if provider is not None else 0
        return counts

    @property
    def writable_report(self) -> ImportReport:
        """The report with only the new versions for offers we have: a refresh never adds offers."""
        return dataclasses.replace(self.report, entries=[e for e in self.proposals if e.writable])


def refresh(
    catalog: PriceCatalog,
    price_list: PriceList,
    as_of: dt.date | None = None,
    *,
    providers: Iterable[str] | None = None,
    models: Iterable[str] | None = None,
) -> Refresh:
    """Compare ``price_list`` with our serverless offers in force on ``as_of`` (default: the list's date)."""
    read = price_list.data.read or price_list.text.read
    if read is None:  # parse_list and installed_list date every list; a hand-made one must too
        raise _undated(price_list.text, "this list")
    report = diff_sheets(
        catalog,
        as_of or read,
        providers=providers,
        models=models,
        data=price_list.data,
        today=read,
    )
    return Refresh(price_list, report)
