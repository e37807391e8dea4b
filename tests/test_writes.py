"""Files the commands write (compare/prefix --save, bench --out, price imports, schemas): atomically, through
a unique temporary file, never through a link, keeping the old file's permissions, refused up front."""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import json
import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calculator.catalog.datafile import check_writable, write_atomically
from calculator.catalog.measurements import load_records
from calculator.cli import main
from calculator.measure.bench import write_records
from tests.bench_server import running

MOONCAKE = Path(__file__).resolve().parent / "fixtures" / "traces" / "mooncake" / "synthetic_trace.jsonl"


@contextlib.contextmanager
def _unwritable(folder: Path) -> Iterator[Path]:
    """``folder`` made so no new file can be created in it, for root too (immutable where chmod is not enough)."""
    folder.mkdir()
    folder.chmod(0o555)
    immutable = False
    if os.geteuid() == 0:
        immutable = subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode == 0
        if not immutable:
            folder.chmod(0o755)
            pytest.skip("root ignores folder permissions and chattr is not available here")
    try:
        yield folder
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        folder.chmod(0o755)


@pytest.fixture()
def unwritable(tmp_path: Path) -> Iterator[Path]:
    with _unwritable(tmp_path / "read-only") as folder:
        yield folder


def _listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# --- the writer ----------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(mode=st.integers(0, 0o777))
def test_replacing_a_file_keeps_its_permissions(tmp_path_factory: pytest.TempPathFactory, mode: int) -> None:
    path = tmp_path_factory.mktemp("mode") / "scenario.yaml"
    path.write_text("old\n", encoding="utf-8")
    path.chmod(mode)
    write_atomically(path, "new\n")
    assert stat.S_IMODE(path.stat().st_mode) == mode
    path.chmod(0o600)
    assert path.read_text(encoding="utf-8") == "new\n"


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_new_file_gets_the_permissions_the_umask_gives(tmp_path: Path, umask: int, mode: int) -> None:
    old = os.umask(umask)
    try:
        write_atomically(tmp_path / "new.yaml", "x\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.yaml").stat().st_mode) == mode


@pytest.mark.skipif(os.geteuid() != 0, reason="only a privileged writer can keep another user's ownership")
def test_replacing_a_file_keeps_its_owner(tmp_path: Path) -> None:
    path = tmp_path / "theirs.yaml"
    path.write_text("old\n", encoding="utf-8")
    os.chown(path, 65534, 65534)
    write_atomically(path, "new\n")
    assert (path.stat().st_uid, path.stat().st_gid) == (65534, 65534)


def test_a_link_at_the_path_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("precious\n", encoding="utf-8")
    link = tmp_path / "scenario.yaml"
    link.symlink_to(target)
    with pytest.raises(OSError, match="symbolic link"):
        write_atomically(link, "new\n")
    assert link.is_symlink() and target.read_text(encoding="utf-8") == "precious\n"
    assert _listing(tmp_path) == ["elsewhere.txt", "scenario.yaml"]


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_a_path_that_is_not_a_regular_file_is_never_replaced(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "scenario.yaml"
    os.mkfifo(path) if kind == "fifo" else path.mkdir()
    with pytest.raises(OSError, match="not a regular file" if kind == "fifo" else "folder"):
        write_atomically(path, "new\n")
    assert stat.S_ISFIFO(path.lstat().st_mode) if kind == "fifo" else path.is_dir()
    assert _listing(tmp_path) == ["scenario.yaml"]


def test_a_link_planted_at_the_temporary_name_is_never_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    path = tmp_path / "scenario.yaml"
    (tmp_path / ".scenario.yaml.tmp").symlink_to(victim)  # the old fixed temporary name
    names = iter(["planted", "fresh"])
    monkeypatch.setattr("calculator.catalog.datafile.secrets.token_hex", lambda n: next(names))
    (tmp_path / ".scenario.yaml.planted.tmp").symlink_to(victim)  # a name the writer draws
    write_atomically(path, "new\n")
    assert path.read_text(encoding="utf-8") == "new\n" and not path.is_symlink()
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert (tmp_path / ".scenario.yaml.planted.tmp").is_symlink()
    assert _listing(tmp_path) == [".scenario.yaml.planted.tmp", ".scenario.yaml.tmp", "scenario.yaml", "victim.txt"]


def test_check_writable_refuses_up_front_and_leaves_nothing(tmp_path: Path, unwritable: Path) -> None:
    (tmp_path / "link.yaml").symlink_to(tmp_path / "nowhere")
    before = _listing(tmp_path)
    for path, reason in [
        (unwritable / "x.yaml", "ermi"),  # Permission denied / Operation not permitted
        (tmp_path / "missing" / "x.yaml", "does not exist"),
        (tmp_path / "link.yaml", "symbolic link"),
        (tmp_path, "folder"),
        (Path(""), "file name"),
    ]:
        with pytest.raises(OSError, match=reason):
            check_writable(path)
    check_writable(tmp_path / "fine.yaml")
    assert _listing(tmp_path) == before and _listing(unwritable) == []


# --- compare --save, prefix --save -------------------------------------------------------------------


def _one_line_error(capsys: pytest.CaptureFixture[str], flag: str) -> str:
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and flag in err, err
    return err


def test_compare_save_empty_is_refused_not_ignored(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "--preset", "coding-agent", "--save", ""]) == 2
    _one_line_error(capsys, "--save")


