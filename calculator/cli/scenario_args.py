"""The scenario a command names with ``--preset NAME`` or ``--scenario FILE``."""

from __future__ import annotations

import argparse
from pathlib import Path

from calculator.errors import InputError
from calculator.scenario.model import Scenario, load_preset, load_scenario

__all__ = ["required_scenario", "scenario_from_args"]


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
