"""Print the estimate's TTFT under load against published median TTFTs: in-sample (fit) and hold-out separately.

Run with ``.venv/bin/python benchmarks/ttft_check.py [--refit]``. The cases, their sources and their split are
in ``calculator/data/ttft_cases.yaml``; the formula is :func:`calculator.capacity.ttft.loaded_ttft` with the
roofline's default speeds. "before" is the plain prefill lower bound ``U / P`` the estimate showed until
2026-11-30, "after" the TTFT under load. ``--refit`` fits the one fitted figure (the per-request overhead) on
the fit cases again and says whether the default still agrees.
"""

from __future__ import annotations

import statistics
import sys

from calculator.capacity.simulation import (
    PercentilePoint,
    check_limited_rates,
    check_median_ttfts,
    check_percentile_cases,
    check_speed_matched,
)
from calculator.capacity.ttft import TTFT_OVERHEAD_MS, TtftResult, check_ttft_cases, fit_overhead_ms
from calculator.catalog.gpus import load_gpu_specs
from calculator.catalog.models import load_model_specs

HEADER = (
    f"{'case':28} {'load':>10} {'in flight':>9} {'measured':>9} {'before':>7} {'error':>6} {'after':>7} {'error':>6}"
    f"   {'prefill':>7} {'decode':>7} {'queue':>6}"
)


def _table(title: str, results: list[TtftResult]) -> None:
    print(f"\n{title}\n{HEADER}\n{'-' * len(HEADER)}")
    for r in results:
        c, t = r.case, r.loaded
        load = f"{c.request_rate:g} req/s" if c.request_rate else f"c={c.concurrency}"
        print(
            f"{c.id:28} {load:>10} {r.in_flight:9.1f} {c.measured_ttft_ms:9.1f}"
            f" {r.plain_ms:7.1f} {r.before_error:+6.0%} {t.total_ms:7.1f} {r.after_error:+6.0%}"
            f"   {t.prefill_ms:7.1f} {t.interference_ms:7.1f}"
            f" {t.prefill_queue_ms + t.slot_queue_ms:6.1f}"
        )


def _summary(name: str, results: list[TtftResult]) -> None:
    if not results:
        return
    before = [abs(r.before_error) for r in results]
    after = [abs(r.after_error) for r in results]
    sources = len({r.case.source.url for r in results})
    print(
        f"{name}: {len(results)} points from {sources} source(s): before (prefill alone) median |error| "
        f"{statistics.median(before):.0%}, worst {max(before):.0%}; after (under load) median |error| "
        f"{statistics.median(after):.0%}, worst {max(after):.0%}"
    )


def _percentile_table(title: str, points: list[PercentilePoint]) -> None:
    head = f"{'case':36} {'metric':>6} {'pct':>4} {'measured':>9} {'simulated':>9} {'error':>6} {'batch':>6}"
    print(f"\n{title}\n{head}\n{'-' * len(head)}")
    for p in points:
        flag = "  (uncertain)" if p.case.uncertain else ""
        print(
            f"{p.case.id:36} {p.metric:>6} {p.percentile:>4} {p.measured_ms:9.1f} {p.simulated_ms:9.1f}"
            f" {p.error:+6.0%} {p.mean_batch:6.0f}{flag}"
        )


def _percentile_summary(name: str, points: list[PercentilePoint]) -> None:
    if not points:
        print(f"{name}: no points")
        return
    errors = [abs(p.error) for p in points]
    sources = len({p.case.source.url for p in points})
    tails = [abs(p.error) for p in points if p.percentile != "p50"]
    tail = f"; p90-p99 only: median {statistics.median(tails):.0%} over {len(tails)}" if tails else ""
    print(
        f"{name}: {len(points)} percentile points from {sources} source(s): median |error| "
        f"{statistics.median(errors):.0%}, worst {max(errors):.0%}{tail}"
    )


def _tail_ratios(points: list[PercentilePoint]) -> list[float]:
    """The shape alone: each tail percentile over its run's p50, simulated against measured, less 1. The
    roofline's speed level cancels out; what remains is the simulation's queueing and batching."""
    p50 = {(p.case.id, p.metric): p for p in points if p.percentile == "p50"}
    out = []
    for p in points:
        base = p50.get((p.case.id, p.metric))
        if p.percentile != "p50" and base is not None and base.simulated_ms > 0:
            out.append((p.simulated_ms / base.simulated_ms) / (p.measured_ms / base.measured_ms) - 1)
    return out


