"""The built wheel carries the bundled data and answers from any directory, without the source checkout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from .test_cli import SEED_TURN

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "calculator" / "data"


def test_the_wheel_installs_with_its_data_and_prices_a_preset_elsewhere(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(dist),
            str(ROOT),
        ],
        check=True,
        cwd=tmp_path,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = dist.glob("inference_cost_calculator-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        shipped = {str(p.relative_to(ROOT)) for p in DATA.rglob("*") if p.is_file() and p.suffix in {".yaml", ".json"}}
        assert shipped and shipped <= names, sorted(shipped - names)
        site = tmp_path / "site"
        archive.extractall(site)
    # Only the unpacked wheel is on the path, run from a directory with no checkout in sight.
    away = tmp_path / "elsewhere"
    away.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run(
        [sys.executable, "-c", "import calculator, sys; sys.stdout.write(calculator.__file__)"],
        cwd=away, env=env, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert Path(done.stdout).is_relative_to(site)
    done = subprocess.run(
        [sys.executable, "-m", "calculator", "compare", "--preset", "coding-agent", "--as-of", "2026-10-30", "--json"],
        cwd=away, env=env, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    result = json.loads(done.stdout)
    assert result["turn"]["reused"]["cost_per_turn"] == 0.00968  # the seed's reused turn


def test_the_public_api_is_declared_once_and_old_import_paths_still_work() -> None:
    import importlib

    import calculator
    from calculator.cli import main

    declared = set(calculator.__all__) - {"__version__"}
    assert declared == set(calculator._EXPORTS)
    for name, module in calculator._EXPORTS.items():
        assert getattr(calculator, name) is getattr(importlib.import_module(module), name)
    # the paths users imported before the package was layered are the very modules they moved to
    moved = {
        "calculator.models": "calculator.catalog.models",
        "calculator.gpus": "calculator.catalog.gpus",
        "calculator.prices": "calculator.catalog.prices",
        "calculator.calibration": "calculator.capacity.calibration",
        "calculator.turn": "calculator.pricing.turn",
        "calculator.compare": "calculator.pricing.compare",
    }
    for old, new in moved.items():
        assert importlib.import_module(old) is importlib.import_module(new)
    assert importlib.import_module("calculator.cli").main is main
    assert importlib.import_module("calculator.scenario").Scenario is calculator.Scenario
    assert importlib.import_module("calculator.capacity").replica_capacity is not None


APP_ONLY = ("streamlit", "altair", "fpdf", "vl_convert")
"""What the `app` extra installs: the core must answer without any of it."""

_WITHOUT_APP = """
import importlib.abc, sys
class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}} (the app extra is not installed)")
        return None
sys.meta_path.insert(0, Refuse())
from calculator.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize(
    "argv",
    [
        [*SEED_TURN, "--json"],
        ["compare", "--preset", "coding-agent", "--json"],
        ["deploy", "--preset", "rag-chatbot", "--json"],
        [
            "estimate",
            "--model",
            "llama-3.3-70b",
            "--gpu",
            "h100-sxm",
            "--gpus",
            "2",
            "--precision",
            "fp8",
            "--input-tokens",
            "1000",
            "--output-tokens",
            "200",
            "--offline",
            "--json",
        ],
        ["profile", "--preset", "coding-agent", "--json"],
        ["fit", "--model", "llama-3.3-70b", "--gpu", "h100-sxm", "--gpus", "2", "--json"],
    ],
    ids=lambda argv: argv[0],
)
def test_the_command_line_answers_without_the_app_extra(argv: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_APP.format(blocked=APP_ONLY), *argv],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)
