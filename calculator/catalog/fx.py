"""The currencies a cost can be shown in, and their dated default exchange rates (``data/fx_rates.yaml``).

One convention everywhere a rate is given: US dollars per unit of the currency, as the scenario file's
``fx.usd_per_eur`` and the command line's ``--usd-per-eur`` have always meant. Every price sheet currency
converts to every display currency through the dollar, so one rate per currency is all a scenario holds.
The data file states each default as its source publishes it (the ECB: units per euro) and this module
turns it into dollars per unit, so the file can be checked against the source figure by figure.
The app's rate fields are the one exception, because people type a rate as they read it: the yen and
the rupee per dollar, as markets quote them (:func:`quoted` and :func:`unquoted` turn them at that edge).
"""

from __future__ import annotations

import datetime as dt
from decimal import Context, Decimal
from functools import cache
from pathlib import Path
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from calculator.catalog import limits
from calculator.catalog.datafile import DATA_DIR, DataFileError, load_model
from calculator.catalog.limits import Limit

__all__ = [
    "CODES",
    "FX_FILE",
    "RATE_LIMITS",
    "CurrencyCode",
    "DefaultRate",
    "QUOTE_LIMITS",
    "default_rate",
    "default_rates",
    "quote_unit",
    "quoted",
    "rate_field",
    "unquoted",
]

CurrencyCode = Literal["USD", "EUR", "GBP", "JPY", "INR"]
"""A currency a scenario can be shown in and a price sheet can be priced in (the data file holds exactly these)."""
CODES: tuple[str, ...] = get_args(CurrencyCode)
FX_FILE = DATA_DIR / "fx_rates.yaml"
FIGURES = Context(prec=6)
"""A rate worked out through the euro keeps six significant figures: more than the source's five."""

RATE_LIMITS: dict[str, Limit] = limits.USD_PER_UNIT
"""The range each currency's rate (US dollars per unit) may take, on every path."""
assert set(RATE_LIMITS) == set(CODES) - {"USD"}, "every currency but the dollar needs its rate's limit"


INVERSE = Context(prec=12)
"""A typed rate turned into dollars keeps twelve significant figures: at 156.8 yen a dollar, a million dollars
is 156,800,000 yen, not 125 yen off, and the rate shown again is 156.8."""
QUOTE_LIMITS: dict[str, Limit] = {code: limits.UNITS_PER_USD.get(code, limit) for code, limit in RATE_LIMITS.items()}
"""The range of each rate as :func:`quoted` gives it."""


def quoted(code: str, usd_per_unit: Decimal) -> Decimal:
    """A rate the way markets and finance teams quote it, as the app's rate fields take it: units per dollar
    for the yen and the rupee (156.8 yen a dollar), dollars per unit for the euro and the pound (1.18)."""
    if code not in limits.UNITS_PER_USD:
        return usd_per_unit
    # six figures, as the ECB states its rates: 156.764 yen, not 156.763891632 from a rounded dollar rate
    value = FIGURES.divide(Decimal(1), usd_per_unit)
    return value.quantize(Decimal(1)) if value == value.to_integral_value() else value.normalize()


def unquoted(code: str, rate: Decimal) -> Decimal:
    """A rate as :func:`quoted` gives it, back in US dollars per unit (the scenario's convention)."""
    return INVERSE.divide(Decimal(1), rate) if code in limits.UNITS_PER_USD else rate


def quote_unit(code: str) -> str:
    """How :func:`quoted` states ``code``'s rate: ``JPY per USD``, ``USD per EUR``."""
    return f"{code} per USD" if code in limits.UNITS_PER_USD else f"USD per {code}"


