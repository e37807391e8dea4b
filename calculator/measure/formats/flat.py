"""vLLM ``bench serve`` and SGLang ``bench_serving``: one flat object per run."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any

from calculator.measure.formats.reading import (
    Doc,
    Fields,
    Run,
    a_string,
    engine_from_backend,
    first_given,
    fmt_number,
    parse_rate,
)

_FLAT_KNOWN = frozenset(
    {
        "date",
        "endpoint_type",
        "backend",
        "label",
        "model_id",
        "tokenizer_id",
        "num_prompts",
        "request_rate",
        "burstiness",
        "max_concurrency",
        "ramp_up_strategy",
        "ramp_up_start_rps",
        "ramp_up_end_rps",
        "duration",
        "completed",
        "failed",
        "total_input_tokens",
        "total_output_tokens",
        "request_throughput",
        "request_goodput",
        "request_goodput:",
        "output_throughput",
        "total_token_throughput",
        "max_output_tokens_per_s",
        "max_concurrent_requests",
        "rtfx",
        "latencies",
        "queue_times",
        "input_lens",
        "output_lens",
        "ttfts",
        "itls",
        "start_times",
        "generated_texts",
        "errors",
        "rps_change_events",
        "total_input_sequences",
        "input_sequence_throughput",
        # SGLang
        "tag",
        "dataset_name",
        "sharegpt_output_len",
        "random_input_len",
        "random_output_len",
        "random_range_ratio",
        "server_info",
        "total_input_text_tokens",
        "total_input_vision_tokens",
        "total_output_tokens_retokenized",
        "input_throughput",
        "total_throughput",
        "concurrency",
        "accept_length",
    }
)


_FLAT_STAT = re.compile(r"^(mean|median|std|max|min|p[0-9.]+)_[a-z0-9_]+_ms$")


_FLAT_EXTRA_PREFIXES = ("spec_decode_", "diffusion_", "probe_")


def _flat_latency(data: Mapping[str, Any], metric: str, run: Run) -> dict[str, float | None]:
    def stat(prefix: str) -> float | None:
        return run.num(data, f"{prefix}_{metric}_ms")

    return {
        "mean": stat("mean"),
        "p50": first_given(stat("median"), stat("p50")),
        "p90": stat("p90"),
        "p95": stat("p95"),
        "p99": stat("p99"),
    }


def read_flat(doc: Doc, fmt: str, index: int, run: Run) -> Fields:
    d: dict[str, Any] = doc.data
    f = Fields(index=index, line=doc.line)
    completed = run.num(d, "completed")
    duration = run.num(d, "duration")
    throughput = run.num(d, "request_throughput")
    if throughput is not None and throughput > 0:
        f.requests_per_s = throughput
    elif completed is not None and duration is not None and duration > 0:
        f.requests_per_s = completed / duration
        f.notes.append("requests_per_s = completed / duration (the file has no request_throughput)")
    elif throughput is None and duration is None:
        run.problem(None, "the run has neither 'duration' nor 'request_throughput': no throughput to read")
    else:
        run.problem(None, "the run has no positive request_throughput and no completed/duration to compute it")
    if completed is not None and completed <= 0:
        run.problem("completed", "no request completed in this run")
    f.completed, f.duration_s = completed, duration
    n = completed if completed else (f.requests_per_s * duration if f.requests_per_s and duration else None)

    total_in = run.num(d, "total_input_tokens")
    total_out = run.num(d, "total_output_tokens")
    out_tput = run.num(d, "output_throughput")
    if n and total_in is not None:
        f.input_tokens = total_in / n
    else:
        run.problem(None, "cannot work out the measured mean input length: needs total_input_tokens and completed")
    if n and total_out is not None:
        f.output_tokens = total_out / n
    elif n and out_tput is not None and duration:
        f.output_tokens = out_tput * duration / n
        f.notes.append("output_tokens = output_throughput x duration / completed")
    else:
        run.problem(None, "cannot work out the measured mean output length: needs total_output_tokens and completed")

    f.output_tokens_per_s = first_given(out_tput, total_out / duration if total_out is not None and duration else None)
    total_tput = run.num(d, "total_token_throughput") if fmt == "vllm" else run.num(d, "total_throughput")
    if total_tput is None and total_in is not None and total_out is not None and duration:
        total_tput = (total_in + total_out) / duration
    f.total_tokens_per_s = total_tput

    parse_rate(d.get("request_rate"), run, f)
    f.concurrency = run.num(d, "max_concurrency")
    if d.get("ramp_up_strategy"):
        f.notes.append(
            f"request rate ramped ({d.get('ramp_up_strategy')}) from {d.get('ramp_up_start_rps')} "
            f"to {d.get('ramp_up_end_rps')} req/s"
        )
    if "failed" in d:
        f.failed = run.count(d, "failed")

    e2e_name = "e2el" if fmt == "vllm" else "e2e_latency"
    f.ttft = _flat_latency(d, "ttft", run)
    f.itl = _flat_latency(d, "itl", run)
    f.e2e = _flat_latency(d, e2e_name, run)
    tpot = run.num(d, "mean_tpot_ms")
    if tpot is not None:
        f.notes.append(f"mean TPOT {tpot:.2f} ms")

    f.model = first_given(a_string(d.get("model_id")), a_string(d.get("model")))
    f.engine = engine_from_backend(d.get("backend"), f.notes)
    if fmt == "vllm":
        date = d.get("date")
        if isinstance(date, str):
            try:
                f.measured = dt.datetime.strptime(date.strip(), "%Y%m%d-%H%M%S").date()
            except ValueError:
                f.notes.append(f"date {date!r} not read")
    else:
        info = d.get("server_info")
        if isinstance(info, dict):
            f.model = first_given(f.model, a_string(info.get("model_path")))
            f.engine_version = a_string(info.get("version"))
        if isinstance(d.get("dataset_name"), str):
            f.notes.append(f"dataset {d['dataset_name']}")
        ratio = run.num(d, "random_range_ratio")
        in_len, out_len = d.get("random_input_len"), d.get("random_output_len")
        if d.get("dataset_name") == "random" and ratio is not None and ratio < 1:
            f.notes.append(
                f"nominal random lengths {in_len} in / {out_len} out with random_range_ratio {fmt_number(ratio)}: "
                "the record uses the measured means"
            )
        in_flight = run.num(d, "concurrency")
        if in_flight is not None:
            f.notes.append(f"mean requests in flight {in_flight:.1f}")
        if d.get("tag"):
            f.notes.append(f"tag {d['tag']!r}")
    if fmt == "vllm" and d.get("label"):
        f.notes.append(f"label {d['label']!r}")

    extras = [
        f"{k}={v}"
        for k, v in d.items()
        if k not in _FLAT_KNOWN
        and not _FLAT_STAT.match(k)
        and not k.startswith(_FLAT_EXTRA_PREFIXES)
        and isinstance(v, str | int | float)
        and not isinstance(v, bool)
        and k != "model"
    ]
    if extras:
        f.notes.append("file metadata (not used for GPU, count or precision): " + ", ".join(extras))
    return f
