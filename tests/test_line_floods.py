"""A flood of blank lines stops at the stated line limit, with a sentence naming it, in every prompt-log reader:
``prefix`` (the command line and the Prefix analysis page's reader), Plan (a ``.csv`` trace), Replay (a
``.jsonl`` prompt log) and Cache TTL (a session log).

The issue's case: 950 million newlines gzip to 1 MB and stay under the app's 1 GB, and each blank line cost a
read (Prefix analysis, Plan and Replay past 150 s; a 131 KB zstd did the same to Cache TTL; the command line,
which had no cap, ran on). A compressed log may hold :data:`LINES_PER_BYTE` lines a byte of it, at least
:data:`LINES_FLOOR` (20 million) whatever its size, and a run of blank lines is passed over in one step.

Each flood is built here (gzip members or zstd frames repeated: a valid stream of about 1 GB in about 1 MB)
and read in a child process limited to 1 GB of address space and killed after :data:`CHILD_SECONDS`, so a
reader that regressed fails its test with a sentence instead of hanging the suite or taking the machine.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from calculator.catalog import textfile
from calculator.catalog.datafile import DataFileError
from calculator.catalog.textfile import LINES_FLOOR, LINES_PER_BYTE, TooPacked, raw_lines, text_lines, unpacked

ROOT = Path(__file__).resolve().parent.parent
CHILD_MEMORY = 1024**3
"""Address space a child reading a flood may use: the 1 GB the issue allows any input."""
CHILD_SECONDS = 60
"""A child still reading after this long is killed and its test fails (a bounded-time guard, not a timing
assert: the floods stop in a few seconds; the issue's readers ran past 150 s)."""
MEMBER = 1 << 24
"""Newlines in one gzip member or zstd frame (16 MB)."""
MEMBERS = 57
"""Members repeated: about 950 million newlines, as in the issue."""
STOPPED = f"more than {LINES_FLOOR:,} lines (blank ones count)"


def _flood(path: Path, kind: str) -> Path:
    one = gzip.compress(b"\n" * MEMBER, 9) if kind == "gzip" else zstandard.ZstdCompressor(19).compress(b"\n" * MEMBER)
    path.write_bytes(one * MEMBERS)  # concatenated members (frames) are one stream to every reader
    return path


_CHILD = """
import io, json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
from pathlib import Path
from calculator.catalog.datafile import DataFileError
from calculator.catalog.textfile import APP_MAX_CHARS
from calculator.errors import CalculatorError

way, path = sys.argv[1], Path(sys.argv[2])
said = None
try:
    if way == "prefix command":
        import contextlib
        from calculator.cli import main
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code = main(["prefix", str(path), "--workers", "1"])
        said = f"exit {{code}}: {{err.getvalue()}}"
    elif way == "prefix analysis":
        import contextlib
        from calculator.present.prefix_charts import read_log

        @contextlib.contextmanager
        def opener():
            with path.open("rb") as fh:
                yield fh, path.stat().st_size

        read_log(opener, "flood.jsonl.gz", max_chars=APP_MAX_CHARS)
    elif way == "plan":
        from calculator.planning.load_profile import profile_from_trace
        profile_from_trace(io.BytesIO(path.read_bytes()), name="flood.csv.gz", max_chars=APP_MAX_CHARS)
    elif way == "replay":
        from calculator.measure.bench import read_prompt_log
        read_prompt_log(path, name="flood.jsonl.gz", max_chars=APP_MAX_CHARS)
    elif way == "cache ttl":
        from calculator.pricing.ttl import read_session_log
        read_session_log(io.BytesIO(path.read_bytes()), name="flood.jsonl.zst", max_chars=APP_MAX_CHARS)
    if said is None:
        said = "read the flood without a limit"
except (DataFileError, CalculatorError) as exc:
    said = str(exc)
except MemoryError:
    said = "MemoryError"
# VmHWM is this program's own peak: ru_maxrss would carry the parent's (a test worker's) across exec on Linux
hwm = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({{"said": said, "peak_mb": int(hwm.split()[1]) / 1024}}))
"""


def _read_in_child(way: str, path: Path) -> dict[str, object]:
    try:
        run = subprocess.run(
            [sys.executable, "-c", _CHILD.format(limit=CHILD_MEMORY), way, str(path)],
            capture_output=True,
            text=True,
            timeout=CHILD_SECONDS,
            cwd=ROOT,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(
            f"{way}: still reading a flood of blank lines after {CHILD_SECONDS} s (it should stop at the line limit)"
        )
    assert run.returncode == 0, run.stderr[-2000:]
    result: dict[str, object] = json.loads(run.stdout.strip().splitlines()[-1])
    return result


READERS = [("prefix command", "gzip"), ("prefix analysis", "gzip"), ("plan", "gzip"), ("replay", "gzip")]
READERS += [("cache ttl", "zstd")]
OTHER_KIND = [(way, "zstd" if kind == "gzip" else "gzip") for way, kind in READERS]


def _check_flood(tmp_path: Path, way: str, kind: str) -> None:
    suffix = {"plan": ".csv"}.get(way, ".jsonl") + (".gz" if kind == "gzip" else ".zst")
    path = _flood(tmp_path / f"flood{suffix}", kind)
    assert path.stat().st_size < 1_500_000  # about 1 MB holding 956 million newlines
    result = _read_in_child(way, path)
    said = str(result["said"])
    assert STOPPED in said, said
    assert f"{LINES_PER_BYTE} lines a byte of it" in said
    assert "Traceback" not in said
    if way == "prefix command":
        assert said.startswith("exit 2: ") and said.count("\n") == 1  # one line on stderr
    assert float(str(result["peak_mb"])) < CHILD_MEMORY / 1024**2


@pytest.mark.parametrize(("way", "kind"), READERS)
def test_a_flood_of_blank_lines_stops_at_the_line_limit_in_every_log_reader(
    tmp_path: Path, way: str, kind: str
) -> None:
    _check_flood(tmp_path, way, kind)


@pytest.mark.fuzz
@pytest.mark.parametrize(("way", "kind"), OTHER_KIND)
def test_a_flood_in_the_other_compression_stops_too(tmp_path: Path, way: str, kind: str) -> None:
    _check_flood(tmp_path, way, kind)


def test_the_line_limit_counts_blank_lines_of_a_compressed_log_without_a_size_cap() -> None:
    """The command line reads any size (no ``max_chars``), yet a compressed log's lines are bounded."""
    flood = gzip.compress(b"\n" * (LINES_FLOOR + 10), 9)
    with pytest.raises(TooPacked, match=re.escape(f"flood.gz: unpacks to {STOPPED}")):
        list(text_lines(io.BytesIO(flood), "flood.gz"))
    spaces = zstandard.ZstdCompressor().compress(b"  \t\n" * (LINES_FLOOR + 10))
    with pytest.raises(TooPacked, match=re.escape(STOPPED)):
        list(text_lines(io.BytesIO(spaces), "spaces.zst"))
    just_under = gzip.compress(b"\n" * (LINES_FLOOR - 10) + b'{"prompt": "hi"}\n', 9)
    assert list(text_lines(io.BytesIO(just_under), "ok.gz")) == [(LINES_FLOOR - 9, '{"prompt": "hi"}')]


def test_a_compressed_log_unpacking_past_its_ratio_is_refused_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textfile, "EXPANSION_FLOOR", 1_000_000)  # the floors are 1 GB and 20 million lines
    monkeypatch.setattr(textfile, "LINES_FLOOR", 10**9)
    packed = zstandard.ZstdCompressor().compress(b'{"prompt": "the same request"}\n' * 200_000)  # 6.2 MB in < 1 kB
    assert len(packed) * textfile.EXPANSION < 1_000_000
    with pytest.raises(TooPacked, match="bomb.zst: unpacks to more than 1,000,000 characters: .* 1,000 times its size"):
        list(text_lines(io.BytesIO(packed), "bomb.zst"))
    ordinary = gzip.compress(b"".join(b'{"prompt": "request %d"}\n' % i for i in range(100_000)))
    assert len(list(text_lines(io.BytesIO(ordinary), "ordinary.gz"))) == 100_000  # 26x: far below the ratio
    with unpacked(io.BytesIO(ordinary), "ordinary.gz") as stream:
        assert stream.read().count(b"\n") == 100_000


PIECES = ["\n", "  \n", "\t\n", "\r\n", "\r", " ", "a", '{"x": 1}', "\n\n\n", "\ufeff"]


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(st.sampled_from(PIECES), max_size=40), read=st.sampled_from([1, 2, 3, 7, 1 << 20]))
def test_lines_are_what_a_line_by_line_read_gives_across_reads(pieces: list[str], read: int) -> None:
    """The reader passes runs of blank lines in one step and reads in chunks: the lines it gives, and their
    numbers, are those a read line by line gives (universal line breaks), whatever the chunk size."""
    data = "".join(pieces).encode()
    expected = [
        (number, line)
        for number, line in enumerate(io.TextIOWrapper(io.BytesIO(data), newline=None), start=1)
        if line.strip(" \t\n")
    ]
    old, textfile._LINE_READ = textfile._LINE_READ, read
    try:
        got = list(raw_lines(io.TextIOWrapper(io.BytesIO(data), newline=None), "log"))
    finally:
        textfile._LINE_READ = old
    assert got == expected


def test_a_long_line_still_stops_the_chunked_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textfile, "MAX_LINE_CHARS", 10)
    monkeypatch.setattr(textfile, "_LINE_READ", 4)
    with pytest.raises(DataFileError, match=r"log:2: a line longer than 10 characters"):
        list(raw_lines(io.StringIO("short\n" + "x" * 11 + "\n"), "log"))
    assert list(raw_lines(io.StringIO("x" * 10 + "\n" + "y" * 10), "log")) == [(1, "x" * 10 + "\n"), (2, "y" * 10)]


def test_the_size_cap_and_its_line_limit_still_stop_the_chunked_reader() -> None:
    with pytest.raises(textfile.TooLarge, match="more than 1,000 characters"):
        list(raw_lines(io.StringIO(("x" * 99 + "\n") * 15), "log", max_chars=1_000))
    with pytest.raises(textfile.TooLarge, match="more than 20 lines .blank ones count."):
        list(raw_lines(io.StringIO("\n" * 21), "log", max_chars=20 * textfile.MIN_LINE_CHARS))
