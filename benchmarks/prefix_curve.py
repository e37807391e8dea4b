"""Time a 10-point and a 100-point LRU hit-rate curve over the bundled Mooncake conversation trace (issue 14,
part 3: the whole curve in one pass costs about one simulation).

Prints CPU times and their ratio to a floor measured in the same run: one LRU simulation at one capacity.
The curve by stack distances (:class:`LruProfile`) is set beside the same curve simulated capacity by
capacity, and the hit counts are checked equal. Last, the whole ``prefix`` command's CPU time for the
10-point curve (target: at most 1.5 s here, start-up included). A benchmark, not a test: a slow machine
reports rather than fails.
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import TypeVar

from calculator.catalog.datafile import DATA_DIR
from calculator.traffic.prefix import MOONCAKE_BLOCK_SIZE, CacheConfig, LogReader, LruProfile, Request, simulate

T = TypeVar("T")
TRACE = DATA_DIR / "samples" / "mooncake" / "conversation_trace.jsonl"
COMMAND_TARGET_S = 1.5
RUNS = 3


def _cpu(fn: Callable[[], T]) -> tuple[float, T]:
    """Median CPU seconds of a few runs, and the last run's answer."""
    times, out = [], None
    for _ in range(RUNS):
        start = time.process_time()
        out = fn()
        times.append(time.process_time() - start)
    assert out is not None
    return statistics.median(times), out


def _capacities(points: int) -> list[int]:
    """``points`` capacities, evenly spaced on a log scale from 10k to 1G tokens."""
    return [round(10_000 * 100_000 ** (i / (points - 1))) for i in range(points)]


def _curve(
    requests: list[Request], config: CacheConfig, profile: LruProfile, profile_s: float, floor: float, points: int
) -> None:
    bs = profile.block_size
    caps = _capacities(points)
    stack_s = profile_s + _cpu(lambda: [profile.hit_tokens(c) for c in caps])[0]
    label = f"{points}-point curve"
    if points == 10:
        configs = [config.model_copy(update={"capacity_tokens": c}) for c in caps]
        sim_s, results = _cpu(lambda: simulate(requests, configs, bs))
        print(f"  {label:>15}, one simulation each        {sim_s * 1000:8.1f} ms  {sim_s / floor:5.1f}x")
        same = [r.hit_tokens for r in results] == [profile.hit_tokens(c) for c in caps]
        print(f"  {label:>15}, stack distances (one pass) {stack_s * 1000:8.1f} ms  {stack_s / floor:5.1f}x", end="")
        print(f"  (hit tokens {'equal' if same else 'DIFFERENT'})")
    else:
        print(f"  {label:>15}, stack distances (one pass) {stack_s * 1000:8.1f} ms  {stack_s / floor:5.1f}x")


def main() -> None:
    requests = list(LogReader(TRACE))
    bs = MOONCAKE_BLOCK_SIZE
    config = CacheConfig(replicas=4)
    blocks = sum(len(r.blocks) for r in requests)
    print(f"{TRACE.name}: {len(requests):,} requests, {blocks:,} blocks of {bs} tokens; 4 replicas, round robin")
    floor, _ = _cpu(lambda: simulate(requests, [config.model_copy(update={"capacity_tokens": 1_000_000})], bs))
    print(f"  floor: one simulation at one capacity         {floor * 1000:8.1f} ms")
    profile_s, profile = _cpu(lambda: LruProfile.of(requests, config, bs))
    for points in (10, 100):
        _curve(requests, config, profile, profile_s, floor, points)
    caps10 = [str(c) for c in _capacities(10)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [sys.executable, "-m", "calculator", "prefix", str(TRACE), "--capacity-tokens", *caps10, "--json"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    command = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    verdict = "PASS" if command <= COMMAND_TARGET_S else "MISS"
    print(f"  the prefix command, 10-point curve, whole     {command * 1000:8.1f} ms  (target <= 1.5 s)  {verdict}")


if __name__ == "__main__":
    main()
