"""The scenario: the one object every page and command reads and writes.

``calculator.scenario`` was one module before the package was layered; its public names are
re-exported here so ``from calculator.scenario import Scenario`` keeps working. They are imported on
first use: importing ``calculator.scenario.inputs`` (a turn's shape) does not build every scenario model.
"""

from __future__ import annotations

import importlib
from typing import Any

_PARTS = ("calculator.scenario.inputs", "calculator.scenario.model")


def __getattr__(name: str) -> Any:
    modules = [importlib.import_module(part) for part in _PARTS]
    if name == "__all__":
        value: Any = [n for module in modules for n in module.__all__]
    else:
        module = next((m for m in modules if name in m.__all__), None)
        if module is None:
            raise AttributeError(f"module 'calculator.scenario' has no attribute {name!r}")
        value = getattr(module, name)
    globals()[name] = value  # later lookups skip this hook
    return value
