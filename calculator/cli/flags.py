"""Argument types shared by the commands: each turns one flag's text into a value or names what is allowed.

argparse calls them with the text after the flag; an :class:`argparse.ArgumentTypeError` becomes the
one-line error ``argument --flag: MESSAGE`` and exit status 2. Whole numbers may carry ``_`` or ``,``
as thousands separators (``1,000,000``); other numbers only where asked, so ``0,5`` is not read as 5.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
from decimal import Decimal
from typing import NoReturn

__all__ = [
    "Parser",
    "UsageError",
    "at_least_one",
    "count",
    "float_share",
    "iso_date",
    "number",
    "offer_ref",
    "positive",
    "seconds",
    "share",
    "whole_number",
]


class UsageError(Exception):
    """A command-line mistake; printed as one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    """argparse, but a mistake raises :class:`UsageError` (one line, exit 2) instead of exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def number(text: str, what: str = "a number", *, separators: bool = False) -> float:
    """Any number (``what`` names it in the error); ``separators``: a count that may read ``10,000``."""
    try:
        return float(text.replace("_", "").replace(",", "") if separators else text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None


def whole_number(text: str, what: str = "a whole number") -> int:
    """Any whole number, thousands separators allowed (``what`` names it in the error)."""
    try:
        return int(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None


def count(text: str) -> int:
    """A whole number of 0 or more: tokens, turns, replicas."""
    value = whole_number(text, "a whole number; give 0 or more")
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative; give 0 or more")
    return value


def at_least_one(text: str) -> int:
    """A whole number of 1 or more."""
    value = whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} must be 1 or more")
    return value


def _above_zero(text: str, what: str, unit: str) -> float:
    value = number(text, what)
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"{text} must be greater than 0{unit}")
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
        raise argparse.ArgumentTypeError(f"{text!r} is not a number; give a share between 0 and 1")
    if not (0 <= value <= 1):
        raise argparse.ArgumentTypeError(f"{text} is outside 0..1; give a share between 0 and 1 (0.9 = 90%)")
    return value


def float_share(text: str) -> float:
    """:func:`share` as a float, for settings that are not money."""
    return float(share(text))


def iso_date(text: str) -> dt.date:
    """A date as YYYY-MM-DD."""
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date; use YYYY-MM-DD, for example 2026-10-30") from None


def offer_ref(text: str) -> tuple[str, str]:
    """``PROVIDER:OFFER``, as the pair (provider, offer id)."""
    provider, sep, offer = text.partition(":")
    if not sep or not provider or not offer:
        raise argparse.ArgumentTypeError(f"{text!r} should be PROVIDER:OFFER, for example lambda:h100-sxm-8x")
    return provider, offer
