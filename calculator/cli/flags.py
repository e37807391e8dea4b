"""Argument types shared by the commands: each turns one flag's text into a value or names what is allowed.

argparse calls them with the text after the flag; an :class:`argparse.ArgumentTypeError` becomes the
one-line error ``argument --flag: MESSAGE`` and exit status 2. Whole numbers may carry ``_`` or ``,``
as thousands separators (``1,000,000``); other numbers only where asked, so ``0,5`` is not read as 5.

A flag that sets something the scenario or a core function also takes is read with the same
:class:`~calculator.catalog.limits.Limit` they check (``tokens``, ``turns_per_month`` ...), so the
command line refuses exactly what a scenario file or a page refuses, before any work is done.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import re
from collections.abc import Callable
from decimal import Decimal
from typing import NoReturn

from calculator.catalog import limits
from calculator.catalog.limits import Limit
from calculator.catalog.quantity import QuantityError, read_quantity
from calculator.errors import CalculatorError

__all__ = [
    "Parser",
    "UsageError",
    "active_hours",
    "at_least_one",
    "balance",
    "cache_tokens",
    "context",
    "count",
    "echo",
    "engineer_share",
    "float_share",
    "fx_rate",
    "gpus",
    "iso_date",
    "limited",
    "minutes",
    "number",
    "offer_ref",
    "peak_to_average",
    "positive",
    "replicas",
    "seconds",
    "sessions_per_month",
    "share",
    "simulated_replicas",
    "tokens",
    "turns",
    "turns_per_day",
    "turns_per_month",
    "turns_per_session",
    "turns_per_user_per_day",
    "usd_per_eur",
    "users",
    "utilisation",
    "whole_number",
]


class UsageError(CalculatorError):
    """A command-line mistake; printed as one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    """argparse, but a mistake raises :class:`UsageError` (one line, exit 2) instead of exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def echo(text: str) -> str:
    """The user's text quoted in an error: a long one cut short, so the error stays one readable line."""
    return repr(text) if len(text) <= 40 else f"{text[:32]!r}... ({len(text):,} characters)"


def _plain(text: str) -> str:
    """As :func:`echo`, unquoted: for text already read as a number."""
    return text if len(text) <= 40 else f"{text[:32]}... ({len(text):,} characters)"


def number(text: str, what: str = "a number", *, separators: bool = False) -> float:
    """Any number (``what`` names it in the error); ``separators``: a count that may read ``10,000``."""
    try:
        return float(text.replace("_", "").replace(",", "") if separators else text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{echo(text)} is not {what}") from None


_DIGITS = re.compile(r"[+-]?[0-9]+")
_MAX_DIGITS = 30
"""Longer whole numbers are not read at all (Python refuses past 4,300 digits): no limit reaches them."""


def _digits(text: str) -> int:
    """How many digits a whole number has, when it has too many to read (else 0)."""
    cleaned = text.replace("_", "").replace(",", "")
    digits = len(cleaned.lstrip("+-"))
    return digits if _DIGITS.fullmatch(cleaned) and digits > _MAX_DIGITS else 0


def whole_number(text: str, what: str = "a whole number") -> int:
    """Any whole number, thousands separators allowed (``what`` names it in the error)."""
    cleaned = text.replace("_", "").replace(",", "")
    if _digits(text):
        raise argparse.ArgumentTypeError(f"a {_digits(text):,}-digit number is too large for any count")
    try:
        return int(cleaned)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{echo(text)} is not {what}") from None


def count(text: str) -> int:
    """A whole number of 0 or more: tokens, turns, replicas."""
    value = whole_number(text, "a whole number; give 0 or more")
    if value < 0:
        raise argparse.ArgumentTypeError(f"{_plain(text)} is negative; give 0 or more")
    return value


def at_least_one(text: str) -> int:
    """A whole number of 1 or more."""
    value = whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{_plain(text)} must be 1 or more")
    return value


MAX_WORKERS = 1024


def workers(text: str) -> int:
    """Processes that tokenise and hash a log: 1 to 1,024 (beyond the cores, more only adds overhead)."""
    value = at_least_one(text)
    if value > MAX_WORKERS:
        raise argparse.ArgumentTypeError(
            f"{_plain(text)} is more than {MAX_WORKERS:,} processes; give 1 to {MAX_WORKERS:,}"
        )
    return value


def _above_zero(text: str, what: str, unit: str) -> float:
    value = number(text, what)
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"{_plain(text)} must be greater than 0{unit}")
    return value


