"""GuideLLM reports: ``benchmarks[]`` with metric distributions per request status (0.2 to 0.8+)."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Mapping
from typing import Any

from calculator.measure.formats.reading import (
    Doc,
    Fields,
    Run,
    a_string,
    dig,
    first_given,
    kind_of,
    unread_latency_keys,
    warn_unread,
)


def _distribution(metrics: Any, key: str, status: str = "successful") -> Mapping[str, Any] | None:
    value = dig(metrics, key)
    if not isinstance(value, Mapping):
        return None
    summary = value.get(status) if status in value else value
    return summary if isinstance(summary, Mapping) else None


def _guidellm_strategy(bench: Mapping[str, Any], f: Fields, run: Run) -> None:
    strategy = first_given(
        dig(bench, "config", "strategy"),
        dig(bench, "args", "strategy"),
        dig(bench, "scheduler", "strategy"),
        dig(bench, "strategy"),
    )
    if not isinstance(strategy, Mapping):
        return
    kind = str(first_given(strategy.get("type_"), strategy.get("type"), "")).lower()
    max_concurrency = run.num(strategy, "max_concurrency", "strategy.max_concurrency")
    if kind == "synchronous":
        f.concurrency = 1
    elif kind == "concurrent":
        f.concurrency = run.num(strategy, "streams", "strategy.streams")
    elif kind == "throughput":
        f.rate_infinite = True
        f.concurrency = max_concurrency
    elif kind in ("constant", "poisson", "async_constant", "async_poisson", "async"):
        rate = run.num(strategy, "rate", "strategy.rate")
        if rate is not None and math.isinf(rate):
            f.rate_infinite = True
        elif rate is not None:
            f.request_rate = rate
        f.concurrency = max_concurrency
    if kind:
        f.notes.append(f"GuideLLM strategy {kind}")


_KNOWN_TIMES = frozenset(
    {
        "time_to_first_token_ms",
        "inter_token_latency_ms",
        "request_latency",
        "time_per_output_token_ms",
        "time_to_first_output_token_ms",
        "request_scheduled_latency",
        "time_to_last_round_trip_ms",
    }
)
"""GuideLLM's latency distributions: the three read into the record and the others it reports, understood."""


def read_guidellm(doc: Doc, run_for: Callable[[int, int | None], Run]) -> list[Fields]:
    report: dict[str, Any] = doc.data
    benchmarks = report["benchmarks"]
    lines = doc.item_lines("benchmarks")
    if not benchmarks:
        run_for(0, None).problem("benchmarks", "the report holds no benchmark")
        return []
    model = first_given(
        a_string(dig(report, "config", "model")),
        a_string(dig(report, "config", "spec", "backend", "model")),
        a_string(dig(report, "args", "model")),
    )
    out = []
    for i, bench in enumerate(benchmarks, start=1):
        line = lines[i - 1] if i - 1 < len(lines) else None
        run = run_for(i, line)
        f = Fields(index=i, line=line if line is not None else doc.line)
        if not isinstance(bench, Mapping):
            run.problem(None, f"expected a benchmark object, got {kind_of(bench)}")
            continue
        metrics = bench.get("metrics")
        if not isinstance(metrics, Mapping):
            run.problem("metrics", "the benchmark has no metrics")
            continue

        def mean(key: str, summary_key: str = "mean", *, run: Run = run, metrics: Any = metrics) -> float | None:
            summary = _distribution(metrics, key)
            return run.num(summary, summary_key, f"metrics.{key}.successful.{summary_key}") if summary else None

        def latency(
            key: str, factor: float = 1.0, *, run: Run = run, metrics: Any = metrics
        ) -> dict[str, float | None]:
            summary = _distribution(metrics, key)
            if summary is None:
                return {}
            pct = summary.get("percentiles") if isinstance(summary.get("percentiles"), Mapping) else {}
            label = f"metrics.{key}.successful"
            values = {
                "mean": run.num(summary, "mean", f"{label}.mean"),
                "p50": first_given(run.num(pct, "p50", f"{label}.percentiles.p50"), run.num(summary, "median")),
                "p90": run.num(pct, "p90", f"{label}.percentiles.p90"),
                "p95": run.num(pct, "p95", f"{label}.percentiles.p95"),
                "p99": run.num(pct, "p99", f"{label}.percentiles.p99"),
            }
            return {k: v * factor if v is not None else None for k, v in values.items()}

        totals = first_given(
            dig(metrics, "request_totals"),
            dig(bench, "request_totals"),
            dig(bench, "scheduler_metrics", "requests_made"),
        )
        completed = run.num(totals, "successful", "request_totals.successful")
        f.failed = run.count(totals, "errored", "request_totals.errored")
        duration = run.num(bench, "duration")
        if duration is None:
            times = bench if "start_time" in bench else dig(bench, "run_stats")
            start, end = run.num(times, "start_time"), run.num(times, "end_time")
            duration = end - start if start is not None and end is not None else None
        rps = mean("requests_per_second")
        if rps is not None and rps > 0:
            f.requests_per_s = rps
        elif completed and duration:
            f.requests_per_s = completed / duration
            f.notes.append("requests_per_s = successful requests / duration")
        elif rps is None and duration is None:
            run.problem(None, "the benchmark has neither 'duration' nor requests_per_second: no throughput to read")
        else:
            run.problem(None, "no positive request throughput in this benchmark")

        f.input_tokens = mean("prompt_token_count")
        f.output_tokens = mean("output_token_count")
        if f.input_tokens is None:
            run.problem(None, "no measured mean input length (metrics.prompt_token_count)")
        if f.output_tokens is None:
            run.problem(None, "no measured mean output length (metrics.output_token_count)")
        f.output_tokens_per_s = mean("output_tokens_per_second")
        f.total_tokens_per_s = mean("tokens_per_second")
        f.ttft = latency("time_to_first_token_ms")
        f.itl = latency("inter_token_latency_ms")
        f.e2e = latency("request_latency", 1000.0)  # GuideLLM reports request latency in seconds
        if isinstance(metrics, Mapping):
            warn_unread(f, unread_latency_keys(metrics, lambda k: k in _KNOWN_TIMES), "GuideLLM")
        _guidellm_strategy(bench, f, run)
        f.model = first_given(
            model,
            a_string(dig(bench, "config", "backend", "model")),
            a_string(dig(bench, "worker", "backend_model")),  # GuideLLM 0.2 and 0.3
        )
        start_time = run.num(bench, "start_time")
        if start_time is not None and start_time > 0:
            f.measured = dt.datetime.fromtimestamp(start_time, tz=dt.UTC).date()
        out.append(f)
    version = dig(report, "metadata", "guidellm_version")
    if isinstance(version, str):
        for f in out:
            f.notes.append(f"guidellm {version}")
    return out
