"""Showing money: monthly totals to the cent, per-turn costs to at least three significant figures.

The seed's reused turn costs $0.00968; rounding it to $0.01 would hide the very difference the
product exists to show.
"""

from __future__ import annotations

from decimal import Decimal

__all__ = ["SYMBOLS", "format_money", "format_small"]

SYMBOLS = {"USD": "$", "EUR": "€"}


def format_money(value: Decimal | float, currency: str = "USD") -> str:
    """A monthly or total amount: thousands separators and cents (``$30,200.00``)."""
    symbol = SYMBOLS.get(currency, currency + " ")
    sign = "-" if value < 0 else ""
    return f"{sign}{symbol}{abs(Decimal(str(value))):,.2f}"


def format_small(value: Decimal | float, currency: str = "USD", figures: int = 3) -> str:
    """A per-turn or per-token amount with at least ``figures`` significant figures (``$0.00968``)."""
    symbol = SYMBOLS.get(currency, currency + " ")
    amount = abs(Decimal(str(value)))
    sign = "-" if value < 0 else ""
    if amount == 0:
        return f"{symbol}0.00"
    if amount >= 100:
        return f"{sign}{symbol}{amount:,.2f}"
    exponent = amount.adjusted()  # 0.00968 -> -3
    places = max(2, figures - 1 - exponent)
    return f"{sign}{symbol}{amount:,.{places}f}"
