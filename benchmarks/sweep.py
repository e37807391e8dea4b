"""Time a 1,000,000-point sweep of monthly cost for all three ways to buy (target: under 0.5 s on one core).

Run with ``make bench``. Prints the median of several runs, the ratio to the target, and the ratio to a
floor measured in the same run (one numpy multiply-add over the same volumes: what any sweep costs at
least), so a noisy shared machine still gives a comparable figure. The autoscaled variant bills each
instance level's runs over the day (the general schedule path). It is a benchmark, not a test: a slow
machine reports rather than fails.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable

import numpy as np

from calculator.pricing.compare import cost_curves, load_catalogs
from calculator.scenario.model import load_preset

TARGET_S = 0.5
POINTS = 1_000_000
RUNS = 7


def _median(fn: Callable[[], object]) -> float:
    timings = []
    for _ in range(RUNS):
        start = time.perf_counter()
        fn()
        timings.append(time.perf_counter() - start)
    return statistics.median(timings)


def main() -> None:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    catalogs = load_catalogs()
    scenario = load_preset("coding-agent")
    curves = cost_curves(scenario, catalogs)
    volumes = np.geomspace(1e3, 1e10, POINTS)
    floor = _median(lambda: volumes * 1.5 + 2.0)
    timings = []
    for _ in range(RUNS):
        start = time.perf_counter()
        results = {name: fn(volumes) for name, fn in curves.items()}
        timings.append(time.perf_counter() - start)
    median = statistics.median(timings)
    print(f"floor (one numpy multiply-add over the volumes): {floor * 1000:.2f} ms")
    print(f"sweep: {POINTS:,} volumes x {len(results)} options ({', '.join(results)})")
    print(
        f"median {median * 1000:.1f} ms over {RUNS} runs (min {min(timings) * 1000:.1f}, max {max(timings) * 1000:.1f})"
    )
    print(
        f"target {TARGET_S * 1000:.0f} ms: {median / TARGET_S:.2f} of the budget "
        f"({'met' if median < TARGET_S else 'MISSED'})"
    )
    per_option = {}
    for name, fn in curves.items():
        start = time.perf_counter()
        fn(volumes)
        per_option[name] = time.perf_counter() - start
    print("per option: " + ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in per_option.items()))
    print(f"ratio to the floor: {median / floor:.0f}x")
    hosting = scenario.self_hosting.model_copy(update={"autoscale": True})
    autoscaled = cost_curves(scenario.model_copy(update={"self_hosting": hosting}), catalogs)["self_hosted"]
    auto = _median(lambda: autoscaled(volumes))
    print(f"self-hosted autoscaled over the active hours: {auto * 1000:.1f} ms ({auto / floor:.0f}x the floor)")


if __name__ == "__main__":
    main()
