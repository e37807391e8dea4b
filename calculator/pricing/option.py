"""One way to buy, priced for a month, and the cent arithmetic every bill shares."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict

from calculator.capacity.sizing import ReplicaCapacity
from calculator.pricing.turn import PriceRef

__all__ = ["CENT", "MONTHS_PER_YEAR", "OptionCost", "as_decimal", "cents", "parts_adding_up"]

CENT = Decimal("0.01")
MONTHS_PER_YEAR = 12


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


class OptionCost(BaseModel):
    """One way to buy, priced for one month."""

    model_config = ConfigDict(frozen=True)

    option: Literal["serverless", "dedicated", "self_hosted"]
    provider: str
    offer: str
    model: str | None
    currency: str
    monthly: Decimal
    cost_per_1000_turns: Decimal | None
    breakdown: dict[str, Decimal]
    replicas: int | None = None
    """Engine replicas at the busiest hour (self-hosted: spares included)."""
    gpus: int | None = None
    instances: int | None = None
    gpu_hours: float | None = None
    utilisation: float | None = None
    """Average load over provisioned capacity across the month."""
    capacity: ReplicaCapacity | None = None
    prices: tuple[PriceRef, ...]
    notes: tuple[str, ...] = ()
    billing_units: int | None = None
    """Dedicated endpoints: the provider's replicas billed (each of its own GPU count)."""
    replica_gpus: int | None = None
    """GPUs per engine replica of the setup the option was sized from."""

    @property
    def annual(self) -> Decimal:
        """Twelve of this month's bills: the same traffic all year, before any growth (Plan grows it)."""
        return self.monthly * MONTHS_PER_YEAR

    def monthly_per_user(self, users: int | None) -> Decimal | None:
        """The month's bill shared by ``users`` seats, or None when the users are not known."""
        return self.monthly / users if users else None