def percentiles(models: object, gpus: object) -> None:
    """The simulated percentiles against the published ones (``percentile_cases`` of ``ttft_cases.yaml``)."""
    points = check_percentile_cases(models, gpus)  # type: ignore[arg-type]
    fit = [p for p in points if p.case.split == "fit"]
    held = [p for p in points if p.case.split == "holdout"]
    print("\n=== latency percentiles: simulated continuous batching (calculator.capacity.simulation) ===")
    print("nothing in the simulation is fitted; the 'fit' cases are the TTFT overhead's fit source, so in-sample")
    _percentile_table("IN-SAMPLE (the overhead's source)", fit)
    _percentile_table("HOLD-OUT", held)
    print()
    _percentile_summary("in-sample", fit)
    _percentile_summary("hold-out", held)
    sure = [p for p in held if not p.case.uncertain]
    _percentile_summary("hold-out, cases with nothing assumed", sure)
    medians = check_median_ttfts(models, gpus)  # type: ignore[arg-type]
    print("\nMedian TTFTs above, simulated (p50): the same cases as the formula's")
    for m in medians:
        print(
            f"  {m.case.id:30} {m.case.measured_ttft_ms:8.1f} measured {m.simulated_ms:8.1f} simulated {m.error:+5.0%}"
        )
    for name, split in (("in-sample", "fit"), ("hold-out", "holdout")):
        errors = [abs(m.error) for m in medians if m.case.split == split]
        if errors:
            print(
                f"{name}: simulated median TTFT median |error| {statistics.median(errors):.0%}, worst "
                f"{max(errors):.0%} over {len(errors)}"
            )
    limited = check_limited_rates(models, gpus)  # type: ignore[arg-type]
    if limited:
        print("\nLatency-limited runs: the highest rate per replica meeting the run's limits, simulated vs published")
        for r in limited:
            lim = r.case.limits
            assert lim is not None
            flight = f"{r.measured_in_flight:.0f}" if r.measured_in_flight is not None else "-"
            flag = "  (uncertain)" if r.case.uncertain else ""
            print(
                f"  {r.case.id:36} {lim.percentile} TTFT <= {lim.ttft_ms:g} ms, TPOT <= {lim.tpot_ms:g} ms: "
                f"{r.found.rate:6.2f} vs {r.measured_rate:6.2f} req/s ({r.error:+.0%}); decoding "
                f"{r.found.batch:.0f} vs {flight} in flight{flag}"
            )
    matched = check_speed_matched(models, gpus)  # type: ignore[arg-type]
    print("\nThe simulation alone: every step stretched until the run's p50 TPOT is the published one (a")
    print("diagnostic, one figure per run; the factor is how far the roofline's speed is off there)")
    for sm in matched:
        errors = [abs(p.error) for p in sm.points]
        worst = max(errors) if errors else 0.0
        print(f"  {sm.case.id:36} steps x{sm.scale:5.2f}: the other {len(errors)} points median |error| "
              f"{statistics.median(errors) if errors else 0.0:.0%}, worst {worst:.0%}")  # fmt: skip
    for name, split in (("in-sample", "fit"), ("hold-out", "holdout")):
        errors = [abs(p.error) for sm in matched if sm.case.split == split for p in sm.points]
        if errors:
            print(f"{name}, speed matched: median |error| {statistics.median(errors):.0%}, worst {max(errors):.0%} "
                  f"over {len(errors)} points")  # fmt: skip
    for name, group in (("in-sample", fit), ("hold-out", held), ("hold-out, nothing assumed", sure)):
        ratios = [abs(r) for r in _tail_ratios(group)]
        if ratios:
            print(
                f"{name}: tail shape (each p90-p99 over its run's p50, simulated vs measured) median |error| "
                f"{statistics.median(ratios):.0%}, worst {max(ratios):.0%} over {len(ratios)}"
            )


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    models, gpus = load_model_specs(), load_gpu_specs()
    results = check_ttft_cases(models, gpus)
    print(f"per-request overhead {TTFT_OVERHEAD_MS:g} ms (fitted on the fit cases); columns in ms")
    fit = [r for r in results if r.case.split == "fit"]
    held = [r for r in results if r.case.split == "holdout"]
    _table("IN-SAMPLE (fit)", fit)
    _table("HOLD-OUT (never seen by the fit)", held)
    print()
    _summary("in-sample", fit)
    _summary("hold-out", held)
    percentiles(models, gpus)
    if "--refit" in argv:
        fitted = fit_overhead_ms(models, gpus)
        same = fitted == TTFT_OVERHEAD_MS
        print(f"\nrefit on the fit split: {fitted:g} ms; default {'agrees' if same else 'DIFFERS: update ttft.py'}")


if __name__ == "__main__":
    main()
