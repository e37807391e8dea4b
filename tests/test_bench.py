"""The benchmark client against a real local OpenAI-style streaming server (tests/bench_server.py) on 127.0.0.1."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypedDict, Unpack

import httpx
import pytest

from calculator.catalog.measurements import load_records
from calculator.cli import main as bench_main
from calculator.errors import InputError
from calculator.measure.bench import (
    BenchConfig,
    Level,
    LevelResult,
    ShardResult,
    _plan,
    _summarise,
    levels_from,
    read_prompt_log,
    run_benchmark,
    write_records,
)
from tests.bench_server import Config, fault_for, running

ROOT = Path(__file__).resolve().parent.parent
SERVER = Path(__file__).resolve().parent / "bench_server.py"
SECRET = "sk-test-DO-NOT-LEAK-4f9a2c"


@pytest.fixture()
def server() -> Iterator[Callable[..., contextlib.AbstractContextManager[str]]]:
    yield running


@pytest.fixture()
def prompts(tmp_path: Path) -> Path:
    path = tmp_path / "prompts.jsonl"
    lines = [
        {"messages": [{"role": "system", "content": "you are terse"}, {"role": "user", "content": "one two"}]},
        {"prompt": "alpha beta gamma delta"},
        {"body": {"model": "x", "messages": [{"role": "user", "content": "w1 w2 w3 w4 w5 w6 w7 w8"}]}},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n\n", encoding="utf-8")
    return path


def _stats(url: str) -> dict[str, object]:
    data: dict[str, object] = httpx.get(url.removesuffix("/v1") + "/stats", trust_env=False).json()
    return data


class _Knobs(TypedDict, total=False):
    """The BenchConfig fields these tests vary."""

    requests_per_level: int
    warmup: int
    timeout_s: float
    max_error_rate: float
    workers: int


def _cfg(url: str, levels: list[Level], **kw: Unpack[_Knobs]) -> BenchConfig:
    knobs: _Knobs = {"warmup": 0, **kw}
    return BenchConfig(base_url=url, model="test-model", levels=tuple(levels), **knobs)


# --- prompt log ----------------------------------------------------------------------------------


def test_prompt_log_reads_chat_bodies_plain_prompts_and_batch_lines(prompts: Path) -> None:
    got = read_prompt_log(prompts)
    assert len(got) == 3
    assert got[0].messages[0]["role"] == "system"
    assert got[1].messages == ({"role": "user", "content": "alpha beta gamma delta"},)
    assert "model" not in got[2].params


def test_prompt_log_errors_name_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"prompt": "ok"}\n{"nothing": 1}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.jsonl:2: expected 'messages'"):
        read_prompt_log(bad)
    bad.write_text("not json\n", encoding="utf-8")
    with pytest.raises(InputError, match=r":1: not JSON"):
        read_prompt_log(bad)


def test_seed_fixes_the_prompt_order(prompts: Path) -> None:
    log = read_prompt_log(prompts) * 10
    cfg = BenchConfig(base_url="http://127.0.0.1:1/v1", model="m", levels=(Level(2),), requests_per_level=12, seed=7)
    same = _plan(cfg, log).levels
    assert same == _plan(cfg, log).levels
    other = BenchConfig(base_url="http://127.0.0.1:1/v1", model="m", levels=(Level(2),), requests_per_level=12, seed=8)
    assert _plan(other, log).levels != same


def test_levels_pair_concurrency_and_rates() -> None:
    assert levels_from([1, 4], []) == [Level(1), Level(4)]
    assert levels_from([8], [2.0, 4.0]) == [Level(8, 2.0), Level(8, 4.0)]
    assert levels_from([], [3.0]) == [Level(None, 3.0)]
    with pytest.raises(InputError, match="replay.request_rate"):
        levels_from([1, 2, 3], [1.0, 2.0])


# --- timing against a server with known delays ---------------------------------------------------


def test_ttft_itl_and_tokens_match_the_server(
    server: Callable[..., contextlib.AbstractContextManager[str]], prompts: Path
) -> None:
    with server("--ttft-ms", "60", "--itl-ms", "5", "--tokens", "12") as url:
        results = run_benchmark(_cfg(url, [Level(1), Level(4)], requests_per_level=12), read_prompt_log(prompts))
    assert [r.level for r in results] == [Level(1), Level(4)]
    for result in results:
        record = result.record
        assert record is not None and result.completed == 12 and not result.errors
        assert 60 <= (record.ttft_ms.p50 or 0) <= 60 + 12, record.ttft_ms
        assert 3 <= (record.itl_ms.p50 or 0) <= 8, record.itl_ms
        assert record.output_tokens == 12
        assert 60 + 11 * 5 <= (record.e2e_ms.p50 or 0) <= 60 + 11 * 5 + 20
        assert record.input_tokens > 0 and record.requests_per_s > 0
        assert record.concurrency == result.level.concurrency and record.request_rate is None
        assert record.gpu is None and record.precision is None and record.gpu_count is None
        assert result.lag_p99_ms < 15  # 4 streams do not load the client (slack for a busy CI machine)
    assert results[1].record and results[0].record
    assert results[1].record.requests_per_s > 2.5 * results[0].record.requests_per_s


def test_request_rate_mode_is_seeded_poisson(
    server: Callable[..., contextlib.AbstractContextManager[str]], prompts: Path
) -> None:
    with server("--ttft-ms", "10", "--itl-ms", "1", "--tokens", "4") as url:
        (result,) = run_benchmark(_cfg(url, [Level(None, 40.0)], requests_per_level=20), read_prompt_log(prompts))
    record = result.record
    assert record is not None and result.completed == 20
    assert record.request_rate == 40.0 and record.concurrency is None
    assert 10 <= record.requests_per_s <= 80  # 20 Poisson arrivals at 40/s
    assert "Poisson" in (record.notes or "")


# --- faults --------------------------------------------------------------------------------------


def test_faults_are_counted_by_reason_and_mark_the_level(
    server: Callable[..., contextlib.AbstractContextManager[str]], prompts: Path
) -> None:
    shares = {"error_share": 0.1, "disconnect_share": 0.1, "malformed_share": 0.05}
    n = 60
    cfg = Config(error_share=0.1, disconnect_share=0.1, malformed_share=0.05)
    expected = Counter(fault_for(i, cfg) for i in range(n))
    args = [f"--{k.replace('_', '-')}={v}" for k, v in shares.items()]
    with server("--ttft-ms", "5", "--itl-ms", "1", "--tokens", "8", *args) as url:
        (result,) = run_benchmark(_cfg(url, [Level(8)], requests_per_level=n), read_prompt_log(prompts))
        seen = _stats(url)
    assert seen["faults"] == {k: v for k, v in expected.items() if k}
    assert result.errors == Counter(
        {
            "HTTP 500": expected["error"],
            "connection dropped": expected["disconnect"],
            "malformed chunk": expected["malformed"],
        }
    )
    record = result.record
    assert record is not None
    assert record.failed == sum(result.errors.values()) == n - result.completed
    assert result.unreliable and "UNRELIABLE" in (record.notes or "")
    assert f"HTTP 500 x{expected['error']}" in (record.notes or "")


def test_timeouts_are_counted_and_the_run_goes_on(
    server: Callable[..., contextlib.AbstractContextManager[str]], prompts: Path
) -> None:
    with server("--ttft-ms", "5", "--itl-ms", "1", "--tokens", "4", "--stall-every", "4", "--stall-ms", "3000") as url:
        started = time.perf_counter()
        (result,) = run_benchmark(
            _cfg(url, [Level(4)], requests_per_level=8, timeout_s=0.4, max_error_rate=0.5), read_prompt_log(prompts)
        )
    assert time.perf_counter() - started < 2.5
    assert result.errors == Counter({"timeout": 2})
    assert result.completed == 6 and not result.unreliable


def test_connection_refused_is_counted_not_raised(prompts: Path) -> None:
    import socket

    with socket.socket() as s:  # a free port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    (result,) = run_benchmark(
        _cfg(f"http://127.0.0.1:{port}/v1", [Level(2)], requests_per_level=4), read_prompt_log(prompts)
    )
    assert result.record is None and result.errors == Counter({"connect error": 4})


# --- cached tokens, usage ------------------------------------------------------------------------


def test_cached_tokens_become_the_prefix_share(
    server: Callable[..., contextlib.AbstractContextManager[str]], tmp_path: Path
) -> None:
    log = tmp_path / "p.jsonl"
    log.write_text('{"prompt": "a b c d e f g h"}\n', encoding="utf-8")  # 8 prompt tokens at the server
    with server("--ttft-ms", "5", "--itl-ms", "1", "--tokens", "4", "--cached-tokens", "6") as url:
        (result,) = run_benchmark(_cfg(url, [Level(2)], requests_per_level=6), read_prompt_log(log))
    assert result.record is not None
    assert result.record.input_tokens == 8
    assert result.record.prefix_share == pytest.approx(0.75)


def test_missing_usage_counts_tokens_from_chunks(
    server: Callable[..., contextlib.AbstractContextManager[str]], prompts: Path
) -> None:
    with server("--ttft-ms", "5", "--itl-ms", "1", "--tokens", "7", "--no-usage") as url:
        (result,) = run_benchmark(_cfg(url, [Level(2)], requests_per_level=4), read_prompt_log(prompts))
    record = result.record
    assert record is not None and record.output_tokens == 7 and record.prefix_share == 0
    assert "no usage" in (record.notes or "") and "no cached tokens" in (record.notes or "")


def test_workers_spread_the_streams_over_processes(
    server: Callable[..., contextlib.AbstractContextManager[str]], prompts: Path
) -> None:
    with server("--ttft-ms", "40", "--itl-ms", "2", "--tokens", "8") as url:
        (result,) = run_benchmark(
            _cfg(url, [Level(8)], requests_per_level=24, workers=2, warmup=4), read_prompt_log(prompts)
        )
        seen = _stats(url)
    assert result.completed == 24 and seen["requests"] == 28
    assert result.record is not None and 40 <= (result.record.ttft_ms.p50 or 0) <= 55
    assert "2 client processes" in (result.record.notes or "")


def test_fewer_streams_than_workers_keeps_the_concurrency_asked_for(
    server: Callable[..., contextlib.AbstractContextManager[str]], prompts: Path
) -> None:
    with server("--ttft-ms", "30", "--itl-ms", "2", "--tokens", "4") as url:
        (result,) = run_benchmark(
            _cfg(url, [Level(1)], requests_per_level=6, workers=2, warmup=0), read_prompt_log(prompts)
        )
        seen = _stats(url)
    assert result.completed == 6
    assert seen["max_in_flight"] == 1  # one stream, although two worker processes run


def test_event_loop_lag_marks_the_level() -> None:
    from calculator.measure.bench import RequestResult

    ok = [RequestResult(start=0.0, end=0.2, first_token=0.05, itl=[0.01], chunks=2, prompt_tokens=10, output_tokens=2)]
    lagging = ShardResult(ok, lags=[0.001] * 90 + [0.02] * 10, cpu_s=0.1, wall_s=1.0)
    cfg = BenchConfig(base_url="http://127.0.0.1:1/v1", model="m", levels=(Level(1),))
    result = _summarise(cfg, Level(1), [lagging], [], __import__("datetime").date(2026, 1, 1))
    assert result.client_limited and "CLIENT-LIMITED" in (result.record.notes or "" if result.record else "")
    calm = ShardResult(ok, lags=[0.0005] * 100, cpu_s=0.1, wall_s=1.0)
    assert not _summarise(cfg, Level(1), [calm], [], __import__("datetime").date(2026, 1, 1)).client_limited


# --- output file and command line ----------------------------------------------------------------


def test_write_records_is_atomic(
    tmp_path: Path,
    server: Callable[..., contextlib.AbstractContextManager[str]],
    prompts: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with server("--ttft-ms", "5", "--itl-ms", "1", "--tokens", "4") as url:
        results: list[LevelResult] = run_benchmark(
            _cfg(url, [Level(1), Level(2)], requests_per_level=3), read_prompt_log(prompts)
        )
    records = [r.record for r in results if r.record]
    folder = tmp_path / "records"
    folder.mkdir()
    out = folder / "mine.yaml"
    write_records(out, records[:1])
    before = out.read_text(encoding="utf-8")
    with pytest.raises(ValueError):
        write_records(out, [])  # invalid: nothing is replaced
    interrupted = KeyboardInterrupt()

    def stop(fd: int) -> None:
        raise interrupted

    monkeypatch.setattr(os, "fsync", stop)  # Ctrl-C in the middle of writing the new file
    with pytest.raises(KeyboardInterrupt):
        write_records(out, records)
    monkeypatch.undo()
    assert out.read_text(encoding="utf-8") == before
    assert [p.name for p in folder.iterdir()] == ["mine.yaml"]  # no temp file left behind
    assert load_records(folder).records == tuple(records[:1])
    write_records(out, records)
    assert load_records(folder).records == tuple(records)


def test_cli_writes_loadable_records_and_never_the_key(
    tmp_path: Path,
    server: Callable[..., contextlib.AbstractContextManager[str]],
    prompts: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("MY_BENCH_KEY", SECRET)
    folder = tmp_path / "records"
    folder.mkdir()
    out = folder / "run.yaml"
    with server(
        "--ttft-ms",
        "5",
        "--itl-ms",
        "1",
        "--tokens",
        "6",
        "--cached-tokens",
        "2",
        "--expect-key-env",
        "MY_BENCH_KEY",
        env={"MY_BENCH_KEY": SECRET},
    ) as url:
        code = bench_main(
            [
                "bench",
                "--base-url",
                url.replace("127.0.0.1", "127.0.0.1"),
                "--model",
                "llama-3.3-70b",
                "--prompts",
                str(prompts),
                "--concurrency",
                "1,4",
                "--requests-per-level",
                "8",
                "--warmup",
                "2",
                "--api-key-env",
                "MY_BENCH_KEY",
                "--out",
                str(out),
                "--gpu",
                "h100-sxm",
                "--gpu-count",
                "1",
                "--precision",
                "fp8",
                "--engine",
                "vllm",
                "--json",
            ]
        )
        seen = _stats(url)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert seen["authorized"] == 18 and seen["unauthorized"] == 0
    catalog = load_records(folder)
    assert [r.concurrency for r in catalog.records] == [1, 4]
    first = catalog.records[0]
    assert first.model == "llama-3.3-70b" and first.gpu == "h100-sxm" and first.precision == "fp8"
    assert first.engine == "vllm" and first.complete and first.prefix_share > 0
    data = json.loads(captured.out)
    assert data["records_written"] == 2 and data["levels"][0]["errors"] == {}
    for text in (out.read_text(encoding="utf-8"), captured.out, captured.err):
        assert SECRET not in text


def test_cli_wrong_key_is_one_line_and_keeps_the_key_secret(
    tmp_path: Path,
    server: Callable[..., contextlib.AbstractContextManager[str]],
    prompts: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    out = tmp_path / "run.yaml"
    with server("--expect-key-env", "OTHER", env={"OTHER": "another-key"}) as url:
        code = bench_main(
            [
                "bench",
                "--base-url",
                url,
                "--model",
                "m",
                "--prompts",
                str(prompts),
                "--concurrency",
                "2",
                "--out",
                str(out),
            ]
        )
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert err.strip().splitlines()[-1].startswith("error: --base-url: all 4 warm-up requests failed (HTTP 401 x4)")
    assert SECRET not in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--concurrency", "0"], "--concurrency"),
        (["--concurrency", "1,x"], "--concurrency"),
        (["--concurrency", "1,2", "--request-rate", "1,2,3"], "--request-rate"),
        (["--concurrency", "1", "--api-key-env", "sk-123"], "--api-key-env"),
        (["--concurrency", "1", "--api-key-env", "UNSET_BENCH_VAR_X"], "UNSET_BENCH_VAR_X is not set"),
        (["--concurrency", "1", "--gpu", "no-such-gpu"], "no-such-gpu"),
        (["--concurrency", "1", "--base-url", "ftp://x"], "--base-url"),
        (["--request-rate", "-1"], "--request-rate"),
    ],
)
def test_cli_bad_input_is_one_line_exit_2(
    tmp_path: Path, prompts: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    base = ["bench", "--model", "m", "--prompts", str(prompts), "--out", str(tmp_path / "o.yaml")]
    if "--base-url" not in argv:
        base += ["--base-url", "http://127.0.0.1:9/v1"]
    code = bench_main(base + argv)
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and message in err, err


def test_cli_missing_prompts_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = bench_main(
        [
            "bench",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
            "--prompts",
            str(tmp_path / "none.jsonl"),
            "--concurrency",
            "1",
            "--out",
            str(tmp_path / "o.yaml"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: --prompts: cannot read")


def test_ctrl_c_keeps_the_finished_levels(
    tmp_path: Path, server: Callable[..., contextlib.AbstractContextManager[str]], prompts: Path
) -> None:
    out = tmp_path / "run.yaml"
    with server("--ttft-ms", "150", "--itl-ms", "1", "--tokens", "2") as url:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "calculator",
                "bench",
                "--base-url",
                url,
                "--model",
                "m",
                "--prompts",
                str(prompts),
                "--concurrency",
                "2,1",
                "--requests-per-level",
                "4",
                "--warmup",
                "0",
                "--out",
                str(out),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 10
        while not out.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=10)
    assert proc.returncode == 130, stderr
    assert "interrupted: 1 finished level(s) kept" in stderr
    assert [r.concurrency for r in load_records(tmp_path).records] == [2]
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".tmp"]
