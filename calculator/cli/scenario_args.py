"""The scenario a command names with ``--preset NAME`` or ``--scenario FILE``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from calculator.catalog.catalogs import Catalogs
from calculator.errors import InputError
from calculator.scenario.model import Scenario, load_preset, load_scenario

__all__ = ["required_scenario", "scenario_from_args", "with_cheapest"]


def scenario_from_args(args: argparse.Namespace) -> Scenario | None:
    """The bundled preset or the scenario file the arguments name; None when they name neither."""
    if args.scenario and args.preset:
        raise InputError("--scenario", "give --scenario or --preset, not both")
    if args.scenario:
        return load_scenario(Path(args.scenario))
    if args.preset:
        return load_preset(args.preset)
    return None


def required_scenario(args: argparse.Namespace) -> Scenario:
    """As :func:`scenario_from_args`, for commands that cannot run without a scenario."""
    scenario = scenario_from_args(args)
    if scenario is None:
        raise InputError("--preset", "give --preset NAME or --scenario FILE (see: presets)")
    return scenario


def with_cheapest(scenario: Scenario, catalogs: Catalogs) -> tuple[Scenario, tuple[Any, ...]]:
    """The scenario with each ``offer: cheapest`` replaced by the deployment search's pick, and the picks
    (:func:`calculator.pricing.cheapest.with_cheapest_offers`, imported only when a choice asks for it)."""
    if not any(c is not None and c.cheapest for c in (scenario.dedicated, scenario.gpu_vm)):
        return scenario, ()
    from calculator.pricing.cheapest import with_cheapest_offers

    return with_cheapest_offers(scenario, catalogs)
