"""The rows a chart's spec draws, wherever the spec keeps them: Altair's ``datasets`` or inline ``values``."""

from __future__ import annotations

from typing import Any


def chart_rows(spec: dict[str, Any]) -> list[dict[str, Any]]:
    found = [row for rows in spec.get("datasets", {}).values() for row in rows]
    for part in (spec, *spec.get("layer", [])):
        found += part.get("data", {}).get("values", [])
    return found
