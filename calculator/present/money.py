"""Showing money: the one place that turns an amount into text, for the command line, the app, the charts and the PDF.

- totals (a month, 1,000 turns) to the currency's minor unit, rounded half-up as a bill is: 2.665 shows
  $2.67 on every path, never $2.66 on one and $2.67 on another;
- per-turn and per-token figures to at least three significant figures: the seed's reused turn costs
  $0.00968, and rounding it to $0.01 would hide the very difference the product exists to show;
- prices as the sheet states them, every stated digit and at least the minor unit;
- the sign before the symbol (-$2.67), thousands separators, and the symbol of the figure's currency.

Every currency is grouped in thousands with a comma and uses a point for decimals (₹1,234,567.00, not the
Indian lakh grouping ₹12,34,567.00): the app, the charts, the CSV and the PDF group numbers that one way, so
a figure reads the same wherever it is copied from. A currency differs only in its symbol and minor unit.

A float (the charts' numpy path) is read through its shortest repr, so 2.675 is the 2.675 a person typed,
not the binary 2.67499999... that would round down.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Context, Decimal

__all__ = [
    "CURRENCIES",
    "Currency",
    "axis_format",
    "currency_of",
    "format_money",
    "format_price",
    "format_small",
    "money_title",
    "round_money",
    "to_decimal",
]

NOT_A_NUMBER = "n/a"


@dataclass(frozen=True)
class Currency:
    symbol: str
    decimals: int
    """Places of the minor unit: 2 for cents, 0 for a currency without them (yen)."""


CURRENCIES: dict[str, Currency] = {
    "USD": Currency("$", 2),
    "EUR": Currency("€", 2),
    "GBP": Currency("£", 2),
    "JPY": Currency("¥", 0),
    "INR": Currency("₹", 2),
}
"""Add a currency here and every figure, axis and tooltip shows it."""


def currency_of(code: str) -> Currency:
    """The code's symbol and minor unit; an unknown code is written out before the amount (``CHF 12.50``)."""
    return CURRENCIES.get(code, Currency(f"{code} ", 2))


def to_decimal(value: Decimal | float) -> Decimal:
    if isinstance(value, Decimal):
        return value
    return Decimal(repr(float(value)))  # float() first: numpy's repr of its own floats is np.float64(...)


def _quantize(amount: Decimal, places: int) -> Decimal:
    # Enough precision for any finite amount: the default 28 digits would refuse a very large one.
    context = Context(prec=max(28, amount.adjusted() + places + 2))
    return amount.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP, context=context)


def round_money(value: Decimal | float, currency: str = "USD") -> Decimal:
    """``value`` half-up to the currency's minor unit, as :func:`format_money` shows it."""
    return _quantize(to_decimal(value), currency_of(currency).decimals)


def _show(amount: Decimal, places: int, currency: str, plus: bool) -> str:
    if not amount.is_finite():
        return NOT_A_NUMBER
    rounded = _quantize(amount, places)
    sign = "-" if rounded < 0 else ("+" if plus else "")
    return f"{sign}{currency_of(currency).symbol}{abs(rounded):,.{places}f}"


def format_money(value: Decimal | float, currency: str = "USD", *, plus: bool = False) -> str:
    """A monthly or total amount half-up to the minor unit, with thousands separators (``$30,200.00``).

    ``plus`` writes a change with its sign either way (``+$1.50``, ``-$1.50``)."""
    return _show(to_decimal(value), currency_of(currency).decimals, currency, plus)


def format_small(value: Decimal | float, currency: str = "USD", figures: int = 3) -> str:
    """A per-turn or per-token amount with at least ``figures`` significant figures (``$0.00968``, ``$0.500``);
    never fewer places than the minor unit (``$9.68``, ``$1,234.50``)."""
    amount = to_decimal(value)
    decimals = currency_of(currency).decimals
    if not amount.is_finite() or amount == 0:
        return _show(amount, decimals, currency, False)
    places = max(decimals, figures - 1 - amount.adjusted())  # 0.00968: adjusted -3, five places
    return _show(amount, places, currency, False)


def format_price(value: Decimal | float, currency: str = "USD", *, plus: bool = False) -> str:
    """A price as the sheet states it, every stated digit and at least the minor unit (``$0.26``, ``$0.035``)."""
    amount = to_decimal(value)
    decimals = currency_of(currency).decimals
    if not amount.is_finite():
        return NOT_A_NUMBER
    exponent = amount.normalize().as_tuple().exponent
    places = max(decimals, -exponent if isinstance(exponent, int) else 0)
    return _show(amount, places, currency, plus)


def money_title(label: str, currency: str, note: str = "") -> str:
    """An axis or column title naming the currency by its symbol: ``Cost per turn (€)``,
    ``Monthly cost ($, log scale)``."""
    symbol = currency_of(currency).symbol.strip()
    return f"{label} ({symbol}{', ' + note if note else ''})"


def amount_format(currency: str) -> str:
    """A chart tooltip's number format (d3) for a monthly amount: the currency's minor unit, with thousands
    separators, as :func:`format_money` writes it (``,.2f``; ``,.0f`` for the yen). The symbol goes in the
    tooltip's title (:func:`money_title`): a chart of 700 points formats them in the browser, not here."""
    return f",.{currency_of(currency).decimals}f"


def axis_format(largest: Decimal | float, currency: str, figures: int = 3) -> str:
    """A chart axis's number format (d3) that shows ``figures`` significant figures of its ``largest`` value and
    never fewer places than the currency's minor unit: ``,.4f`` for a $0.0302 turn, ``,.2f`` for a ¥4.73 one."""
    amount = to_decimal(largest)
    decimals = currency_of(currency).decimals
    if not amount.is_finite() or amount == 0:
        return f",.{decimals}f"
    return f",.{max(decimals, figures - 1 - amount.adjusted())}f"


def fmt_volume(turns: float) -> str:
    """Turns per month in words a product manager reads: ``1.2 million``, ``350,000``."""
    if turns >= 1e9:
        return f"{turns / 1e9:.3g} billion"
    if turns >= 1e6:
        return f"{turns / 1e6:.3g} million"
    return f"{turns:,.0f}"
