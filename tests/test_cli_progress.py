"""A long ``prefix`` run says where it is on stderr, a few lines over the run (never on stdout, which may
carry ``--json``), and a short one says nothing: the clock here is a fake one, so no test waits."""

from __future__ import annotations

import functools
import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from calculator.cli import main
from calculator.cli import prefix as prefix_cli
from calculator.cli.progress import FIRST_AFTER, GROWTH, Progress
from calculator.traffic.prefix import PROGRESS_EVERY


def _clock(step: float) -> Callable[[], float]:
    """A clock that moves ``step`` seconds each time it is read, from 0."""
    now = [-step]

    def read() -> float:
        now[0] += step
        return now[0]

    return read


def test_lines_come_at_growing_intervals_so_an_hour_says_a_few() -> None:
    out = io.StringIO()
    progress = Progress("prefix log.jsonl", out, _clock(1.0))
    for second in range(1, 3601):
        progress(second * 100, second * 1_000)
    lines = out.getvalue().splitlines()
    # due at 10 s, then 3x the time taken at the last line: 10, 30, 90, 270, 810, 2430 s
    assert FIRST_AFTER == 10 and GROWTH == 3
    assert len(lines) == progress.lines == 6
    assert lines[0] == "prefix log.jsonl: 1,000 requests (10,000 input tokens) read in 10 s; still reading"
    assert lines[-1].startswith("prefix log.jsonl: 243,000 requests (2,430,000 input tokens) read in 2,430 s")


def test_a_short_run_prints_nothing() -> None:
    out = io.StringIO()
    progress = Progress("prefix log.jsonl", out, _clock(0.001))
    for count in range(1, 5_000):
        progress(count, count)
    assert out.getvalue() == ""


def _log(path: Path, requests: int) -> Path:
    path.write_text("".join(json.dumps({"prompt": f"system prompt. question {i}"}) + "\n" for i in range(requests)))
    return path


def test_prefix_on_a_long_log_shows_progress_on_stderr_and_keeps_json_on_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _log(tmp_path / "long.jsonl", 3 * PROGRESS_EVERY)
    assert main(["prefix", str(log), "--json", "--workers", "1"]) == 0
    quiet = capsys.readouterr()
    assert quiet.err == ""  # seconds, not minutes: nothing to say
    # the same run on a clock that moves a minute at each look: 60, 120, 180 s at 10,000, 20,000, 30,000 requests
    monkeypatch.setattr(prefix_cli, "Progress", functools.partial(Progress, clock=_clock(60.0)))
    assert main(["prefix", str(log), "--json", "--workers", "1"]) == 0
    slow = capsys.readouterr()
    assert json.loads(slow.out) == json.loads(quiet.out)  # stdout is the JSON alone, the same report
    lines = slow.err.splitlines()
    tokens = json.loads(quiet.out)["input_tokens"]
    assert len(lines) == 2  # due at 10 s and then at 180 s (3x 60 s): the look at 120 s stays quiet
    assert lines[0].startswith(f"prefix {log}: 10,000 requests (")
    assert lines[0].endswith(" input tokens) read in 60 s; still reading")
    assert lines[1] == f"prefix {log}: 30,000 requests ({tokens:,} input tokens) read in 180 s; still reading"
