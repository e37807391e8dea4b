"""How many GPUs: memory fit, the roofline estimate, sizing from measured records, calibration.

``calculator.capacity`` was one module before the package was layered; its public names are
re-exported here so ``from calculator.capacity import ReplicaCapacity`` keeps working. They are imported
on first use: importing ``calculator.capacity.memory`` does not import the sizing models.
"""

from __future__ import annotations

import importlib
from typing import Any


def __getattr__(name: str) -> Any:
    sizing = importlib.import_module("calculator.capacity.sizing")
    if name != "__all__" and name not in sizing.__all__:
        raise AttributeError(f"module 'calculator.capacity' has no attribute {name!r}")
    value = getattr(sizing, name)
    globals()[name] = value  # later lookups skip this hook
    return value
