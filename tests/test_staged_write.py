"""``sheets refresh --write`` changes every sheet or none: a failure while staging (disk full, a file too
large to write) or while swapping leaves every sheet as it was and says so; a process killed while swapping
leaves a journal, and the next write finishes the set before anything else."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import calculator.catalog.staged_write as staged_write
from calculator.catalog.datafile import DataFileError
from calculator.catalog.prices import DEFAULT_SHEETS_DIR
from calculator.catalog.staged_write import JOURNAL, finish_interrupted, write_all
from calculator.cli import main

ROOT = Path(__file__).resolve().parent.parent
LITELLM = ROOT / "tests" / "fixtures" / "price_lists" / "litellm_model_prices.json"
READ = "2026-11-30"


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.fixture
def sheets(tmp_path: Path) -> Path:
    folder = tmp_path / "sheets"
    shutil.copytree(DEFAULT_SHEETS_DIR, folder)
    return folder


def _files(folder: Path, n: int) -> list[tuple[Path, str]]:
    return [(folder / f"s{k}.yaml", f"new {k}\n") for k in range(n)]


def _old(folder: Path, n: int) -> None:
    folder.mkdir(exist_ok=True)
    for k in range(n):
        (folder / f"s{k}.yaml").write_text(f"old {k}\n")


def test_a_set_is_written_whole_and_leaves_nothing_beside_it(tmp_path: Path) -> None:
    _old(tmp_path, 4)
    os.chmod(tmp_path / "s2.yaml", 0o640)
    write_all(_files(tmp_path, 4))
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"s{k}.yaml" for k in range(4)]
    assert [(tmp_path / f"s{k}.yaml").read_text() for k in range(4)] == [f"new {k}\n" for k in range(4)]
    assert (tmp_path / "s2.yaml").stat().st_mode & 0o777 == 0o640


def test_a_failure_while_staging_changes_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _old(tmp_path, 4)
    before = _digest(tmp_path)
    real = staged_write._stage

    def full_at_the_third(path: Path, text: str, token: str) -> Path:
        if path.name == "s2.yaml":
            raise OSError(28, "No space left on device")
        return real(path, text, token)

    monkeypatch.setattr(staged_write, "_stage", full_at_the_third)
    with pytest.raises(DataFileError, match=r"s2.yaml: cannot write: No space left on device; no file was changed"):
        write_all(_files(tmp_path, 4))
    assert _digest(tmp_path) == before


def test_a_failure_while_swapping_puts_every_old_file_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _old(tmp_path, 4)
    before = _digest(tmp_path)
    real = os.replace
    calls = {"n": 0}

    def fails_at_the_third(src: Any, dst: Any) -> None:
        if ".yaml.staged-" in str(src):
            calls["n"] += 1
            if calls["n"] == 3:
                raise OSError(30, "Read-only file system")
        real(src, dst)

    monkeypatch.setattr(os, "replace", fails_at_the_third)  # the module uses os.replace
    with pytest.raises(DataFileError, match=r"s2.yaml: cannot write: Read-only file system; no file was changed"):
        write_all(_files(tmp_path, 4))
    assert _digest(tmp_path) == before


_KILLED = """
import os, signal, sys
from pathlib import Path
import calculator.catalog.staged_write as staged_write
real, calls = os.replace, []
def killed_at_the_third(src, dst):
    if ".yaml.staged-" in str(src):
        calls.append(src)
        if len(calls) == 3:
            os.kill(os.getpid(), signal.SIGKILL)
    real(src, dst)
staged_write.os.replace = killed_at_the_third
folder = Path(sys.argv[1])
staged_write.write_all([(folder / f"s{k}.yaml", f"new {k}\\n") for k in range(4)])
"""


def test_a_set_killed_while_swapping_is_finished_by_the_next_write(tmp_path: Path) -> None:
    _old(tmp_path, 4)
    run = subprocess.run([sys.executable, "-c", _KILLED, str(tmp_path)], cwd=ROOT, timeout=60, capture_output=True)
    assert run.returncode == -9
    assert (tmp_path / JOURNAL).exists()
    assert [(tmp_path / f"s{k}.yaml").read_text() for k in range(4)] == ["new 0\n", "new 1\n", "old 2\n", "old 3\n"]
    assert finish_interrupted(tmp_path) == [tmp_path / "s2.yaml", tmp_path / "s3.yaml"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"s{k}.yaml" for k in range(4)]
    assert [(tmp_path / f"s{k}.yaml").read_text() for k in range(4)] == [f"new {k}\n" for k in range(4)]


def _refresh(sheets: Path, *more: str) -> list[str]:
    return ["sheets", "refresh", "--from", str(LITELLM), "--read-on", READ, "--sheets", str(sheets), *more]


def test_refresh_write_with_no_room_for_its_last_sheet_changes_none(
    sheets: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sheets before it could each be rewritten whole; none is, and the message says so."""
    assert main(_refresh(sheets, "--json")) == 0
    written = sorted({p["provider"] for p in json.loads(capsys.readouterr().out)["proposals"] if p["writable"]})
    assert len(written) >= 2
    before = _digest(sheets)
    real = staged_write._stage

    def full_at_the_last(path: Path, text: str, token: str) -> Path:
        if path.stem == written[-1]:
            raise OSError(28, "No space left on device")
        return real(path, text, token)

    monkeypatch.setattr(staged_write, "_stage", full_at_the_last)
    assert main(_refresh(sheets, "--write")) == 2
    err = capsys.readouterr().err
    assert (
        f"{written[-1]}.yaml: cannot write: No space left on device; no file was changed (all {len(written)} or none)"
        in err
    )
    assert _digest(sheets) == before


def test_refresh_write_leaves_nothing_beside_the_sheets(sheets: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_refresh(sheets, "--write")) == 0
    assert "Wrote " in capsys.readouterr().out
    assert not [p for p in sheets.iterdir() if ".staged-" in p.name or ".backup-" in p.name or p.name == JOURNAL]


@pytest.mark.parametrize("flag", ["--save"])
def test_a_folder_link_inside_a_save_path_is_never_followed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "linked").symlink_to(elsewhere)
    target = tmp_path / "out" / "linked" / "scenario.yaml"
    assert main(["compare", "--preset", "coding-agent", flag, str(target)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "in the path is a symbolic link, never followed" in err
    assert list(elsewhere.iterdir()) == []