def positive(text: str) -> float:
    """A finite number greater than 0."""
    return _above_zero(text, "a number", "")


def seconds(text: str) -> float:
    """A finite number of seconds greater than 0."""
    return _above_zero(text, "a number of seconds", " seconds")


def share(text: str) -> Decimal:
    """A share between 0 and 1 (0.9 = 90%), exact."""
    try:
        value = Decimal(text)
    except ArithmeticError:
        value = Decimal("NaN")
    if value.is_nan():
        raise argparse.ArgumentTypeError(f"{echo(text)} is not a number; give a share between 0 and 1")
    if not (0 <= value <= 1):
        raise argparse.ArgumentTypeError(f"{_plain(text)} is outside 0..1; give a share between 0 and 1 (0.9 = 90%)")
    return value


def float_share(text: str) -> float:
    """:func:`share` as a float, for settings that are not money."""
    return float(share(text))


def limited(limit: Limit, *, whole: bool = False, separators: bool = False) -> Callable[[str], float]:
    """A converter for a flag whose value the domain bounds: ``limit`` refuses it as it refuses a scenario's.

    ``whole``: a whole number, read as :mod:`calculator.catalog.quantity` reads one (``3M``, ``1,000,000``);
    ``separators``: any number read that way; else any number as Python writes it.
    """

    def convert(text: str) -> float:
        if whole or separators:  # counts and volumes read as people type them (3M, 2.5k, 1,000,000)
            try:
                return read_quantity(text, limit, whole=whole)
            except QuantityError as exc:
                raise argparse.ArgumentTypeError(str(exc)) from None
        value = number(text)
        problem = limit.problem(value, _plain(text))
        if problem:
            raise argparse.ArgumentTypeError(f"{problem} (allowed: {limit.allowed})")
        return value

    return convert


def _whole(limit: Limit) -> Callable[[str], int]:
    convert = limited(limit, whole=True)

    def whole(text: str) -> int:
        return int(convert(text))

    return whole


def tokens(text: str) -> int:
    """Tokens in a turn's input or output: 0 to 10^7 (the most a context window holds)."""
    return _whole(limits.TOKENS)(text)


def context(text: str) -> int:
    """A sequence's context, a cached prefix, a cache block: 1 to 10^7 tokens."""
    return _whole(limits.CONTEXT)(text)


def cache_tokens(text: str) -> int:
    """A prefix cache's size per replica: 0 to 10^12 tokens."""
    return _whole(limits.CACHE_TOKENS)(text)


def turns_per_month(text: str) -> int:
    """A month's volume: 0 to 10^12 turns."""
    return _whole(limits.TURNS_PER_MONTH)(text)


def turns_per_day(text: str) -> float:
    """A day's volume: as many as make at most 10^12 a month; a fraction is kept (82.2 a day is 2,500 a
    month, as the page shows it), the month is rounded to whole turns."""
    return limited(limits.TURNS_PER_DAY)(text)


def users(text: str) -> int:
    """People (seats) the traffic serves: 1 to 10^10."""
    return _whole(limits.USERS)(text)


def turns_per_user_per_day(text: str) -> float:
    """Turns each user sends a day: 0 to 86,400 (one a second)."""
    return limited(limits.TURNS_PER_USER_PER_DAY)(text)


def turns(text: str) -> int:
    """Turns to total: 0 to 10^12."""
    return _whole(limits.TURNS)(text)


