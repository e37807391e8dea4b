"""What the command line's start-up reads (issue 12, part 1): the time itself is measured by
benchmarks/, these pin the behaviour that keeps it short.

``turn`` and ``compare`` import no data-frame, chart, PDF or HTTP library; a run builds only the
parser of its command's module, which is the same parser the whole command line holds; the bundled
catalogues, read by libyaml, are the same as the pure-Python loader reads them; a user's file is
still read by the pure-Python loader alone.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from calculator.catalog import datafile
from calculator.catalog.datafile import DATA_DIR, DataFileError, item_id_lines, key_line, load_model, parse_yaml
from calculator.catalog.gpus import load_gpu_specs
from calculator.catalog.measurements import load_records
from calculator.catalog.models import load_model_specs
from calculator.catalog.prices import load_price_sheets
from calculator.cli.parser import COMMAND_MODULES, build_parser
from calculator.scenario.model import DEFAULT_PRESETS_DIR, Scenario, list_presets, load_preset, load_scenario
from tests.typed import typed

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("pandas", "altair", "vl_convert", "fpdf", "reportlab", "matplotlib", "PIL", "httpx", "pyarrow")

# Runs the command line as `python -m calculator` does, then prints the heavy libraries it imported.
_RUNNER = """
import contextlib, io, json, runpy, sys
argv, watched = json.loads(sys.argv[1]), set(json.loads(sys.argv[2]))
sys.argv = ["calculator", *argv]
out = io.StringIO()
code = 0
with contextlib.redirect_stdout(out):
    try:
        runpy.run_module("calculator", run_name="__main__")
    except SystemExit as exc:
        code = exc.code
heavy = sorted({m.split(".")[0] for m in sys.modules} & watched)
print(json.dumps({"code": code, "heavy": heavy, "out": out.getvalue()}))
"""


def _imports(*argv: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _RUNNER, json.dumps(argv), json.dumps(HEAVY)],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    result: dict[str, Any] = json.loads(done.stdout)
    return result


TURN = ["turn", "--provider", "lyceum", "--model", "GLM-5.3", "--input-tokens", "20000", "--prefix-share", "0.9",
        "--output-tokens", "500", "--as-of", "2026-10-30"]  # fmt: skip
COMPARE = ["compare", "--preset", "coding-agent"]


@pytest.mark.parametrize(
    "argv",
    [TURN, [*TURN, "--json"], COMPARE, [*COMPARE, "--json"]],
    ids=["turn", "turn --json", "compare", "compare --json"],
)
def test_turn_and_compare_import_no_data_frame_chart_pdf_or_http_library(argv: list[str]) -> None:
    result = _imports(*argv)
    assert result["code"] == 0
    assert result["heavy"] == []
    if argv == TURN:  # the command still answers: the seed's turn, $30.20 vs $9.68 for 1,000 turns
        assert "$30.20" in result["out"] and "$9.68" in result["out"]


def test_a_command_that_plans_by_the_hour_still_imports_pandas() -> None:
    """The check above sees an import where there is one: ``profile`` builds its hourly table with pandas."""
    result = _imports("profile", "--preset", "coding-agent", "--json")
    assert result["code"] == 0
    assert "pandas" in result["heavy"]


def test_a_pinned_scenario_compared_as_text_shows_its_price_changes(tmp_path: Path) -> None:
    """The report module (pandas) is imported only for this table; the path still runs."""
    pinned = tmp_path / "pinned.yaml"
    done = subprocess.run(
        [sys.executable, "-m", "calculator", "compare", "--preset", "coding-agent", "--as-of", "2026-10-30",
         "--save", str(pinned)],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "calculator", "compare", "--scenario", str(pinned)],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    assert "Since this scenario was saved:" in done.stdout


def _commands(parser: Any) -> dict[str, Any]:
    (sub,) = [a for a in parser._actions if a.dest == "command"]
    return dict(sub.choices)


def test_every_command_is_built_alone_exactly_as_the_whole_command_line_builds_it() -> None:
    whole = _commands(build_parser())
    assert set(whole) == set(COMMAND_MODULES)
    for name, full in whole.items():
        alone = _commands(build_parser(name))
        assert name in alone
        assert alone[name].format_help() == full.format_help(), name
        assert alone[name].prog == full.prog


def test_a_command_given_alone_parses_to_what_the_whole_parser_gives() -> None:
    argv = ["compare", "--preset", "coding-agent", "--turns-per-day", "3000", "--json"]
    assert vars(build_parser("compare").parse_args(argv)) == vars(build_parser().parse_args(argv))


# --- the bundled catalogues: libyaml and the pure-Python loader ------------------------------------


BUNDLED = sorted(DATA_DIR.rglob("*.yaml"))


def test_the_bundled_files_are_read_by_libyaml() -> None:
    if not yaml.__with_libyaml__:
        pytest.skip("PyYAML was built without libyaml: every file is read by the pure-Python loader")
    assert len(BUNDLED) > 20
    for path in BUNDLED:
        assert datafile._libyaml(path.read_text(encoding="utf-8"), path) is not None, path


@pytest.mark.parametrize("path", BUNDLED, ids=[str(p.relative_to(DATA_DIR)) for p in BUNDLED])
def test_each_bundled_file_reads_the_same_with_libyaml_and_pure_python(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    fast = datafile._libyaml(text, path)
    if fast is None:
        pytest.skip("read by the pure-Python loader here")
    assert typed(fast) == typed(parse_yaml(text, str(path)))
    # the line numbers cross-file errors give come from the same composed tree
    fast_root: yaml.Node = datafile._libyaml(text, path, compose=True)
    slow_root = yaml.compose(text, Loader=datafile._UniqueKeyLoader)
    assert slow_root is not None
    assert [(n.start_mark.line, n.start_mark.column) for n in _nodes(fast_root)] == [
        (n.start_mark.line, n.start_mark.column) for n in _nodes(slow_root)
    ]


def _nodes(node: yaml.Node) -> list[yaml.Node]:
    found = [node]
    if isinstance(node, yaml.SequenceNode):
        for child in node.value:
            found += _nodes(child)
    elif isinstance(node, yaml.MappingNode):
        for key, child in node.value:
            found += _nodes(key) + _nodes(child)
    return found


def test_the_catalogues_load_the_same_from_a_copy_read_by_the_pure_python_loader(tmp_path: Path) -> None:
    """A copy outside the package is a user's folder, read by the pure-Python loader only."""
    for folder in ("price_sheets", "gpu_specs", "models", "measurements", "scenarios"):
        shutil.copytree(DATA_DIR / folder, tmp_path / folder)
    assert load_price_sheets() == load_price_sheets(tmp_path / "price_sheets")
    assert load_gpu_specs() == load_gpu_specs(tmp_path / "gpu_specs")
    assert load_model_specs() == load_model_specs(tmp_path / "models")
    assert load_records() == load_records(tmp_path / "measurements")
    for name in list_presets():
        assert load_preset(name) == load_scenario(tmp_path / "scenarios" / f"{name}.yaml")
    for path in sorted((DATA_DIR / "gpu_specs").glob("*.yaml")):
        assert item_id_lines(path, "gpus") == item_id_lines(tmp_path / "gpu_specs" / path.name, "gpus")
        assert key_line(path, "family") == key_line(tmp_path / "gpu_specs" / path.name, "family")
    assert DEFAULT_PRESETS_DIR == DATA_DIR / "scenarios"


