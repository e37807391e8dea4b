"""One way to buy, priced for a month (the cent arithmetic every bill shares is in ``cents.py``)."""

from __future__ import annotations

from decimal import Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict

from calculator.capacity.sizing import ReplicaCapacity
from calculator.pricing.cents import CENT, as_decimal, cents, parts_adding_up
from calculator.pricing.turn import PriceRef

__all__ = ["CENT", "MONTHS_PER_YEAR", "OptionCost", "as_decimal", "cents", "parts_adding_up"]

MONTHS_PER_YEAR = 12


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