def replicas(text: str) -> int:
    """Replicas of a deployment (spares, minimums): 0 to 100,000."""
    return _whole(limits.REPLICAS)(text)


def simulated_replicas(text: str) -> int:
    """Replicas a prefix cache is simulated on: 1 to 100,000."""
    return _whole(limits.SIMULATED_REPLICAS)(text)


def gpus(text: str) -> int:
    """GPUs in one replica: 1 to 1,024."""
    return _whole(limits.GPUS_PER_REPLICA)(text)


def peak_to_average(text: str) -> float:
    """A peak-to-average ratio or a within-hour burst: 1 to 2,628,000 (a month's seconds)."""
    return limited(limits.PEAK_TO_AVERAGE)(text)


def active_hours(text: str) -> float:
    """Hours a day the traffic arrives in: a minute to 24."""
    return limited(limits.ACTIVE_HOURS)(text)


def utilisation(text: str) -> float:
    """The share of a replica's capacity planned for at peak: 0.01 to 1."""
    return limited(limits.UTILISATION)(text)


def minutes(text: str) -> float:
    """A start-up or an engine build: 0 to 1,440 minutes."""
    return limited(limits.MINUTES)(text)


def usd_per_eur(text: str) -> float:
    """The exchange rate: 0.01 to 100 US dollars per euro."""
    return limited(limits.USD_PER_EUR)(text)


FX_FORM = (
    "CUR=RATE, RATE as markets quote it: US dollars per unit of EUR or GBP (EUR=1.18, GBP=1.36), units of JPY "
    "or INR per US dollar (JPY=156.8, INR=94.5)"
)
"""What ``--fx`` takes, as its help and its error say it: the app's rate fields take the same."""


def fx_rate(text: str) -> tuple[str, float]:
    """``CUR=RATE``: a currency's exchange rate as markets quote it (:func:`calculator.catalog.fx.quoted`),
    given back in US dollars per unit, as ``--usd-per-eur`` takes the euro's."""
    from calculator.catalog.fx import QUOTE_LIMITS, unquoted  # only `compare` reads rates: not on `turn`'s path

    code, sep, rate = text.partition("=")
    code = code.strip().upper()
    if not sep or code not in QUOTE_LIMITS:
        codes = ", ".join(QUOTE_LIMITS)
        raise argparse.ArgumentTypeError(f"{echo(text)} should be {FX_FORM}; CUR one of {codes}")
    try:
        quoted = limited(QUOTE_LIMITS[code])(rate)
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"{code}: {exc}") from None
    return code, float(unquoted(code, Decimal(repr(quoted))))


def engineer_share(text: str) -> float:
    """A platform engineer's time on the stack: 0 to 5 engineers."""
    return limited(limits.ENGINEER_SHARE)(text)


def balance(text: str) -> float:
    """Prefix-aware routing's load slack: 0 to 100,000 times the mean load."""
    return limited(limits.BALANCE)(text)


def turns_per_session(text: str) -> float:
    """Turns in a session: 1 to 10^6."""
    return limited(limits.TURNS_PER_SESSION)(text)


def sessions_per_month(text: str) -> float:
    """Sessions a month, thousands separators allowed: 0 to 10^12."""
    return limited(limits.SESSIONS_PER_MONTH, separators=True)(text)


def iso_date(text: str) -> dt.date:
    """A date as YYYY-MM-DD."""
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{echo(text)} is not a date; use YYYY-MM-DD, for example 2026-10-30"
        ) from None


def offer_ref(text: str) -> tuple[str, str]:
    """``PROVIDER:OFFER``, as the pair (provider, offer id); ``cheapest`` lets the deployment search pick."""
    if text.strip().lower() == "cheapest":
        return "any", "cheapest"
    provider, sep, offer = text.partition(":")
    if not sep or not provider or not offer:
        raise argparse.ArgumentTypeError(
            f"{echo(text)} should be PROVIDER:OFFER, for example lambda:h100-sxm-8x, or cheapest"
        )
    return provider, offer