def test_compare_save_keeps_the_file_permissions(tmp_path: Path) -> None:
    path = tmp_path / "pinned.yaml"
    path.write_text("an earlier save\n", encoding="utf-8")
    path.chmod(0o644)
    assert main(["compare", "--preset", "coding-agent", "--save", str(path)]) == 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert path.read_text(encoding="utf-8").startswith("schema_version")


@pytest.mark.parametrize("kind", ["link", "fifo"])
def test_compare_save_over_a_link_or_device_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    target = tmp_path / "target.txt"
    target.write_text("precious\n", encoding="utf-8")
    path = tmp_path / "pinned.yaml"
    path.symlink_to(target) if kind == "link" else os.mkfifo(path)
    assert main(["compare", "--preset", "coding-agent", "--save", str(path)]) == 2
    _one_line_error(capsys, "--save")
    assert path.is_symlink() if kind == "link" else stat.S_ISFIFO(path.lstat().st_mode)
    assert target.read_text(encoding="utf-8") == "precious\n"


def test_compare_save_into_an_unwritable_folder_is_refused_before_the_work(
    unwritable: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("compared before checking --save")

    monkeypatch.setattr("calculator.cli.compare.compare", never)
    assert main(["compare", "--preset", "coding-agent", "--save", str(unwritable / "pinned.yaml")]) == 2
    _one_line_error(capsys, "--save")


def test_prefix_save_empty_is_refused_before_the_log_is_read(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prefix", str(MOONCAKE), "--preset", "coding-agent", "--save", ""]) == 2
    err = _one_line_error(capsys, "--save")
    assert "file name" in err


def test_prefix_save_over_a_link_is_refused_before_the_log_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    link = tmp_path / "s.yaml"
    link.symlink_to(tmp_path / "t.yaml")
    missing_log = tmp_path / "no-such-log.jsonl"  # the log would fail, so the --save check must come first
    assert main(["prefix", str(missing_log), "--preset", "coding-agent", "--save", str(link)]) == 2
    _one_line_error(capsys, "--save")
    assert link.is_symlink() and not (tmp_path / "t.yaml").exists()


# --- bench --out -----------------------------------------------------------------------------------


@pytest.fixture()
def prompts(tmp_path: Path) -> Path:
    path = tmp_path / "prompts.jsonl"
    path.write_text('{"prompt": "a b c d"}\n', encoding="utf-8")
    return path


def _bench(url: str, prompts: Path, out: Path | str, *extra: str) -> int:
    argv = ["bench", "--base-url", url, "--model", "m", "--prompts", str(prompts), "--concurrency", "1,2"]
    return main([*argv, "--requests-per-level", "4", "--warmup", "0", "--out", str(out), "--quiet", *extra])


def _requests(url: str) -> int:
    seen: int = httpx.get(url.removesuffix("/v1") + "/stats", trust_env=False).json()["requests"]
    return seen


def test_bench_out_into_an_unwritable_folder_fails_before_the_first_request(
    unwritable: Path, prompts: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with running("--ttft-ms", "2", "--itl-ms", "1", "--tokens", "2") as url:
        assert _bench(url, prompts, unwritable / "run.yaml") == 2
        assert _requests(url) == 0
    _one_line_error(capsys, "--out")


@pytest.mark.parametrize("kind", ["empty", "link", "fifo"])
def test_bench_out_refused_up_front(
    tmp_path: Path, prompts: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    out: Path | str = ""
    if kind != "empty":
        out = tmp_path / "run.yaml"
        out.symlink_to(tmp_path / "elsewhere.yaml") if kind == "link" else os.mkfifo(out)
    with running("--ttft-ms", "2", "--itl-ms", "1", "--tokens", "2") as url:
        assert _bench(url, prompts, out) == 2
        assert _requests(url) == 0
    _one_line_error(capsys, "--out")
    assert not (tmp_path / "elsewhere.yaml").exists()


def test_bench_keeps_an_existing_files_permissions(tmp_path: Path, prompts: Path) -> None:
    out = tmp_path / "run.yaml"
    out.write_text("# an earlier run\n", encoding="utf-8")
    out.chmod(0o644)
    with running("--ttft-ms", "2", "--itl-ms", "1", "--tokens", "2") as url:
        assert _bench(url, prompts, out) == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o644
    assert [r.concurrency for r in load_records(tmp_path).records] == [1, 2]


def test_bench_a_write_failing_mid_run_keeps_measuring_and_says_so(
    tmp_path: Path, prompts: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "run.yaml"
    calls: list[int] = []

    def disk_fills(path: Path, records: list[object], *, header: str | None = None) -> None:
        calls.append(len(records))
        if len(calls) > 1:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        write_records(path, records, header=header)  # type: ignore[arg-type]

    monkeypatch.setattr("calculator.cli.bench.write_records", disk_fills)
    with running("--ttft-ms", "2", "--itl-ms", "1", "--tokens", "2") as url:
        code = _bench(url, prompts, out, "--json")
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err.strip() == (
        f"error: --out: cannot write {out}: No space left on device; the last 1 level(s) are not in it"
    )
    assert calls == [1, 2]
    assert [r.concurrency for r in load_records(tmp_path).records] == [1]  # the first level stays written
    data = json.loads(captured.out)
    assert [level["record"]["concurrency"] for level in data["levels"]] == [1, 2]  # nothing measured is lost


# --- every other command that writes --------------------------------------------------------------


def test_every_writer_goes_through_the_one_atomic_writer() -> None:
    root = Path(__file__).resolve().parent.parent / "calculator"
    bypass = [
        f"{path.relative_to(root)}:{number}"
        for path in root.rglob("*.py")
        # the parse cache writes its own entries: relative to a folder checked to be the user's own, mode 0600
        # (the atomic writer gives new files the umask's mode), without fsync (a lost entry is only a miss)
        # staged_write writes a set of files all or nothing, each checked by datafile's check_writable first
        if path.name not in ("datafile.py", "parse_cache.py", "staged_write.py")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if any(call in line for call in ("os.replace(", "os.rename(", ".write_text(", ".write_bytes(", "mkstemp("))
        and "tmp.write_text(" not in line  # genai_prices validates a copy in a private temporary folder
    ]
    assert bypass == []


def test_price_import_refuses_a_linked_sheet_before_changing_any(tmp_path: Path) -> None:
    pytest.importorskip("genai_prices")
    from calculator.catalog.datafile import DataFileError
    from calculator.catalog.genai_prices import diff_sheets, write_proposals
    from calculator.catalog.prices import DEFAULT_SHEETS_DIR, load_price_sheets

    sheets = tmp_path / "sheets"
    shutil.copytree(DEFAULT_SHEETS_DIR, sheets)
    real = tmp_path / "openai-kept-elsewhere.yaml"
    (sheets / "openai.yaml").rename(real)
    (sheets / "openai.yaml").symlink_to(real)
    before = {p.name: p.read_bytes() for p in [*sheets.iterdir(), real] if p.is_file()}
    report = diff_sheets(load_price_sheets(sheets), dt.date(2026, 11, 29), providers=None, today=dt.date(2026, 11, 29))
    assert {e.provider for e in report.entries if e.writable and e.status in ("changed", "new")} > {"openai"}
    with pytest.raises(DataFileError, match="openai.yaml: cannot write: it is a symbolic link"):
        write_proposals(report, sheets)
    assert (sheets / "openai.yaml").is_symlink()
    assert {p.name: p.read_bytes() for p in [*sheets.iterdir(), real] if p.is_file()} == before


def test_schemas_rewrites_a_schema_keeping_its_permissions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from calculator.cli import catalog

    path = tmp_path / ".schema.json"
    path.write_text("{}\n", encoding="utf-8")
    path.chmod(0o644)
    monkeypatch.setattr(catalog, "schema_files", lambda: {path: '{"type": "object"}\n'})
    assert main(["schemas"]) == 0
    assert json.loads(path.read_text(encoding="utf-8")) == {"type": "object"}
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_schemas_into_an_unwritable_folder_is_one_line(
    unwritable: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from calculator.cli import catalog

    monkeypatch.setattr(catalog, "schema_files", lambda: {unwritable / ".schema.json": "{}\n"})
    assert main(["schemas"]) == 2
    _one_line_error(capsys, "cannot write")
