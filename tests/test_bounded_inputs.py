"""Whatever a file holds, reading it stops at a stated limit of size, lines, rows and memory, with one
sentence naming the limit: blank-line floods, Parquet dictionary bombs, times no date can hold, devices,
FIFOs and config files of gigabytes.

The bombs are read in a child process under an address-space limit (:data:`CHILD_MEMORY`), so a reader
that regressed fails its test instead of taking the machine down; a FIFO is read in a child with a
timeout, so a reader that blocks on it fails instead of hanging the suite.
"""

from __future__ import annotations

import contextlib
import glob
import gzip
import io
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calculator.catalog.datafile import DataFileError
from calculator.catalog.textfile import APP_MAX_CHARS, MIN_LINE_CHARS, Malformed, TooLarge, line_limit, text_lines
from calculator.cli import main
from calculator.cli.model_import import MAX_CONFIG_BYTES
from calculator.traffic import globs, shards
from calculator.traffic.logsource import PARQUET_EXPANSION, PARQUET_FLOOR, LogPart, open_log, part_records
from tests.apptest import open_page, text_of

ROOT = Path(__file__).resolve().parent.parent
CHILD_MEMORY = 1024**3
"""Address space a child reading a bomb may use: the 1 GB the issue allows any input."""
SAVE_IT = "save what it holds to a file and give that"
BOMB_ROWS = 20_000
BOMB_VALUE = 1_000_000
"""A 1 MB value repeated over 20,000 rows: 20 GB of text in a Parquet file of under 1 KB."""


def _dictionary_bomb(path: Path, nested: bool) -> Path:
    """One ``BOMB_VALUE``-character value, dictionary-encoded, in every row: a prompt column, or the content
    of a chat message (a nested column, which no dictionary read can keep packed)."""
    values = pa.DictionaryArray.from_arrays(pa.array(np.zeros(BOMB_ROWS, dtype=np.int32)), pa.array(["x" * BOMB_VALUE]))
    if nested:
        roles = pa.array(["user"] * BOMB_ROWS)
        messages = pa.StructArray.from_arrays([roles, values], names=["role", "content"])
        column = pa.ListArray.from_arrays(pa.array(np.arange(BOMB_ROWS + 1, dtype=np.int32)), messages)
        table = pa.table({"messages": column})
    else:
        table = pa.table({"prompt": values})
    pq.write_table(table, path, compression="zstd", row_group_size=BOMB_ROWS)
    return path


_CHILD = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
from calculator.catalog.datafile import DataFileError
from calculator.catalog.textfile import APP_MAX_CHARS
from calculator.traffic.prefix import LogReader
try:
    n = sum(1 for _ in LogReader(sys.argv[1], max_chars=None if sys.argv[2] == "cli" else APP_MAX_CHARS))
    said = f"read {{n}} requests"
except DataFileError as exc:
    said = exc.lines[0]
except MemoryError:
    said = "MemoryError"
