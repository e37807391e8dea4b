"""Every data-folder flag a command accepts changes what it prints, and every other one is refused.

The (command, flag) pairs come from the parser itself, so a folder flag added later without an
exercise below (or without effect) fails here. Each pair runs three times: bundled data, the flag at
an unchanged copy (must print the same), the flag at a copy that differs in one known way (must not).
"""

from __future__ import annotations

import argparse
import json
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from calculator.cli import main
from calculator.cli.folders import DATA_FOLDERS, Unread, data_folder
from calculator.cli.parser import build_parser
from calculator.scenario.model import GpuVmChoice, dump_scenario, load_preset

DATA = Path(__file__).resolve().parent.parent / "calculator" / "data"
BUNDLED = {"sheets": "price_sheets", "gpu_specs": "gpu_specs", "records": "measurements", "models": "models"}
FLAG_DEST = {flag: dest for dest, (flag, _) in DATA_FOLDERS.items()}
AS_OF = "2026-10-30"
EXTRA_GPU = "h100x-sxm"
"""A GPU only the changed spec copy has: the one thing bench and measurements import read from it."""


def _commands(parser: argparse.ArgumentParser, prefix: str = "") -> Iterator[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, f"{prefix}{name} ")
    if parser.get_default("func") is not None:
        yield prefix.strip(), parser


def _folder_flags(parser: argparse.ArgumentParser) -> list[str]:
    """The data-folder options ``parser`` accepts: the known four and any other typed as a folder."""
    return [
        flag
        for action in parser._actions
        for flag in action.option_strings
        if (flag in FLAG_DEST or action.type is data_folder) and not isinstance(action, Unread)
    ]


COMMANDS = dict(_commands(build_parser()))
PAIRS = [(command, flag) for command, p in COMMANDS.items() for flag in _folder_flags(p)]
REFUSED = [(command, flag) for command, p in COMMANDS.items() for flag in FLAG_DEST if flag not in _folder_flags(p)]


