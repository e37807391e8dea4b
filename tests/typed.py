"""Comparing parsed YAML with each leaf's type: 1, 1.0 and True are equal in Python, not in a sheet."""

from __future__ import annotations

from typing import Any


def typed(value: Any) -> Any:
    """``value`` with each leaf's type beside it."""
    if isinstance(value, dict):
        return {typed(k): typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed(v) for v in value]
    return (type(value).__name__, value)
