"""The benchmark client against a real local OpenAI-style streaming server (tests/bench_server.py) on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import TypedDict, Unpack

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calculator.catalog.measurements import load_records
from calculator.cli import main as bench_main
from calculator.errors import InputError
from calculator.measure.bench import (
    MAX_USAGE_TOKENS,
    BenchConfig,
    Level,
    LevelResult,
    RequestResult,
    ShardResult,
    _plan,
    _summarise,
    levels_from,
    read_prompt_log,
    run_benchmark,
    stream_request,
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
    with pytest.raises(InputError, match=r":1: not valid JSON"):
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
        # The server sleeps 60 ms before the first token and 5 ms between tokens, so these lower bounds hold
        # however loaded the machine is; the first token is timed at the first chunk, not the last, so the
        # answer's 11 gaps still lie between TTFT and the end.
        ttft, e2e = record.ttft_ms.p50 or 0, record.e2e_ms.p50 or 0
        assert ttft >= 60 and (record.itl_ms.p50 or 0) >= 5 * 0.9, (record.ttft_ms, record.itl_ms)
        assert record.output_tokens == 12
        assert e2e >= 60 + 11 * 5 and e2e - ttft >= 11 * 5 * 0.9, record.e2e_ms
        assert record.input_tokens > 0 and record.requests_per_s > 0
        assert record.concurrency == result.level.concurrency and record.request_rate is None
        assert record.gpu is None and record.precision is None and record.gpu_count is None
        assert result.lag_p99_ms >= 0  # the client's own lag is measured (its size is benchmarks/client_overhead.py's)


def test_request_rate_mode_is_seeded_poisson(
    server: Callable[..., contextlib.AbstractContextManager[str]], prompts: Path
) -> None:
    with server("--ttft-ms", "10", "--itl-ms", "1", "--tokens", "4") as url:
        (result,) = run_benchmark(_cfg(url, [Level(None, 40.0)], requests_per_level=20), read_prompt_log(prompts))
    record = result.record
    assert record is not None and result.completed == 20
    assert record.request_rate == 40.0 and record.concurrency is None
    assert 0 < record.requests_per_s <= 80  # 20 seeded Poisson arrivals at 40/s: the schedule caps the rate
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
        (result,) = run_benchmark(
            _cfg(url, [Level(4)], requests_per_level=8, timeout_s=0.4, max_error_rate=0.5), read_prompt_log(prompts)
        )
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


# --- a hostile server: every finished level is kept ----------------------------------------------

HOSTILE_CHUNKS = {
    "choices is text": ('{"choices":"abc"}', "malformed chunk"),
    "a choice is a number": ('{"choices":[1]}', "malformed chunk"),
    "delta is text": ('{"choices":[{"delta":"x"}]}', "malformed chunk"),
    "content is a number": ('{"choices":[{"delta":{"content":5}}]}', "malformed chunk"),
    "nested past the parser": ("[" * 30_000 + "]" * 30_000, "malformed chunk"),
}
HOSTILE_USAGE = {
    "counts as text": ('{"prompt_tokens":"12","completion_tokens":"4"}', "malformed usage"),
    "negative counts": ('{"prompt_tokens":-5,"completion_tokens":-4}', "malformed usage"),
    "NaN": ('{"prompt_tokens":NaN,"completion_tokens":4}', "malformed usage"),
    "Infinity": ('{"prompt_tokens":4,"completion_tokens":Infinity}', "malformed usage"),
    "cached 1e999": (
        '{"prompt_tokens":4,"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":1e999}}',
        "malformed usage",
    ),
    "cached as text": (
        '{"prompt_tokens":4,"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":"x"}}',
        "malformed usage",
    ),
    "more cached than sent": (
        '{"prompt_tokens":4,"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":9}}',
        "malformed usage",
    ),
    "a fraction": ('{"prompt_tokens":4.5,"completion_tokens":4}', "malformed usage"),
    "a boolean": ('{"prompt_tokens":true,"completion_tokens":4}', "malformed usage"),
    "400 digits": ('{"prompt_tokens":' + "9" * 400 + ',"completion_tokens":4}', "malformed usage"),
    "usage is text": ('"abc"', "malformed usage"),
    "details is a list": ('{"prompt_tokens":4,"completion_tokens":4,"prompt_tokens_details":[1]}', "malformed usage"),
}


@pytest.mark.parametrize(
    ("kind", "text", "reason"),
    [("chunk", *v) for v in HOSTILE_CHUNKS.values()] + [("usage", *v) for v in HOSTILE_USAGE.values()],
    ids=[*HOSTILE_CHUNKS, *HOSTILE_USAGE],
)
def test_a_hostile_chunk_is_a_fault_of_its_request_and_every_level_is_kept(
    server: Callable[..., contextlib.AbstractContextManager[str]], tmp_path: Path, kind: str, text: str, reason: str
) -> None:
    log = tmp_path / "p.jsonl"
    log.write_text('{"prompt": "a b c d"}\n', encoding="utf-8")  # 4 prompt tokens at the server
    n = 8
    expected = sum(fault_for(i, Config(inject_share=0.25)) == "inject" for i in range(2 * n))
    args = ("--ttft-ms", "2", "--itl-ms", "1", "--tokens", "4", "--cached-tokens", "1", "--inject-share", "0.25")
    with server(*args, f"--inject-{kind}", text) as url:
        results = run_benchmark(_cfg(url, [Level(2), Level(4)], requests_per_level=n), read_prompt_log(log))
        seen = _stats(url)
    assert seen["faults"] == {"inject": expected} and expected > 0
    assert [r.level for r in results] == [Level(2), Level(4)]
    assert sum(r.errors[reason] for r in results) == expected
    for result in results:
        assert set(result.errors) <= {reason}
        record = result.record
        assert record is not None and result.completed == n - result.errors[reason]
        # the survivors' figures are the honest server's, never skewed by the hostile report
        assert record.input_tokens == 4 and record.output_tokens == 4 and record.prefix_share == 0.25
        assert f"{reason} x{result.errors[reason]}" in (record.notes or "")


def test_cli_keeps_every_level_against_a_hostile_server(
    server: Callable[..., contextlib.AbstractContextManager[str]],
    tmp_path: Path,
    prompts: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "run.yaml"
    with server(
        "--ttft-ms",
        "2",
        "--itl-ms",
        "1",
        "--tokens",
        "4",
        "--inject-share",
        "0.2",
        "--inject-chunk",
        '{"choices":"abc"}',
    ) as url:
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
                "1,2",
                "--requests-per-level",
                "10",
                "--warmup",
                "0",
                "--out",
                str(out),
                "--json",
                "--quiet",
            ]
        )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    data = json.loads(captured.out)
    assert data["records_written"] == 2
    expected = sum(fault_for(i, Config(inject_share=0.2)) == "inject" for i in range(20))
    assert sum(level["errors"].get("malformed chunk", 0) for level in data["levels"]) == expected > 0
    assert [r.concurrency for r in load_records(tmp_path).records] == [1, 2]


def _stream_once(body: Callable[[], AsyncIterator[bytes]], status: int = 200, timeout_s: float = 5.0) -> RequestResult:
    async def go() -> RequestResult:
        def handler(request: httpx.Request) -> httpx.Response:
            return httpx.Response(status, content=body())

        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            return await stream_request(client, "http://127.0.0.1:9/v1/chat/completions", b"{}", timeout_s)

    return asyncio.run(go())


def _events(*payloads: bytes) -> Callable[[], AsyncIterator[bytes]]:
    async def body() -> AsyncIterator[bytes]:
        for payload in payloads:
            yield b"data: " + payload + b"\n\n"

    return body


_TOKEN = b'{"choices":[{"delta":{"content":" t"}}]}'
_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)
_chunk_keys = st.sampled_from(
    [
        "choices",
        "delta",
        "content",
        "usage",
        "prompt_tokens",
        "completion_tokens",
        "prompt_tokens_details",
        "cached_tokens",
        "reasoning_content",
        "x",
    ]
)
_chunks = st.recursive(
    _json_values,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_chunk_keys, inner, max_size=4),
    max_leaves=16,
)


@settings(max_examples=150, deadline=None)
@given(chunk=_chunks)
def test_any_json_a_server_sends_is_counted_never_raised(chunk: object) -> None:
    payload = json.dumps(chunk, allow_nan=True).encode()
    result = _stream_once(_events(_TOKEN, payload, _TOKEN, b"[DONE]"))
    assert result.error is None or result.error in {"malformed chunk", "malformed usage", "error event in stream"}
    if result.ok:
        for count in (result.prompt_tokens, result.output_tokens, result.cached_tokens):
            assert count is None or (type(count) is int and 0 <= count <= MAX_USAGE_TOKENS)


def test_an_endless_line_is_a_fault_not_unbounded_memory() -> None:
    async def endless() -> AsyncIterator[bytes]:
        yield b"data: " + _TOKEN + b"\n\n"
        while True:
            yield b"x" * 65_536
            await asyncio.sleep(0)

    result = _stream_once(endless, timeout_s=30)
    assert result.error == "oversized chunk"  # cut by size, not by the 30 s timeout (which says "timeout")


def test_an_error_status_is_counted_without_reading_an_endless_body() -> None:
    async def endless() -> AsyncIterator[bytes]:
        while True:
            yield b"{" * 65_536
            await asyncio.sleep(0)

    result = _stream_once(endless, status=500, timeout_s=30)
    assert result.error == "HTTP 500"  # counted from the status, not after the 30 s timeout ("timeout")


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
    assert record is not None and record.output_tokens == 7 and record.prefix_share is None
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
    assert result.record is not None and (result.record.ttft_ms.p50 or 0) >= 40
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
    assert first.engine == "vllm" and first.complete and first.prefix_share is not None and first.prefix_share > 0
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
    assert code == 2 and err.startswith("error: --prompts: ") and "none.jsonl: cannot read file" in err


def test_ctrl_c_keeps_the_finished_levels(
    tmp_path: Path, server: Callable[..., contextlib.AbstractContextManager[str]], prompts: Path
) -> None:
    out = tmp_path / "run.yaml"
    # the second level's second request (the sixth arrival) stalls 5 s: the interrupt lands in that level
    # however late this loaded machine delivers it
    with server(
        "--ttft-ms", "150", "--itl-ms", "1", "--tokens", "2", "--stall-every", "6", "--stall-ms", "5000"
    ) as url:
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


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("http://127.0.0.1:99999/v1", "not a usable URL (the port is outside 0 to 65535)"),
        ("http://127.0.0.1:http/v1", "not a usable URL (the port is not a number)"),
        ("ftp://127.0.0.1/v1", "not an http(s) URL"),
    ],
)
def test_a_base_url_that_cannot_be_reached_is_named_before_any_request(url: str, words: str) -> None:
    from calculator.errors import InputError
    from calculator.measure.bench import chat_url

    with pytest.raises(InputError, match=re.escape(words)) as caught:
        chat_url(url)
    assert caught.value.field == "replay.base_url"