def _replace(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == count, f"{path.name}: expected {count} x {old!r}; the bundled file changed"
    path.write_text(text.replace(old, new), encoding="utf-8")


def _change_sheets(d: Path) -> None:
    # GLM-5.3 (the seed's offer) 1.40 -> 1.50 input; Claude Sonnet's input, for the TTL advisor.
    _replace(d / "lyceum.yaml", "          input: 1.40\n", "          input: 1.50\n")
    sonnet = "          input: 3.00\n          cached_input: 0.30\n"
    _replace(d / "anthropic.yaml", sonnet, sonnet.replace("3.00", "3.30"), count=6)  # every Sonnet version
    # a GPU VM's price, for deploy (which reads every GPU offer and no serverless price)
    # (Lambda's 8x B200 node: the 1x H100 holds no 70B turn of 20k tokens under the engines' memory rule)
    _replace(d / "lambda.yaml", "        per_gpu_hour: 6.69\n", "        per_gpu_hour: 5.69\n")


def _change_gpus(d: Path) -> None:
    h100 = d / "h100.yaml"
    text = h100.read_text(encoding="utf-8")
    extra = text.replace("family: h100\n", "family: h100x\n").replace("  - id: h100-", "  - id: h100x-")
    (d / "h100x.yaml").write_text(extra, encoding="utf-8")
    # the memory the engine sees is usable_memory_gib (what CUDA reports), so it changes with memory_gb
    _replace(h100, "    memory_gb: 80                # HBM3\n    memory_bandwidth_tbs: 3.35\n"
             "    usable_memory_gib: 79.19\n",
             "    memory_gb: 96                # HBM3\n    memory_bandwidth_tbs: 2.5\n"
             "    usable_memory_gib: 95.03\n")  # fmt: skip


def _change_records(d: Path) -> None:
    # the rate-8 level: the saturation point of the run the presets' rate-4 record belongs to, which sizes them;
    # doubled (14 served of 16 offered, still saturated) so the replica count moves under the fitted roofline
    _replace(
        d / "published.yaml",
        "    request_rate: 8\n    requests_per_s: 6.921\n",
        "    request_rate: 16\n    requests_per_s: 14.0\n",
    )


def _change_models(d: Path) -> None:
    _replace(d / "llama.yaml", "    kv_heads: 8\n    head_dim: 128              # 8192 / 64\n",
             "    kv_heads: 16\n    head_dim: 128              # 8192 / 64\n")  # fmt: skip


CHANGES: dict[str, Callable[[Path], None]] = {
    "sheets": _change_sheets,
    "gpu_specs": _change_gpus,
    "records": _change_records,
    "models": _change_models,
}


@dataclass(frozen=True)
class Folders:
    same: dict[str, Path]
    changed: dict[str, Path]
    work: Path


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> Folders:
    root = tmp_path_factory.mktemp("folders")
    same, changed = {}, {}
    for dest, name in BUNDLED.items():
        same[dest] = Path(shutil.copytree(DATA / name, root / "same" / name))
        changed[dest] = Path(shutil.copytree(DATA / name, root / "changed" / name))
        CHANGES[dest](changed[dest])
    work = root / "work"
    work.mkdir()
    # The seed's coding agent, self-hosted on H100s sized from the H200 record: the GPU specs then
    # scale the capacity (on the record's own GPU they cancel out).
    # (The preset runs GLM-5 by estimate, record: auto; the record is named so the records folder counts.)
    scenario = load_preset("coding-agent")
    hosting = scenario.self_hosting.model_copy(update={"record": "sglang-llama-3.3-70b-bf16-4xh200-rate4"})
    h100 = scenario.model_copy(
        update={"gpu_vm": GpuVmChoice(provider="hyperstack", offer="h100-sxm-8x"), "self_hosting": hosting}
    )
    (work / "scenario.yaml").write_text(dump_scenario(h100), encoding="utf-8")
    system = "You are a coding agent. " + "Tool definitions and house rules. " * 60
    log = [
        {"messages": [{"role": "system", "content": system}, {"role": "user", "content": f"task {i}"}]}
        for i in range(12)
    ]
    (work / "log.jsonl").write_text("\n".join(json.dumps(x) for x in log) + "\n", encoding="utf-8")
    return Folders(same, changed, work)


def _argv(command: str, work: Path) -> tuple[list[str], tuple[int, int]]:
    """A run of ``command`` whose output depends on every folder it reads; exit codes (bundled, changed)."""
    scenario = ["--scenario", str(work / "scenario.yaml")]
    bench_sglang = Path(__file__).resolve().parent / "fixtures/bench/sglang/h200_llama_3_3_70b_online_output.jsonl"
    runs: dict[str, tuple[list[str], tuple[int, int]]] = {
        "turn": (["turn", "--provider", "lyceum", "--model", "GLM-5.3", "--as-of", AS_OF, "--input-tokens", "20000",
                  "--prefix-share", "0.9", "--output-tokens", "500", "--json"], (0, 0)),
        "sheets": (["sheets", "--as-of", AS_OF, "--json"], (0, 0)),
        "gpus": (["gpus", "--json"], (0, 0)),
        "records": (["records", "--json"], (0, 0)),
        "models": (["models", "--json"], (0, 0)),
        # Only the GPU id is checked against the specs: an id the copy adds is refused by the bundled data.
        "measurements import": (["measurements", "import", str(bench_sglang), "--gpu", EXTRA_GPU, "--json"], (2, 0)),
        "fit": (["fit", "--model", "llama-3.3-70b", "--gpu", "h100-sxm", "--gpus", "4", "--json"], (0, 0)),
        "prefix": (["prefix", str(work / "log.jsonl"), "--gpu", "h100-sxm", "--model", "llama-3.3-70b", "--gpus", "4",
                    *scenario, "--json"], (0, 0)),
        # No endpoint: the GPU check runs before any request, so the copy gets one step further
        # (to the missing prompt log) than the bundled specs do.
        "bench": (["bench", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--prompts",
                   str(work / "no-such-prompts.jsonl"), "--out", str(work / "bench.yaml"), "--concurrency", "1",
                   "--gpu", EXTRA_GPU, "--json"], (2, 2)),
        "profile": (["profile", *scenario, "--as-of", AS_OF, "--json"], (0, 0)),
        "hybrid": (["hybrid", *scenario, "--as-of", AS_OF, "--json"], (0, 0)),
        "growth": (["growth", *scenario, "--as-of", AS_OF, "--json"], (0, 0)),
        "ttl": (["ttl", "--provider", "anthropic", "--model", "claude-sonnet-4-5", "--prefix-tokens", "18000",
                 "--gaps-seconds", "30,600", "--as-of", AS_OF, "--json"], (0, 0)),
        "compare": (["compare", *scenario, "--as-of", AS_OF, "--json"], (0, 0)),
        # a p50 TTFT target the rate-8 level meets (191 ms): the records folder's copy of that level sizes it
        "deploy": (["deploy", *scenario, "--model", "llama-3.3-70b", "--latency-percentile", "p50", "--ttft-ms", "200",
                    "--json"], (0, 0)),
        "estimate": (["estimate", "--model", "llama-3.3-70b", "--gpu", "h100-sxm", "--gpus", "4", "--precision", "fp8",
                      "--input-tokens", "1000", "--output-tokens", "200", "--offline", "--json"], (0, 0)),
    }  # fmt: skip
    if command not in runs:
        pytest.fail(f"no exercise for `{command}`: add a run whose output depends on each folder it reads")
    return runs[command]


def _run(capsys: pytest.CaptureFixture[str], argv: list[str], *folders: Path) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    for folder in folders:  # a folder's own path echoed back is not a change in the answer
        out, err = out.replace(str(folder), "<DIR>"), err.replace(str(folder), "<DIR>")
    return code, out, err


def test_the_parser_offers_data_folder_flags_where_commands_read_them() -> None:
    accepted = {command: {FLAG_DEST[f] for f in _folder_flags(p)} for command, p in COMMANDS.items()}
    every = set(DATA_FOLDERS)
    assert accepted == {
        "turn": {"sheets"},
        "sheets": {"sheets"},
        "gpus": {"gpu_specs"},
        "records": {"records"},
        "presets": set(),
        "models": {"models"},
        "measurements import": {"gpu_specs"},
        "schemas": set(),
        "fit": {"models", "gpu_specs"},
        "prefix": every,
        "bench": {"gpu_specs"},
        "profile": every,
        "hybrid": every,
        "growth": every,
        "ttl": {"sheets"},
        "compare": every,
        "deploy": every,
        "estimate": {"models", "gpu_specs"},
    }


@pytest.mark.parametrize(("command", "flag"), PAIRS, ids=[f"{c} {f}" for c, f in PAIRS])
def test_each_data_folder_flag_changes_the_output(
    capsys: pytest.CaptureFixture[str], folders: Folders, command: str, flag: str
) -> None:
    dest = FLAG_DEST.get(flag)
    assert dest in CHANGES, f"{flag} is a data folder flag with no changed copy here: add one"
    argv, (bundled_code, changed_code) = _argv(command, folders.work)
    bundled = _run(capsys, argv)
    same = _run(capsys, [*argv, flag, str(folders.same[dest])], folders.same[dest])
    changed = _run(capsys, [*argv, flag, str(folders.changed[dest])], folders.changed[dest])
    assert bundled[0] == bundled_code, bundled[2]
    assert changed[0] == changed_code, changed[2]
    assert same == bundled, f"{command} {flag} at an unchanged copy should print what the bundled data prints"
    assert changed != bundled, f"{command} ignores {flag}: the changed copy prints the same as the bundled data"


def test_the_changed_copies_differ_where_the_tests_say(capsys: pytest.CaptureFixture[str], folders: Folders) -> None:
    turn = _argv("turn", folders.work)[0]
    _, out, _ = _run(capsys, [*turn, "--sheets", str(folders.changed["sheets"])])
    assert json.loads(out)["no_reuse"]["cost_per_turn"] == pytest.approx(20000 * 1.50e-6 + 500 * 4.40e-6)
    _, out, _ = _run(capsys, ["gpus", "--json", "--gpu-specs", str(folders.changed["gpu_specs"])])
    gpus = {g["id"]: g for g in json.loads(out)}
    assert gpus["h100-sxm"]["memory_bandwidth_tbs"] == 2.5 and EXTRA_GPU in gpus
    _, out, _ = _run(capsys, ["fit", "--model", "llama-3.3-70b", "--gpu", "h100-sxm", "--json",
                              "--models", str(folders.changed["models"])])  # fmt: skip
    assert json.loads(out)["kv_bytes_per_token"] == 2 * 80 * 16 * 128 * 2


def test_compare_sizes_self_hosting_from_the_given_records(
    capsys: pytest.CaptureFixture[str], folders: Folders
) -> None:
    _, out, _ = _run(capsys, ["records", "--json", "--records", str(folders.changed["records"])])
    record = next(r for r in json.loads(out) if r["id"] == "sglang-llama-3.3-70b-bf16-4xh200-rate8")
    assert record["requests_per_s"] == 14.0
    argv = _argv("compare", folders.work)[0]
    before = json.loads(_run(capsys, argv)[1])
    after = json.loads(_run(capsys, [*argv, "--records", str(folders.changed["records"])])[1])

    def capacity(data: dict[str, Any]) -> float:
        return float(next(o for o in data["options"] if o["option"] == "self_hosted")["capacity_requests_per_s"])

    # The level that sizes the scenario (its run's saturation point: 14 served of 16 offered is below 95%)
    # now serves 14 requests/s a replica where it served 6.921: more per replica.
    assert capacity(after) > capacity(before)


@pytest.mark.parametrize(("command", "flag"), REFUSED, ids=[f"{c} {f}" for c, f in REFUSED])
def test_a_command_refuses_a_folder_flag_it_does_not_read(
    capsys: pytest.CaptureFixture[str], folders: Folders, command: str, flag: str
) -> None:
    argv = (
        _argv(command, folders.work)[0] if command not in ("presets", "schemas") else command.split()
    )  # schemas would write files: it is refused before it runs
    folder = folders.changed[FLAG_DEST[flag]]
    code, out, err = _run(capsys, [*argv, flag, str(folder)], folder)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{command}: argument {flag}: this command reads no {DATA_FOLDERS[FLAG_DEST[flag]][1]}s" in err


@pytest.mark.parametrize("kind", ["missing", "empty", "file"])
@pytest.mark.parametrize(("command", "flag"), PAIRS, ids=[f"{c} {f}" for c, f in PAIRS])
def test_a_missing_or_empty_folder_is_one_line_naming_the_flag(
    capsys: pytest.CaptureFixture[str], folders: Folders, tmp_path: Path, command: str, flag: str, kind: str
) -> None:
    target = tmp_path / "mine"
    if kind == "empty":
        target.mkdir()
        (target / "README.md").write_text("no data files here\n")
    elif kind == "file":
        target.write_text("schema_version: 1\n")
    code, out, err = _run(capsys, [*_argv(command, folders.work)[0], flag, str(target)])
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"argument {flag}: " in err and str(target) in err
    assert {"missing": "does not exist", "empty": "holds no *.yaml files", "file": "is a file"}[kind] in err


@pytest.mark.parametrize(
    ("argv", "flag", "needs"),
    [
        (["prefix", "{log}"], "--sheets", "--preset or --scenario"),
        (["prefix", "{log}"], "--records", "--preset or --scenario"),
        (["prefix", "{log}", "--capacity-tokens", "100000"], "--gpu-specs", "--gpu/--model"),
        (["prefix", "{log}"], "--models", "--gpu/--model"),
        (["measurements", "import", "{log}"], "--gpu-specs", "--gpu"),
        (["bench", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--prompts", "{log}", "--out",
          "{out}", "--concurrency", "1"], "--gpu-specs", "--gpu"),
    ],
)  # fmt: skip
def test_a_folder_flag_this_run_would_not_read_is_refused(
    capsys: pytest.CaptureFixture[str], folders: Folders, argv: list[str], flag: str, needs: str
) -> None:
    paths = {"log": str(folders.work / "log.jsonl"), "out": str(folders.work / "out.yaml")}
    filled = [a.format(**paths) for a in argv]
    code, out, err = _run(capsys, [*filled, flag, str(folders.changed[FLAG_DEST[flag]])])
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and f"{flag} is read only with {needs}" in err
