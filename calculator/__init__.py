"""LLM inference cost and capacity calculator: serverless API, dedicated endpoint or self-hosted GPUs.

The share of each prompt that repeats an earlier prompt's start decides cost more than the engine
does: cached input is billed at a fraction of the input price and skips prefill. Everything here
is pure Python (no UI); the Streamlit app and the command line call it.

The public API, for scripts and notebooks::

    from calculator import compare, load_catalogs, load_preset

    result = compare(load_preset("coding-agent"), load_catalogs())
    print(result.cheapest, [(o.option, o.monthly) for o in result.options])

Names are imported on first use, so ``import calculator`` (and the command line's start-up) does not
pay for numpy, pandas or the charting code until something needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # the scenario and its inputs
    "Scenario": "calculator.scenario.model",
    "TurnShape": "calculator.scenario.inputs",
    "Traffic": "calculator.scenario.inputs",
    "SelfHosting": "calculator.scenario.inputs",
    "Evidence": "calculator.scenario.evidence",
    "LoadProfile": "calculator.scenario.load",
    "load_preset": "calculator.scenario.model",
    "load_scenario": "calculator.scenario.model",
    "load_scenario_text": "calculator.scenario.model",
    "dump_scenario": "calculator.scenario.model",
    "list_presets": "calculator.scenario.model",
    # catalogues
    "Catalogs": "calculator.catalog.catalogs",
    "load_catalogs": "calculator.catalog.catalogs",
    # answers
    "price_turn": "calculator.pricing.turn",
    "compare_turn": "calculator.pricing.turn",
    "resolve": "calculator.pricing.resolve",
    "ResolvedScenario": "calculator.pricing.resolve",
    "compare": "calculator.pricing.compare",
    "Comparison": "calculator.pricing.compare",
    "OptionCost": "calculator.pricing.option",
    "profile_costs": "calculator.planning.load_profile",
    "hybrid_plan": "calculator.planning.hybrid",
    "grow": "calculator.planning.growth",
    # showing them
    "format_money": "calculator.present.money",
    "format_small": "calculator.present.money",
    # errors
    "InputError": "calculator.errors",
    "Problem": "calculator.errors",
    "DataFileError": "calculator.catalog.datafile",
}

__all__ = [
    "Catalogs",
    "Comparison",
    "DataFileError",
    "Evidence",
    "InputError",
    "LoadProfile",
    "OptionCost",
    "Problem",
    "ResolvedScenario",
    "Scenario",
    "SelfHosting",
    "Traffic",
    "TurnShape",
    "compare",
    "compare_turn",
    "dump_scenario",
    "format_money",
    "format_small",
    "grow",
    "hybrid_plan",
    "list_presets",
    "load_catalogs",
    "load_preset",
    "load_scenario",
    "load_scenario_text",
    "price_turn",
    "profile_costs",
    "resolve",
    "__version__",
]

if TYPE_CHECKING:
    from calculator.catalog.catalogs import Catalogs, load_catalogs
    from calculator.catalog.datafile import DataFileError
    from calculator.errors import InputError, Problem
    from calculator.planning.growth import grow
    from calculator.planning.hybrid import hybrid_plan
    from calculator.planning.load_profile import profile_costs
    from calculator.present.money import format_money, format_small
    from calculator.pricing.compare import Comparison, compare
    from calculator.pricing.option import OptionCost
    from calculator.pricing.resolve import ResolvedScenario, resolve
    from calculator.pricing.turn import compare_turn, price_turn
    from calculator.scenario.evidence import Evidence
    from calculator.scenario.inputs import SelfHosting, Traffic, TurnShape
    from calculator.scenario.load import LoadProfile
    from calculator.scenario.model import (
        Scenario,
        dump_scenario,
        list_presets,
        load_preset,
        load_scenario,
        load_scenario_text,
    )


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'calculator' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this hook
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
