"""Errors and warnings are structured: the core names fields, each front end says them in its own words."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from app_pages import _words
from calculator.catalog.catalogs import Catalogs
from calculator.cli import main, words
from calculator.errors import InputError, Problem
from calculator.pricing.compare import compare
from calculator.scenario.model import Scenario, load_preset

from .conftest import SEED_DATE

CALCULATOR = Path(__file__).resolve().parents[1] / "calculator"
NO_FLAG = {"scenario", "offer", "genai-prices", "log"} | {
    "family",
    "error_bands",
    "arrivals",
    "hourly_rates",
    "input_lengths",
    "kv_budget_tokens",
    "max_context",
    "rate",
    "requests",
}
"""Fields no single flag sets: the scenario as a whole, an offer inside it, the genai-prices import, the stored
error bands (a file ``make data`` writes, never a user's), an engine
log read by ``benchmarks/memory_check.py`` (no command takes one), and the latency simulation's own inputs
(``calculator.capacity.simulation``), which the commands compute from a scenario, never take from a user, and
the leave-one-source-out check's families (``benchmarks/roofline_check.py`` only)."""


def _core_error_fields() -> set[str]:
    fields: set[str] = set()
    for path in CALCULATOR.rglob("*.py"):
        if "cli" in path.relative_to(CALCULATOR).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "InputError" and node.args:
                first = node.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    fields.add(first.value)
    return fields


def test_the_core_names_fields_not_command_line_flags() -> None:
    fields = _core_error_fields()
    assert len(fields) > 30  # the walk found the raises
    assert not [f for f in fields if f.startswith("-")]


def test_every_core_error_field_is_a_flag_or_a_scenario_path_on_the_command_line() -> None:
    scenario_fields = set(Scenario.model_fields)
    for field in _core_error_fields() - NO_FLAG:
        rendered = words.flag(field)
        assert rendered.startswith("--") or field.split(".")[0] in scenario_fields, field


def test_the_command_line_names_the_flag_for_a_core_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profile", "--preset", "coding-agent", "--profile", "no-such-shape"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --profile: ") and "no-such-shape" in err and "load_profile" not in err


def test_an_input_error_carries_what_is_allowed() -> None:
    exc = InputError("load_profile.burst", "0.5 is not a burst", "1 or more")
    assert exc.problem == Problem("load_profile.burst", "0.5 is not a burst", "1 or more")
    assert words.say(exc.problem) == "--burst: 0.5 is not a burst (allowed: 1 or more)"


def test_warnings_are_structured_and_each_front_end_adds_its_own_advice(catalogs: Catalogs) -> None:
    preset = load_preset("coding-agent")
    # a Llama record named against the GLM-5.3 API: the options run different models
    hosting = preset.self_hosting.model_copy(update={"record": "sglang-llama-3.3-70b-bf16-4xh200-rate4"})
    result = compare(preset.model_copy(update={"as_of": SEED_DATE, "self_hosting": hosting}), catalogs)
    codes = {w.code for w in result.warnings}
    assert {"different_models", "tokenizer_factors", "best_case_hit_rate"} <= codes
    assert all(w.severity == "warning" and w.field for w in result.warnings)
    factors = next(w for w in result.warnings if w.code == "tokenizer_factors")
    assert "token_factors" in words.warning(factors) and "**Advanced**" not in words.warning(factors)
    assert "**Advanced**" in _words.warning(factors) and "token_factors in the scenario" not in _words.warning(factors)


def test_compare_json_keeps_warning_sentences_and_adds_the_structured_problems(
    capsys: pytest.CaptureFixture[str],
) -> None:
    record = ["--record", "sglang-llama-3.3-70b-bf16-4xh200-rate4"]  # a Llama record against the GLM-5.3 API
    assert main(["compare", "--preset", "coding-agent", "--as-of", "2026-10-30", *record, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert all(isinstance(w, str) for w in data["warnings"])
    assert {p["code"] for p in data["problems"]} >= {"different_models", "best_case_hit_rate"}
    assert len(data["problems"]) == len(data["warnings"])


def test_every_error_the_package_exports_is_a_calculator_error() -> None:
    """``except CalculatorError`` catches every error a module lists in ``__all__``: the ones raised on purpose."""
    import importlib
    import pkgutil

    import calculator
    from calculator.errors import CalculatorError

    exported: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(calculator.__path__, "calculator."):
        if info.name.endswith("__main__"):  # running it is the command line itself
            continue
        if info.name.count(".") == 1 and not info.ispkg and info.name != "calculator.errors":
            continue  # an old import path re-exports a layer's names; importing it would shadow calculator.compare
        module = importlib.import_module(info.name)
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name, None)
            if isinstance(value, type) and issubclass(value, BaseException):
                exported[f"{value.__module__}.{value.__qualname__}"] = value
    assert {"calculator.errors.InputError", "calculator.catalog.datafile.DataFileError"} <= set(exported)
    assert "calculator.cli.flags.UsageError" in exported
    assert [name for name, cls in exported.items() if not issubclass(cls, CalculatorError)] == []
