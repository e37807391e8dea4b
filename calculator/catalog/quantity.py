"""Reading a number the way people type one: ``3M``, ``3e6``, ``2.5k``, ``1,000,000``, ``3 000 000``.

Volumes and token counts are large round numbers, and people write them short. One reader here serves
every way in (the app's volume and token fields, their URL parameters, the command line's flags), so
``3M`` means three million everywhere and is refused for the same reasons everywhere.

What it refuses rather than guesses: a comma that is not a thousands separator (``1,5`` could be one and
a half or fifteen), a fraction where a whole number is asked for (``1.5`` turns), ``nan`` and ``inf``,
and anything longer than :data:`MAX_LENGTH` characters or larger than 10^:data:`MAX_EXPONENT` (so no
input takes more than microseconds to read). Exact: ``2.5k`` is 2500 and ``1.1M`` is 1,100,000, read
as decimals, never through a binary float.
"""

from __future__ import annotations

import re
from decimal import Context, Decimal, InvalidOperation

from calculator.catalog.limits import Limit
from calculator.errors import CalculatorError

__all__ = ["MAX_EXPONENT", "MAX_LENGTH", "SUFFIXES", "QuantityError", "plain", "read", "read_quantity"]

MAX_LENGTH = 60
"""Longest text read at all: ``1,000,000,000,000`` with a suffix and spaces fits many times over."""
MAX_EXPONENT = 30
"""Numbers past 10^30 are not read: no limit reaches them, and Python refuses to print past 4,300 digits."""
SUFFIXES: dict[str, int] = {
    "k": 3,
    "thousand": 3,
    "m": 6,
    "mn": 6,
    "mio": 6,
    "million": 6,
    "b": 9,
    "bn": 9,
    "billion": 9,
    "t": 12,
    "tn": 12,
    "trillion": 12,
}
"""Case-insensitive words for powers of ten after a number (``m`` is a million: no count is in thousandths)."""

_SPACES = "\u00a0\u2009\u202f"
"""No-break, thin and narrow no-break spaces: what word processors and French locales put between groups."""
_NUMBER = re.compile(
    r"""(?P<sign>[+-]?)
        (?P<int>\d+(?:(?P<sep>[,_' ])\d{3}(?:(?P=sep)\d{3})*)?)?
        (?P<frac>\.\d*)?
        (?:[eE](?P<exp>[+-]?\d{1,4}))?
        \s*(?P<suffix>[A-Za-z]+)?""",
    re.VERBOSE,
)
_EXACT = Context(prec=2 * MAX_LENGTH)
"""Enough digits that no text short enough to read is rounded on the way in."""


class QuantityError(CalculatorError, ValueError):
    """Text that is not a number the reader takes; the message quotes it and says what is allowed."""


def _quoted(text: str) -> str:
    return repr(text) if len(text) <= 40 else f"{text[:32]!r}... ({len(text):,} characters)"


def read(text: str, *, whole: bool = False) -> Decimal:
    """The number ``text`` says, exactly; :class:`QuantityError` when it says none (or, with ``whole``, a
    fraction)."""
    cleaned = text.strip()
    for space in _SPACES:
        cleaned = cleaned.replace(space, " ")
    if not cleaned:
        raise QuantityError("nothing given; give a number such as 3000000, 3M or 3e6")
    digits_only = re.fullmatch(r"[+-]?\d+", re.sub(r"[,_' ]", "", cleaned))
    if digits_only and len(digits_only[0].lstrip("+-0")) > MAX_EXPONENT + 1:
        count = len(digits_only[0].lstrip("+-0"))
        raise QuantityError(f"a {count:,}-digit number is larger than any count")
    if len(cleaned) > MAX_LENGTH:
        raise QuantityError(f"{cleaned[:20]!r}... is {len(cleaned):,} characters, longer than any number")
    found = _NUMBER.fullmatch(cleaned)
    if found is None or not (found["int"] or (found["frac"] or "").strip(".")):
        if re.fullmatch(r"[+-]?(nan|inf|infinity)", cleaned, re.IGNORECASE):
            raise QuantityError(f"{_quoted(text)} is not a finite number")
        if re.fullmatch(r"[+-]?\d+,\d{1,2}", cleaned):
            raise QuantityError(f"{_quoted(text)}: write decimals with a point (1.5), commas only between thousands")
        raise QuantityError(f"{_quoted(text)} is not a number (for example 3000000, 3,000,000, 3M, 2.5k or 3e6)")
    suffix = (found["suffix"] or "").lower()
    if suffix and suffix not in SUFFIXES:
        raise QuantityError(f"{_quoted(text)}: {found['suffix']!r} is not k, M, B or T (thousand to trillion)")
    digits = (found["int"] or "0").replace(found["sep"] or "_", "")
    exponent = int(found["exp"] or 0) + SUFFIXES.get(suffix, 0)
    try:
        value = Decimal(f"{found['sign']}{digits}{found['frac'] or ''}").scaleb(exponent, _EXACT)
    except InvalidOperation:  # pragma: no cover - the pattern admits only digits
        raise QuantityError(f"{_quoted(text)} is not a number") from None
    if not value:
        return Decimal(0)  # "0e31" is zero: its exponent must not travel on as a 32-digit figure
    if value.adjusted() > MAX_EXPONENT:
        raise QuantityError(f"{_quoted(text)} is a {value.adjusted() + 1:,}-digit number, larger than any count")
    if whole and value != value.to_integral_value():
        raise QuantityError(f"{_quoted(text)} is not a whole number")
    return value


def read_quantity(text: str, limit: Limit, *, whole: bool = True) -> int | float:
    """``text`` read as a number within ``limit``: an ``int`` for ``whole``, else a ``float``.

    :class:`QuantityError` with one sentence (the text as typed, what is wrong, the allowed range).
    """
    try:
        value = read(text, whole=whole)
    except QuantityError as exc:
        raise QuantityError(f"{exc} (allowed: {limit.allowed})") from None
    problem = limit.problem(value, _plain_text(text))
    if problem:
        raise QuantityError(f"{problem} (allowed: {limit.allowed})")
    return int(value) if whole else float(value)


def _plain_text(text: str) -> str:
    cleaned = text.strip()
    return cleaned if len(cleaned) <= 40 else f"{cleaned[:32]}... ({len(cleaned):,} characters)"


def plain(value: int | float | Decimal) -> str:
    """A number as a link or a field writes it back: digits only (``3000000``), what any reader takes."""
    if isinstance(value, int):
        return str(int(value))
    number = value if isinstance(value, Decimal) else Decimal(str(value))
    if number == number.to_integral_value():
        return str(int(number))
    return format(number.normalize(), "f")
