"""The cent arithmetic every bill shares: a bill to the cent, parts that add up to it."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

__all__ = ["CENT", "as_decimal", "cents", "parts_adding_up"]

CENT = Decimal("0.01")


def cents(value: Decimal) -> Decimal:
    """A bill to the cent, half up (as an invoice rounds, not as Python's banker's rounding)."""
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


def parts_adding_up(parts: dict[str, Decimal], total: Decimal) -> dict[str, Decimal]:
    """Each part to the cent so that they add up to ``total`` exactly (largest remainder first).

    Rounding each part on its own can leave the breakdown a cent or two off the total a user sees.
    """
    floored = {k: v.quantize(CENT, rounding="ROUND_FLOOR") for k, v in parts.items()}
    missing = int((total - sum(floored.values(), Decimal(0))) / CENT)
    by_remainder = sorted(parts, key=lambda k: parts[k] - floored[k], reverse=True)
    for key in by_remainder[: max(missing, 0)]:
        floored[key] += CENT
    return floored


def as_decimal(x: float) -> Decimal:
    """A count or an hour figure from the float path, as Decimal without binary noise."""
    return Decimal(repr(round(float(x), 9)))
