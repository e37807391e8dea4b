"""Time one continuous-batching simulation beside floors measured in the same run, its sampling error over
seeds, and ``deploy --preset coding-agent`` sized to a p99 target (target: at most 3 s here).

Run with ``.venv/bin/python benchmarks/simulation_speed.py``. For each setup it prints the CPU time of one run
(:func:`calculator.capacity.simulation.simulate_poisson`) and two floors of the same length: a bare Python loop
with as many turns as the run's event loop (a heap push and pop and a few float operations a turn: what an
event loop in Python cannot go below) and the numpy work every run does whatever its loop (drawing the
arrivals, the percentiles). Then the spread of the percentiles over 10 seeds at 1,000 and 2,000 requests (one
standard deviation over the mean: the sampling error a single run carries), and the whole ``deploy`` command's
CPU time, start-up included. A benchmark, not a test: a slow machine reports rather than fails.
"""

from __future__ import annotations

import heapq
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import TypeVar

import numpy as np

from calculator.capacity.simulation import (
    SimulationResult,
    StepCosts,
    poisson_arrivals,
    simulate_poisson,
    step_costs,
)
from calculator.catalog.gpus import load_gpu_specs
from calculator.catalog.models import load_model_specs

T = TypeVar("T")
RUNS = 5
DEPLOY_TARGET_S = 3.0
DEPLOY = [
    sys.executable, "-m", "calculator", "deploy", "--preset", "coding-agent", "--ttft-ms", "3000",
    "--tokens-per-s-per-user", "20", "--latency-percentile", "p99",
]  # fmt: skip


def _cpu(fn: Callable[[], T]) -> tuple[float, T]:
    """Median CPU seconds of a few runs, and the last run's answer."""
    times, out = [], None
    for _ in range(RUNS):
        start = time.process_time()
        out = fn()
        times.append(time.process_time() - start)
    assert out is not None
    return statistics.median(times), out


def _python_floor(turns: int) -> float:
    """A bare event loop of ``turns`` turns: one heap push and pop and a few float operations each."""
    heap: list[tuple[int, int]] = []
    now, acc = 0.0, 0.0
    for i in range(turns):
        heapq.heappush(heap, (i + 3, i))
        now += 0.001 * (i & 7)
        acc += now / (i + 1)
        if len(heap) > 64:
            heapq.heappop(heap)
    return acc


def _numpy_floor(n: int) -> float:
    """What every run of ``n`` requests does in numpy: arrivals drawn, three latencies' percentiles."""
    times = poisson_arrivals(1.0, n)
    lat = np.diff(times, prepend=0.0)
    return float(sum(np.percentile(lat * k, [50, 90, 95, 99]).sum() for k in (1.0, 2.0, 3.0)))


def _setups() -> list[tuple[str, StepCosts, float, float, float, float]]:
    """(label, costs, rate per replica, input, output, cached share)."""
    models, gpus = load_model_specs(), load_gpu_specs()
    small = step_costs(
        models.get("llama-3.2-3b"), gpus.get("l40s"), "bf16", 1, max_batch=256, max_context=1300, min_context=999
    )
    big = step_costs(
        models.get("llama-3.3-70b"), gpus.get("h200-sxm"), "fp8", 1, max_batch=512, max_context=600,
        min_context=300, kv_dtype="fp8",
    )  # fmt: skip
    agent = step_costs(
        models.get("glm-5"), gpus.get("h200-sxm"), "fp8", 8, max_batch=64, max_context=20500, min_context=20000,
        attention="dp",
    )  # fmt: skip
    return [
        ("Llama-3.2-3B, L40S, 7.5 req/s", small, 7.5, 999.0, 270.0, 0.0),
        ("Llama-3.3-70B FP8, H200, 6 req/s", big, 6.0, 300.0, 290.0, 0.0),
        ("GLM-5 FP8, 8x H200 DP, coding agent", agent, 0.5, 20000.0, 500.0, 0.9),
    ]


def _speed() -> None:
    print("One simulation (median CPU of 5 runs) beside floors of the same length")
    print(f"  {'setup':38} {'requests':>8} {'events':>7} {'run':>9} {'py loop':>9} {'numpy':>9} {'x py':>6}")
    for label, costs, rate, i, o, cached in _setups():
        for n in (1000, 2000, 4000):
            run = partial(simulate_poisson, costs, rate, i, o, cached_share=cached, requests=n)
            run_s, r = _cpu(run)
            py_s, _ = _cpu(partial(_python_floor, r.events))
            np_s, _ = _cpu(partial(_numpy_floor, n))
            print(
                f"  {label:38} {n:8d} {r.events:7d} {run_s * 1000:7.1f}ms {py_s * 1000:7.2f}ms {np_s * 1000:7.2f}ms"
                f" {run_s / max(py_s, 1e-9):6.1f}"
            )
    print()


def _spread(runs: list[SimulationResult]) -> str:
    parts = []
    for name in ("ttft_ms", "tpot_ms"):
        for pct in ("p50", "p90", "p99"):
            values = [getattr(r, name).at(pct) for r in runs]
            parts.append(f"{name[:4]} {pct} {statistics.stdev(values) / statistics.mean(values):5.1%}")
    return ", ".join(parts)


def _sampling_error() -> None:
    print("Sampling error: one standard deviation over the mean, 10 seeds")
    for label, costs, rate, i, o, cached in _setups()[:2]:
        for n in (1000, 2000):
            runs = [simulate_poisson(costs, rate, i, o, cached_share=cached, requests=n, seed=s) for s in range(10)]
            print(f"  {label:38} {n:5d} requests: {_spread(runs)}")
    print()


def _deploy() -> None:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    out = subprocess.run(DEPLOY, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    verdict = "within" if cpu <= DEPLOY_TARGET_S else "OVER"
    first = next((line for line in out.stdout.splitlines() if line.startswith("Cheapest")), out.stderr.strip())
    print(f"deploy --preset coding-agent, p99 TTFT <= 3 s and >= 20 tok/s: CPU {cpu:.2f} s, wall {wall:.2f} s "
          f"({verdict} the {DEPLOY_TARGET_S:g} s target, start-up included)")  # fmt: skip
    print(f"  {first}")


def main() -> None:
    _speed()
    _sampling_error()
    _deploy()


if __name__ == "__main__":
    main()
