"""Small synthetic offers for hand-computed tests, independent of the bundled sheets' data."""

from __future__ import annotations

from typing import Any

from calculator.catalog.prices import ServerlessOffer

SOURCE = {"document": "hand-made test offer", "read": "2026-01-01"}


def serverless(prices: dict[str, Any], **extra: Any) -> ServerlessOffer:
    version = {"effective": "2026-01-01", "source": SOURCE, "prices": prices}
    version.update(extra.pop("version", {}))
    return ServerlessOffer.model_validate(
        {"kind": "serverless", "model": "test-model", "open_weights": True, "versions": [version], **extra}
    )