print(json.dumps({{"said": said, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""


def _in_child(path: Path, way: str) -> dict[str, object]:
    run = subprocess.run(
        [sys.executable, "-c", _CHILD.format(limit=CHILD_MEMORY), str(path), way],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    result: dict[str, object] = json.loads(run.stdout)
    return result


@pytest.mark.parametrize("nested", [False, True], ids=["prompt column", "message content"])
@pytest.mark.parametrize("way", ["cli", "app"])
def test_a_parquet_dictionary_bomb_stops_at_its_limit_in_bounded_memory(tmp_path: Path, nested: bool, way: str) -> None:
    bomb = _dictionary_bomb(tmp_path / "bomb.parquet", nested)
    assert bomb.stat().st_size < 2_000  # 20 GB of text
    result = _in_child(bomb, way)
    said = str(result["said"])
    if way == "cli":
        assert f"decodes to more than {PARQUET_FLOOR:,} characters, {PARQUET_EXPANSION:,} times" in said
    else:
        assert f"more than {APP_MAX_CHARS:,} characters unpacked" in said
    assert float(str(result["peak_mb"])) < CHILD_MEMORY / 1024**2
    print(f"{way} {'nested' if nested else 'prompt'} bomb: {said[:60]}... peak {result['peak_mb']:.0f} MB")


def test_a_parquet_file_with_more_rows_than_the_app_reads_is_refused_before_decoding(tmp_path: Path) -> None:
    path = tmp_path / "rows.parquet"
    pq.write_table(pa.table({"prompt": [f"request {i}" for i in range(500)]}), path)
    with pytest.raises(TooLarge, match="more than 200 rows"):
        list(part_records(LogPart(str(path), "rows.parquet"), Malformed("log"), max_chars=200 * MIN_LINE_CHARS))


def test_a_parquet_time_past_year_9999_is_one_sentence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "times.parquet"
    stamps = pa.array([1_700_000_000_000_000, 2**62], type=pa.timestamp("us"))  # 2**62 us: the year 146,140
    pq.write_table(pa.table({"prompt": ["hello there", "again"], "timestamp": stamps}), path)
    assert main(["prefix", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "times are read from the year 1 to 9999" in err


def test_a_flood_of_blank_lines_stops_at_the_line_limit() -> None:
    """950 million newlines gzip to 1 MB and stay under the app's 1 GB: the line limit stops them."""
    assert line_limit(APP_MAX_CHARS) == 20_000_000
    flood = gzip.compress(b"\n" * 100_000)
    with pytest.raises(TooLarge, match="more than 1,000 lines .blank ones count."):
        list(text_lines(io.BytesIO(flood), "flood.jsonl.gz", 1_000 * MIN_LINE_CHARS))
    lines = [b"\n"] * 2_000
    with pytest.raises(TooLarge, match="more than 1,000 lines"):
        list(text_lines(lines, "flood.jsonl", 1_000 * MIN_LINE_CHARS))


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/null"])
@pytest.mark.parametrize("command", ["models import", "measurements import"])
def test_a_device_is_refused_by_its_type(capsys: pytest.CaptureFixture[str], device: str, command: str) -> None:
    assert main([*command.split(), device]) == 2
    err = capsys.readouterr().err
    assert (
        err == f"error: {device}: a device or socket, not a regular file; save what it holds to a file and give that\n"
    )


@pytest.mark.parametrize("command", ["models import", "measurements import"])
def test_a_fifo_is_refused_by_its_type_without_blocking(tmp_path: Path, command: str) -> None:
    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)
    run = subprocess.run(
        [sys.executable, "-m", "calculator", *command.split(), str(fifo)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert run.returncode == 2 and run.stderr.endswith(
        "a pipe (FIFO), not a regular file; save what it holds to a file and give that\n"
    )


def test_a_log_fifo_without_a_writer_reads_as_empty_instead_of_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "log.jsonl"
    os.mkfifo(fifo)
    run = subprocess.run(
        [sys.executable, "-m", "calculator", "prefix", str(fifo)], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert run.returncode == 2 and "it is empty" in run.stderr and run.stderr.count("\n") == 1


def test_a_config_larger_than_any_config_is_refused_by_its_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big = tmp_path / "config.json"
    with big.open("wb") as fh:
        fh.truncate(MAX_CONFIG_BYTES + 1)  # sparse: nothing is written
    assert main(["models", "import", str(big)]) == 2
    assert f"a file read here is at most {MAX_CONFIG_BYTES:,}" in capsys.readouterr().err


# --- --cluster: a stated timeout, the schemes listed, and a server that is not a scheduler named -------------


@contextlib.contextmanager
def _server_saying(banner: bytes) -> Iterator[int]:
    """A TCP server on 127.0.0.1 that sends ``banner`` (maybe nothing) to each connection, then waits."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    done = threading.Event()

    def serve() -> None:
        held = []
        while not done.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            conn.sendall(banner)
            held.append(conn)
        for conn in held:
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        done.set()
        thread.join(5)
        listener.close()


@pytest.mark.parametrize(
    ("banner", "said"),
    [(b"", "it sent nothing in 1 s"), (b"SSH-2.0-OpenSSH_9.6\r\n", "it does not speak its protocol")],
    ids=["a silent web server", "an SSH server"],
)
def test_a_server_that_is_not_a_scheduler_is_named_within_the_timeout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, banner: bytes, said: str
) -> None:
    monkeypatch.setattr(shards, "CONNECT_TIMEOUT_S", 1)
    log = tmp_path / "log.jsonl"
    log.write_text('{"prompt": "hello"}\n')
    with _server_saying(banner) as port:
        assert main(["prefix", str(log), "--cluster", f"tcp://127.0.0.1:{port}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"'tcp://127.0.0.1:{port}' is not a Dask scheduler ({said})" in err


@pytest.mark.parametrize("scheme", ["inproc", "ucx", "tls", "ws"])
def test_a_scheduler_scheme_other_than_tcp_is_refused_before_connecting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], scheme: str
) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text('{"prompt": "hello"}\n')
    assert main(["prefix", str(log), "--cluster", f"{scheme}://127.0.0.1:8786"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "give the scheduler's tcp:// address" in err


# --- globs and folders: each real folder once, at most MAX_LOG_FILES files -----------------------------------


def _planted(tmp_path: Path) -> Path:
    """logs/ with two parts and six links back up the tree: Python's glob walks it exponentially."""
    logs = tmp_path / "logs"
    (logs / "a" / "b").mkdir(parents=True)
    (logs / "a" / "one.jsonl").write_text('{"prompt": "hello there"}\n')
    (logs / "a" / "b" / "two.jsonl").write_text('{"prompt": "hello again"}\n')
    for k in range(3):
        (logs / "a" / f"up{k}").symlink_to("..")
        (logs / "a" / "b" / f"up{k}").symlink_to("../..")
    return logs


def test_a_glob_over_planted_folder_links_reads_each_file_once(tmp_path: Path) -> None:
    logs = _planted(tmp_path)
    found = open_log(str(logs / "**" / "*.jsonl"))
    assert sorted(Path(p.location).name for p in found.parts) == ["one.jsonl", "two.jsonl"]
    assert sorted(Path(p.location).name for p in open_log(str(logs)).parts) == ["one.jsonl", "two.jsonl"]


def test_a_glob_stops_at_the_stated_file_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(globs, "MAX_LOG_FILES", 5)
    for k in range(8):
        (tmp_path / f"part{k}.jsonl").write_text('{"prompt": "x"}\n')
    with pytest.raises(DataFileError, match="more than 5 files; a log is read from at most that many"):
        open_log(str(tmp_path / "*.jsonl"))
    with pytest.raises(DataFileError, match="more than 5 files"):
        open_log(str(tmp_path))


_PIECES = ["*", "**", "?", "a", "b", "d", "x*", "*.jsonl", "[!x]*", "[xa]?*", ".h"]
_TREE = ("x.jsonl", "a/y.jsonl", "a/b/z.jsonl", "a/.hidden.jsonl", ".h/q.jsonl", "d/x1.jsonl", "d/[x].json", "d/x2")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    pattern=st.lists(
        st.sampled_from(["*", "**", "?", "a", "b", "d", "x*", "*.jsonl", "[!x]*", "[xa]?*", ".h"]),
        min_size=1,
        max_size=4,
    )
)
def test_a_glob_matches_what_pythons_glob_matches_where_no_link_is_planted(
    tmp_path: Path, pattern: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "tree"
    if not root.exists():
        for name in _TREE:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text("{}\n")
    monkeypatch.chdir(root)
    text = "/".join(pattern)
    expected = {f for f in glob.glob(text, recursive=True) if os.path.isfile(f)}  # '**/**' repeats some
    found = globs.glob_files(text)
    assert set(found) == expected and len(found) == len(expected)


# --- every error one sentence: Ctrl-C, digits no int() reads ------------------------------------------------


def test_ctrl_c_is_exit_130_and_one_line(tmp_path: Path) -> None:
    """The command waits on a pipe that a writer holds open and never writes to; SIGINT ends it."""
    fifo = tmp_path / "log.jsonl"
    os.mkfifo(fifo)
    writer = os.open(fifo, os.O_RDWR)  # a writer that is there, so the read waits
    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "calculator", "prefix", str(fifo)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        time.sleep(3)  # started, or still starting: either way Ctrl-C is one line
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    finally:
        os.close(writer)
    assert child.returncode == 130
    assert err == "interrupted (Ctrl-C); nothing was left half-written\n" and out == ""


@pytest.mark.parametrize("text", ["²", "1, ٣", "9" * 5000])
def test_replay_concurrency_in_a_link_that_int_cannot_read_is_one_sentence(text: str) -> None:
    at = open_page("replay", 60, r_conc=text)  # no exception on the page
    said = text_of(at.warning) + text_of(at.error)
    assert "URL parameter `r_conc` (Concurrency levels):" in said and "is not a whole number from 1 to" in said
    assert text not in said or len(text) < 20


@pytest.mark.parametrize("key", ["²", "9" * 5000])
def test_a_vllm_column_table_key_int_cannot_read_is_no_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str
) -> None:
    path = tmp_path / "benchmark_results.json"
    path.write_text(json.dumps({"serving": {"Test name": {key: "serving_llama8B_tp1_qps_1"}}}))
    assert main(["measurements", "import", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1


# --- no control character reaches the terminal ---------------------------------------------------------------

LITELLM = ROOT / "tests" / "fixtures" / "price_lists" / "litellm_model_prices.json"


def test_text_from_a_file_reaches_the_terminal_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A list is cited by its name, and a file name may hold a terminal escape (clear screen, set the title,
    reverse the text): every command's output shows them escaped, its own line breaks kept."""
    hostile = tmp_path / "prices\x1b[2J\x1b]0;owned\x07\u202elave.json"
    hostile.write_bytes(LITELLM.read_bytes())
    assert main(["sheets", "refresh", "--from", str(hostile), "--read-on", "2026-11-30"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "prices\\x1b[2J\\x1b]0;owned\\x07\\u202elave.json" in out  # the name, escaped
    assert out.count("\n") > 5  # the output's own lines are still lines
