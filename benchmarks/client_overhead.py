"""How much the benchmark client itself adds: TTFT against a local server with known timing, and its ceiling.

Run with ``.venv/bin/python benchmarks/client_overhead.py``. It starts ``tests/bench_server.py`` on
127.0.0.1 (a free port; nothing else is contacted) and measures:

1. one client process, 64 concurrent streams: median TTFT minus the server's configured delay
   (target: within 5 ms) and the client's event-loop lag;
2. ``--workers`` processes (default 2), 256 concurrent streams: streamed tokens per second
   (target: at least 20,000) and whether TTFT still matches the server's delay.

It prints the figures and the targets; it is a benchmark, not a test, so a slow machine reports
rather than fails.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from calculator.measure.bench import BenchConfig, Level, LevelResult, read_prompt_log, run_benchmark  # noqa: E402

SERVER = ROOT / "tests" / "bench_server.py"


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a process (Linux /proc), None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


SERVER_PIDS: list[int] = []


@contextlib.contextmanager
def server(*args: str) -> Iterator[str]:
    proc = subprocess.Popen([sys.executable, str(SERVER), "--port", "0", *args], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith("listening on 127.0.0.1:"):
            raise RuntimeError(f"bench server did not start: {line!r}")
        SERVER_PIDS[:] = [proc.pid]
        yield f"http://{line.split()[-1]}/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=5)


def run(url: str, prompts: Path, concurrency: int, requests: int, workers: int, warmup: int) -> LevelResult:
    cfg = BenchConfig(
        base_url=url,
        model="overhead-test",
        levels=(Level(concurrency),),
        requests_per_level=requests,
        warmup=warmup,
        workers=workers,
        timeout_s=60,
    )
    cpu0 = cpu_seconds(SERVER_PIDS[0])
    (result,) = run_benchmark(cfg, read_prompt_log(prompts))
    cpu1 = cpu_seconds(SERVER_PIDS[0])
    if cpu0 is not None and cpu1 is not None:
        print(f"  (server process: {(cpu1 - cpu0) / result.duration_s:.0%} of a core during the level)")
    return result


def report(title: str, result: LevelResult, ttft_ms: float) -> tuple[float, float]:
    record = result.record
    assert record is not None, f"{title}: no request succeeded ({dict(result.errors)})"
    p50 = record.ttft_ms.p50 or 0.0
    tokens_per_s = record.output_tokens_per_s or 0.0
    print(f"{title}")
    print(f"  requests        {result.completed}/{result.sent} ok in {result.duration_s:.2f} s")
    print(
        f"  TTFT            p50 {p50:.1f} ms, p99 {record.ttft_ms.p99 or 0:.1f} ms "
        f"(server delay {ttft_ms:.0f} ms; client adds {p50 - ttft_ms:+.1f} ms at the median)"
    )
    print(f"  ITL             p50 {record.itl_ms.p50 or 0:.1f} ms, p99 {record.itl_ms.p99 or 0:.1f} ms")
    print(f"  throughput      {tokens_per_s:,.0f} streamed tokens/s, {record.requests_per_s:.1f} requests/s")
    print(
        f"  client          event-loop lag p50 {result.lag_p50_ms:.2f} ms, p99 {result.lag_p99_ms:.2f} ms; "
        f"busiest process {result.client_cpu_share:.0%} of a core"
        + ("; marked CLIENT-LIMITED" if result.client_limited else "")
    )
    return p50 - ttft_ms, tokens_per_s


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--ttft-ms", type=float, default=100.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        prompts = Path(tmp) / "prompts.jsonl"
        prompts.write_text(
            "".join(f'{{"prompt": "benchmark prompt number {i} with some words"}}\n' for i in range(64)),
            encoding="utf-8",
        )
        # 1. one process, 64 streams of 32-96 tokens 20 ms apart (about 3,200 tokens/s offered)
        with server(
            "--ttft-ms", str(args.ttft_ms), "--itl-ms", "20", "--tokens", "64", "--tokens-spread", "0.5"
        ) as url:
            overhead, _ = report(
                "One client process, 64 concurrent streams (server: 32-96 tokens, 20 ms apart)",
                run(url, prompts, 64, 384, 1, 64),
                args.ttft_ms,
            )
        # 2. N processes, 256 streams of 256 tokens 8 ms apart, two per write (32,000 tokens/s offered)
        with server(
            "--ttft-ms", str(args.ttft_ms), "--itl-ms", "8", "--tokens", "256", "--tokens-per-write", "2"
        ) as url:
            overhead_n, tokens_per_s = report(
                f"{args.workers} client processes, 256 concurrent streams "
                "(server: 256 tokens, 8 ms apart, 2 per write)",
                run(url, prompts, 256, 768, args.workers, 256),
                args.ttft_ms,
            )
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"\nMachine: {os.cpu_count()} CPUs, 1-minute load average {load:.2f} at the end (other work distorts this)")
    print("\nTargets")
    print(
        f"  64 streams, one process: median TTFT within 5 ms of the server's delay: {overhead:+.1f} ms "
        f"{'ok' if abs(overhead) <= 5 else 'MISSED'}"
    )
    print(
        f"  256 streams, {args.workers} processes: at least 20,000 tokens/s: {tokens_per_s:,.0f} "
        f"{'ok' if tokens_per_s >= 20_000 else 'MISSED'} (median TTFT {overhead_n:+.1f} ms)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
