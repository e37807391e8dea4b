"""The sentence that shows an estimated option's monthly cost as a range (the Compare page's caption)."""

from __future__ import annotations

from calculator.present.money import format_money
from calculator.pricing.compare import OPTION_LABELS, EstimateRange

__all__ = ["estimate_range_caption"]


def estimate_range_caption(band: EstimateRange, currency: str) -> str:
    """``estimate: $X–$Y`` per estimated option, then whether the cheapest option changes within the band,
    and where the band comes from."""
    costs = "; ".join(
        f"{OPTION_LABELS[c.option]} estimate: {format_money(c.low, currency)}–{format_money(c.high, currency)} a month"
        for c in band.costs
    )
    change = (
        "; the cheapest option changes within this range ("
        + " or ".join(OPTION_LABELS[name] for name in band.cheapest)
        + ")"
        if band.cheapest_changes
        else "; the cheapest option stays the same within this range"
    )
    return f"{costs}{change}. Range from the {band.provenance}."
