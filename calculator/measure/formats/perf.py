"""genai-perf and AIPerf exports: metric -> {unit, avg, p50, ...}, with the run's configuration in
``input_config`` (flat in genai-perf 24.x, nested since; AIPerf's loadgen in 0.8, phases and models since 0.9)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from calculator.measure.formats.reading import (
    Doc,
    Fields,
    Run,
    a_string,
    dig,
    engine_from_backend,
    first_given,
    iso_date,
    kind_of,
    parse_rate,
    unread_latency_keys,
    warn_unread,
)

_TIME_TO_MS = {
    "ns": 1e-6,
    "nanoseconds": 1e-6,
    "us": 1e-3,
    "µs": 1e-3,
    "μs": 1e-3,
    "microseconds": 1e-3,
    "ms": 1.0,
    "milliseconds": 1.0,
    "s": 1000.0,
    "sec": 1000.0,
    "secs": 1000.0,
    "second": 1000.0,
    "seconds": 1000.0,
}


def _per_second(unit: str) -> float | None:
    """Factor to per-second of a rate unit (``requests/sec``, ``per sec``, ``tokens/sec``)."""
    u = unit.strip().lower()
    for suffix, factor in (
        ("/sec", 1.0),
        ("/s", 1.0),
        ("per sec", 1.0),
        ("per second", 1.0),
        ("/second", 1.0),
        ("/min", 1 / 60),
        ("per min", 1 / 60),
        ("/minute", 1 / 60),
    ):
        if u.endswith(suffix):
            return factor
    return None


_KNOWN_TIMES = frozenset(
    {
        "time_to_first_token",
        "inter_token_latency",
        "request_latency",
        "time_to_second_token",
        "time_to_first_output_token",
        "inter_chunk_latency",
        "credit_to_start_latency",
        "effective_latency",
        "request_queue_latency",
    }
)
"""The latency metrics genai-perf and AIPerf write: the three read into the record and the others they add
(second token, first output token after reasoning, chunk gaps, scheduling delays), understood and left out."""


class _Metrics:
    def __init__(self, metrics: Mapping[str, Any], run: Run) -> None:
        self.metrics = metrics
        self.run = run

    def _get(self, tag: str) -> Mapping[str, Any] | None:
        value = self.metrics.get(tag)
        if value is None:
            return None
        if not isinstance(value, Mapping):
            self.run.problem(tag, f"expected an object with unit and statistics, got {kind_of(value)}")
            return None
        return value

    def unit(self, tag: str) -> str | None:
        m = self._get(tag)
        unit = m.get("unit") if m is not None else None
        return unit if isinstance(unit, str) else None

    def stat(self, tag: str, key: str = "avg") -> float | None:
        m = self._get(tag)
        return self.run.num(m, key, f"{tag}.{key}") if m is not None else None

    def time_ms(self, tag: str) -> dict[str, float | None]:
        m = self._get(tag)
        if m is None:
            return {}
        unit = self.unit(tag)
        factor = _TIME_TO_MS.get(unit.strip().lower()) if unit else None
        if factor is None:
            self.run.problem(f"{tag}.unit", f"expected a time unit (ns, us, ms, s), got {unit!r}")
            return {}
        out: dict[str, float | None] = {}
        for key, source in (("mean", "avg"), ("p50", "p50"), ("p90", "p90"), ("p95", "p95"), ("p99", "p99")):
            value = self.stat(tag, source)
            out[key] = value * factor if value is not None else None
        return out

    def rate(self, tag: str) -> float | None:
        value = self.stat(tag)
        if value is None:
            return None
        unit = self.unit(tag) or ""
        factor = _per_second(unit)
        if factor is None:
            self.run.problem(f"{tag}.unit", f"expected a rate per second (such as requests/sec), got {unit!r}")
            return None
        return value * factor

    def seconds(self, tag: str) -> float | None:
        value = self.stat(tag)
        if value is None:
            return None
        unit = (self.unit(tag) or "").strip().lower()
        factor = _TIME_TO_MS.get(unit)
        if factor is None:
            self.run.problem(f"{tag}.unit", f"expected a time unit (ns, us, ms, s), got {unit!r}")
            return None
        return value * factor / 1000


def _profiling_phase(config: Mapping[str, Any], f: Fields) -> Mapping[str, Any]:
    """The measured phase of an AIPerf 0.10+ run (``input_config.phases[]``, warm-up phases left out)."""
    phases = config.get("phases")
    if not isinstance(phases, list):
        return {}
    measured = [
        p
        for p in phases
        if isinstance(p, Mapping) and str(p.get("kind") or p.get("name") or "profiling").lower() != "warmup"
    ]
    if len(measured) > 1:
        f.notes.append(f"{len(measured)} profiling phases in one export: the load level is the first one's")
    if measured and measured[0].get("type"):
        f.notes.append(f"AIPerf phase type {measured[0]['type']}")
    return measured[0] if measured else {}


def _first_at(*found: tuple[str, Any]) -> tuple[str, Any]:
    """The first (path, value) whose value is given, else the first path with None."""
    return next(((where, value) for where, value in found if value is not None), (found[0][0], None))


def read_perf_export(doc: Doc, fmt: str, run: Run) -> Fields:
    d: dict[str, Any] = doc.data
    f = Fields(index=1, line=doc.line)
    records = d.get("records")
    m = _Metrics(records if isinstance(records, dict) else d, run)

    count = m.stat("request_count")
    duration = m.seconds("benchmark_duration")
    f.completed, f.duration_s = count, duration
    rps = m.rate("request_throughput")
    if rps is not None and rps > 0:
        f.requests_per_s = rps
    elif count is not None and duration:
        f.requests_per_s = count / duration
        f.notes.append("requests_per_s = request_count / benchmark_duration (the file has no request_throughput)")
    elif rps is None and duration is None:
        run.problem(None, "the run has neither 'benchmark_duration' nor 'request_throughput': no throughput to read")
    else:
        run.problem("request_throughput", "no positive request throughput in this run")

    f.input_tokens = m.stat("input_sequence_length")
    if f.input_tokens is None and count:
        total = m.stat("total_isl")
        f.input_tokens = total / count if total is not None else None
    f.output_tokens = m.stat("output_sequence_length")
    if f.output_tokens is None and count:
        total = m.stat("total_osl")
        f.output_tokens = total / count if total is not None else None
    if f.input_tokens is None:
        run.problem(None, "no measured mean input length (input_sequence_length)")
    if f.output_tokens is None:
        run.problem(None, "no measured mean output length (output_sequence_length)")

    f.output_tokens_per_s = m.rate("output_token_throughput")
    if f.output_tokens_per_s is not None and f.requests_per_s and f.input_tokens is not None:
        f.total_tokens_per_s = f.output_tokens_per_s + f.requests_per_s * f.input_tokens
        f.notes.append("total_tokens_per_s = output token throughput + request throughput x mean input length")

    f.ttft = m.time_ms("time_to_first_token")
    f.itl = m.time_ms("inter_token_latency")
    f.e2e = m.time_ms("request_latency")
    warn_unread(
        f,
        unread_latency_keys(m.metrics, lambda k: k in _KNOWN_TIMES or k.endswith(("throughput", "_per_user"))),
        fmt,
    )
    errors = m.stat("error_request_count")
    if errors is not None:
        f.failed = int(errors) if errors >= 0 and errors.is_integer() else None

    raw_config = d.get("input_config")
    config: dict[str, Any] = raw_config if isinstance(raw_config, dict) else {}
    phase = _profiling_phase(config, f)
    # where each layout keeps the offered load: genai-perf 24.x flat, AIPerf 0.8 loadgen, genai-perf 25.x
    # perf_analyzer.stimulus, AIPerf 0.9+ phases; a bad value is named at the path the file used
    where, concurrency = _first_at(
        ("input_config.concurrency", config.get("concurrency")),
        ("input_config.loadgen.concurrency", dig(config, "loadgen", "concurrency")),
        ("input_config.perf_analyzer.stimulus.concurrency", dig(config, "perf_analyzer", "stimulus", "concurrency")),
        ("input_config.phases[].concurrency", phase.get("concurrency")),
    )
    f.concurrency = run.num({"c": concurrency}, "c", where)
    where, rate = _first_at(
        ("input_config.request_rate", config.get("request_rate")),
        ("input_config.loadgen.request_rate", dig(config, "loadgen", "request_rate")),
        ("input_config.perf_analyzer.stimulus.request_rate", dig(config, "perf_analyzer", "stimulus", "request_rate")),
        ("input_config.phases[].rate", phase.get("rate")),
        ("input_config.phases[].request_rate", phase.get("request_rate")),
    )
    parse_rate(rate, run, f, where)
    items = dig(config, "models", "items")
    named = [m.get("name") for m in items if isinstance(m, dict)] if isinstance(items, list) else None
    models = first_given(
        config.get("model"), config.get("model_names"), dig(config, "endpoint", "model_names"), named or None
    )
    f.model = a_string(models)
    if f.model is None and isinstance(models, list) and len(models) > 1:
        f.notes.append(f"several models benchmarked together: {', '.join(map(str, models))}")
    # genai-perf 25.x nests the endpoint settings (input_config.endpoint.service_kind / .backend)
    service_kind = first_given(config.get("service_kind"), dig(config, "endpoint", "service_kind"))
    if str(service_kind or "").lower() == "triton":
        f.engine = engine_from_backend(first_given(config.get("backend"), dig(config, "endpoint", "backend")), f.notes)
    f.measured = iso_date(first_given(d.get("start_time"), dig(d, "execution_metadata", "start_time")))
    if isinstance(d.get("aiperf_version"), str):
        f.notes.append(f"aiperf {d['aiperf_version']}")

    gpus = []
    for endpoint in (dig(d, "telemetry_data", "endpoints") or {}).values():
        for gpu in (dig(endpoint, "gpus") or {}).values():
            if isinstance(gpu, dict) and isinstance(gpu.get("gpu_name"), str):
                gpus.append(gpu["gpu_name"])
    if gpus:
        names = sorted(set(gpus))
        f.notes.append(
            f"GPU telemetry saw {len(gpus)} GPU(s): {', '.join(names)} "
            "(not used as the record's GPU; say which GPU ran it)"
        )
    return f