def test_a_users_file_libyaml_would_accept_is_refused_as_before(tmp_path: Path) -> None:
    """libyaml takes a tab inside a plain value; PyYAML does not, and a user's file is read by PyYAML."""
    text = "name: a\tb\nworkload: {input_tokens: 1000, prefix_share: 0.5, output_tokens: 10}\n"
    if yaml.__with_libyaml__:
        assert yaml.load(text, Loader=yaml.CSafeLoader)["name"] == "a\tb"
    path = tmp_path / "tab.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataFileError, match=r"tab\.yaml:1: YAML syntax error"):
        load_model(path, Scenario)


@pytest.mark.parametrize(
    "text",
    ["provider: [1, 2\n", "a: 1\na: 2\n", "when: 2026-02-30\n", "\x07bell: 1\n", "n: 1" + "0" * 5000 + "\n", ""],
    ids=["unclosed", "duplicate key", "no such date", "control character", "huge integer", "empty"],
)
def test_a_broken_bundled_file_is_reported_as_a_users_file_is(
    text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(The nesting and alias limits are not checked again on bundled files: the test above, reading
    each of them with the pure-Python loader too, fails on a bundled file that breaks them.)"""
    user = tmp_path / "user" / "sheet.yaml"
    bundled = tmp_path / "bundled" / "sheet.yaml"
    for path in (user, bundled):
        path.parent.mkdir()
        path.write_text(text, encoding="utf-8")
    with pytest.raises(DataFileError) as as_user:
        load_model(user, Scenario)
    monkeypatch.setattr(datafile, "DATA_DIR", bundled.parent)
    with pytest.raises(DataFileError) as as_bundled:
        load_model(bundled, Scenario)
    assert as_bundled.value.lines == [line.replace(str(user), str(bundled)) for line in as_user.value.lines]


def test_the_old_package_paths_still_re_export_every_name() -> None:
    import calculator.capacity as capacity
    import calculator.scenario as scenario
    from calculator.capacity import sizing
    from calculator.scenario import inputs, model

    assert scenario.__all__ == [*inputs.__all__, *model.__all__]
    assert scenario.Scenario is Scenario and scenario.TurnShape is inputs.TurnShape
    assert capacity.__all__ == sizing.__all__ and capacity.ReplicaCapacity is sizing.ReplicaCapacity
    names: dict[str, Any] = {}
    exec("from calculator.scenario import *", names)  # the star import users wrote
    assert {"Scenario", "Fx", "TurnShape"} <= set(names)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = scenario.nothing
    from calculator.pricing import cents, option

    assert option.cents is cents.cents and option.parts_adding_up is cents.parts_adding_up


def test_models_skip_their_field_docstrings_but_the_schemas_keep_them() -> None:
    """Reading docstrings parses each model's source at import (about 90 ms a run); only the schemas use them."""
    import os

    from calculator.catalog.field_docs import ENV
    from calculator.cli.catalog import schema_files
    from calculator.scenario.inputs import Traffic

    if os.environ.get(ENV) != "1":
        assert Traffic.model_fields["turns_per_month"].description is None
    scenario_schema = next(text for path, text in schema_files().items() if path.parent.name == "scenarios")
    assert '"description": "Requests per month."' in scenario_schema


@pytest.mark.parametrize("collecting", [True, False], ids=["collector on", "collector off"])
def test_a_command_run_in_process_leaves_the_cycle_collector_as_it_found_it(
    collecting: bool, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Start-up imports run with the collector off (``without_collection``); the caller's setting is kept."""
    import gc

    from calculator.cli import parser

    during: list[bool] = []
    build = parser.build_parser

    def building(command: str | None = None) -> Any:
        during.append(gc.isenabled())
        return build(command)

    monkeypatch.setattr(parser, "build_parser", building)
    was = gc.isenabled()
    try:
        (gc.enable if collecting else gc.disable)()
        assert parser.main(["presets"]) == 0
        assert gc.isenabled() is collecting
    finally:
        (gc.enable if was else gc.disable)()
    assert during == [False]
    assert "coding-agent" in capsys.readouterr().out