def rate_field(code: str) -> str:
    """The scenario's field for a currency's rate: ``usd_per_eur``, ``usd_per_jpy``."""
    return f"usd_per_{code.lower()}"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class _RateEntry(_Frozen):
    """One currency as the data file states it: its rate as the source publishes it, dated and sourced."""

    code: CurrencyCode
    name: str
    usd_per_unit: Decimal | None = Field(default=None, gt=0)
    units_per_usd: Decimal | None = Field(default=None, gt=0)
    units_per_eur: Decimal | None = Field(default=None, gt=0)
    """As the ECB publishes it; turned into dollars through the euro's own entry."""
    date: dt.date | None = None
    """The day the rate is the reference rate of."""
    source: str | None = None
    read: dt.date | None = None
    note: str | None = None
    assumption: str | None = None
    """Where no source was found: why this figure, said wherever the rate is shown."""

    @model_validator(mode="after")
    def _one_rate_and_its_origin(self) -> _RateEntry:
        given = [f for f in ("usd_per_unit", "units_per_usd", "units_per_eur") if getattr(self, f) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of usd_per_unit, units_per_usd, units_per_eur")
        if self.code == "USD":
            if self.usd_per_unit != 1:
                raise ValueError("the dollar is the base: usd_per_unit: 1")
        elif self.assumption is None and not (self.source and self.read and self.date):
            raise ValueError("a rate needs its date, source and read date, or an assumption saying why it has none")
        return self


class _FxFile(_Frozen):
    schema_version: Literal[1]
    currencies: tuple[_RateEntry, ...]

    @model_validator(mode="after")
    def _every_currency_once(self) -> _FxFile:
        codes = tuple(c.code for c in self.currencies)
        if sorted(codes) != sorted(CODES) or len(set(codes)) != len(codes):
            raise ValueError(f"list each of {', '.join(CODES)} once (found {', '.join(codes)})")
        return self


class DefaultRate(_Frozen):
    """A currency's default rate in US dollars per unit, with where it comes from."""

    code: CurrencyCode
    name: str
    usd_per_unit: Decimal
    date: dt.date | None
    source: str | None
    read: dt.date | None
    note: str | None
    assumption: str | None

    @property
    def origin(self) -> str:
        """Where the default comes from, in a few words: ``ECB reference rate of 2026-05-08 (...)``."""
        if self.assumption:
            return f"an assumption: {self.assumption}"
        if self.source is None:
            return "the base currency"
        return f"reference rate of {self.date}, {self.source} (read {self.read})"


def _usd_per_unit(entry: _RateEntry, usd_per_eur: Decimal | None) -> Decimal:
    if entry.usd_per_unit is not None:
        return entry.usd_per_unit
    if entry.code in limits.UNITS_PER_USD:
        # a rate typed per dollar is its six-figure quote turned into dollars: the default held the same way,
        # so that the page's default field (156.764 yen) prices exactly as the command line's default
        return INVERSE.divide(Decimal(1), _units_per_usd(entry, usd_per_eur))
    if entry.units_per_usd is not None:
        return FIGURES.divide(Decimal(1), entry.units_per_usd)
    assert entry.units_per_eur is not None
    if usd_per_eur is None:
        raise ValueError(f"{entry.code}: units_per_eur needs the euro's own rate in the file")
    return FIGURES.divide(usd_per_eur, entry.units_per_eur)


def _units_per_usd(entry: _RateEntry, usd_per_eur: Decimal | None) -> Decimal:
    if entry.units_per_usd is not None:
        return FIGURES.plus(entry.units_per_usd)
    assert entry.units_per_eur is not None
    if usd_per_eur is None:
        raise ValueError(f"{entry.code}: units_per_eur needs the euro's own rate in the file")
    return FIGURES.divide(entry.units_per_eur, usd_per_eur)


def load_rates(path: Path) -> dict[str, DefaultRate]:
    """The file's rates by currency code, each in US dollars per unit."""
    data = load_model(path, _FxFile)
    euro = next((c for c in data.currencies if c.code == "EUR"), None)
    usd_per_eur = _usd_per_unit(euro, None) if euro is not None and euro.units_per_eur is None else None
    found: dict[str, DefaultRate] = {}
    for entry in data.currencies:
        rate = _usd_per_unit(entry, usd_per_eur)
        limit = RATE_LIMITS.get(entry.code)
        problem = limit.problem(rate) if limit is not None else None
        if problem:
            raise DataFileError([f"{path}: currencies[{entry.code}]: {problem} (US dollars per unit)"])
        found[entry.code] = DefaultRate(
            code=entry.code,
            name=entry.name,
            usd_per_unit=rate,
            date=entry.date,
            source=entry.source,
            read=entry.read,
            note=entry.note,
            assumption=entry.assumption,
        )
    return found


@cache
def default_rates() -> dict[str, DefaultRate]:
    """The bundled defaults, read once per process."""
    return load_rates(FX_FILE)


def default_rate(code: str) -> Decimal:
    """US dollars per unit of ``code`` by default (1 for the dollar)."""
    return default_rates()[code].usd_per_unit
