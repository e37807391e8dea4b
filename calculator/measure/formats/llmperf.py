"""ray-project/llmperf: ``<name>_summary.json`` (one flattened object per run) and
``<name>_individual_responses.json`` (one object per request).

The summary flattens each per-request metric into ``results_<metric>_<stat>`` (``results_ttft_s_quantiles_p99``,
``results_end_to_end_latency_s_mean``), latencies in seconds; the run's own figures are
``results_mean_output_throughput_token_per_s`` (all output tokens over the wall time) and, in later versions,
``results_num_completed_requests_per_min``. llmperf runs a closed loop of ``num_concurrent_requests`` clients.
Its ``inter_token_latency_s`` is end-to-end latency over output tokens, TTFT included, not the gap between
streamed tokens the other tools report, so it is kept out of the record's inter-token latency.

A per-request file holds no timing of the run as a whole: its requests/s comes from the summary beside it.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from calculator.catalog.datafile import DataFileError
from calculator.catalog.textfile import read_text
from calculator.measure.formats.reading import (
    Bad,
    Doc,
    Fields,
    Run,
    a_string,
    first_given,
    percentile,
    read_number,
    unread_latency_keys,
    warn_unread,
)

TOOL = "llmperf"
SUMMARY_SUFFIX = "_summary.json"
REQUESTS_SUFFIX = "_individual_responses.json"
REQUEST_KEYS = frozenset({"ttft_s", "end_to_end_latency_s", "number_input_tokens", "number_output_tokens"})
_METRICS = ("inter_token_latency_s", "ttft_s", "end_to_end_latency_s", "request_output_throughput_token_per_s")
_STATS = (("mean", "mean"), ("p50", "quantiles_p50"), ("p90", "quantiles_p90"), ("p95", "quantiles_p95"))


def is_summary(data: Mapping[str, Any]) -> bool:
    return "num_concurrent_requests" in data and any(k.startswith("results_") for k in data)


def is_request(data: Mapping[str, Any]) -> bool:
    return len(REQUEST_KEYS & data.keys()) >= 3


def _understood(key: str) -> bool:
    return any(key.startswith(f"results_{m}_") for m in _METRICS)


def _latency(d: Mapping[str, Any], metric: str, run: Run) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for field, stat in (*_STATS, ("p99", "quantiles_p99")):
        value = run.num(d, f"results_{metric}_{stat}")
        out[field] = None if value is None else value * 1000
    return out


def _setup(d: Mapping[str, Any], f: Fields) -> None:
    f.set_model(d.get("model"))
    framework = a_string(d.get("framework"))
    if framework is not None:
        f.notes.append(f"framework {framework!r} (llmperf metadata; a provider or engine the run named)")
    version = a_string(d.get("version"))
    if version is not None:
        f.notes.append(f"llmperf results version {version}")
    stamp = d.get("timestamp")
    if isinstance(stamp, int | float) and not isinstance(stamp, bool) and 0 < stamp < 1e11:
        f.measured = dt.datetime.fromtimestamp(stamp, dt.UTC).date()


def _itl_note(itl_mean_s: float | None, f: Fields) -> None:
    if itl_mean_s is not None:
        f.notes.append(
            f"llmperf's inter-token latency {itl_mean_s * 1000:.1f} ms (mean) is end-to-end latency over output "
            "tokens, TTFT included: not recorded as the gap between streamed tokens"
        )


def read_summary(doc: Doc, index: int, run: Run) -> Fields:
    d: Mapping[str, Any] = doc.data
    f = Fields(index=index, line=doc.line)
    _setup(d, f)
    f.concurrency = run.num(d, "num_concurrent_requests")
    f.input_tokens = first_given(run.num(d, "results_number_input_tokens_mean"), run.num(d, "mean_input_tokens"))
    f.output_tokens = run.num(d, "results_number_output_tokens_mean")
    f.output_tokens_per_s = run.num(d, "results_mean_output_throughput_token_per_s")
    per_min = run.num(d, "results_num_completed_requests_per_min")
    if per_min:
        f.requests_per_s = per_min / 60
    elif f.output_tokens_per_s and f.output_tokens:
        f.requests_per_s = f.output_tokens_per_s / f.output_tokens
        f.notes.append("requests/s = overall output tokens/s / mean output tokens (the summary has no request rate)")
    else:
        run.problem(None, "needs results_num_completed_requests_per_min or the overall output throughput")
    if f.output_tokens is None:
        run.problem(None, "needs results_number_output_tokens_mean (the measured mean output length)")
    f.ttft = _latency(d, "ttft_s", run)
    f.e2e = _latency(d, "end_to_end_latency_s", run)
    _itl_note(run.num(d, "results_inter_token_latency_s_mean"), f)
    errors = run.count(d, "results_number_errors")
    f.failed = errors
    f.completed = run.num(d, "results_num_completed_requests")
    warn_unread(f, unread_latency_keys(d, _understood), TOOL)
    f.notes.append("prefix share unknown: llmperf's prompts are random lines of a sonnet after a fixed instruction")
    return f


def read_requests(docs: Sequence[Doc], name: str, source: Path | None, run: Run) -> Fields:
    """One record from every request of an individual-responses file, with the run's concurrency and
    requests/s from the summary llmperf wrote beside it."""
    f = Fields(index=1, line=docs[0].line)
    ok: list[Mapping[str, Any]] = []
    failed = 0
    for doc in docs:
        row = doc.data
        if row.get("error_code") not in (None, "") or row.get("error_msg"):
            failed += 1
        elif is_request(row):
            ok.append(row)
    f.failed = failed
    if not ok:
        run.problem(None, "no request of the file succeeded")
        return f

    def values(key: str) -> list[float]:
        found = []
        for row in ok:
            try:
                value = read_number(row.get(key))
            except Bad:
                value = None
            if value is not None and math.isfinite(value):
                found.append(value)
        return found

    for target, key in (("ttft", "ttft_s"), ("e2e", "end_to_end_latency_s")):
        seconds = values(key)
        if seconds:
            setattr(
                f,
                target,
                {
                    "mean": sum(seconds) / len(seconds) * 1000,
                    **{
                        p: percentile(seconds, q) * 1000
                        for p, q in (("p50", 50), ("p90", 90), ("p95", 95), ("p99", 99))
                    },
                },
            )
    inputs, outputs = values("number_input_tokens"), values("number_output_tokens")
    f.input_tokens = sum(inputs) / len(inputs) if inputs else None
    f.output_tokens = sum(outputs) / len(outputs) if outputs else None
    itl = values("inter_token_latency_s")
    _itl_note(sum(itl) / len(itl) if itl else None, f)
    summary = _summary_beside(name, source)
    if summary is None:
        run.problem(
            None,
            "an llmperf per-request file holds no timing of the run: import the run's "
            f"{SUMMARY_SUFFIX} (or keep it beside this file, as llmperf writes it)",
        )
        return f
    summary_run = Run(name, Doc(summary, 1), [])
    read = read_summary(Doc(summary, 1), 1, summary_run)
    f.concurrency, f.requests_per_s = read.concurrency, read.requests_per_s
    f.model, f.model_path, f.measured = read.model, read.model_path, read.measured
    f.notes.append(f"{len(ok)} requests read from this file; concurrency and requests/s from the summary beside it")
    f.completed = len(ok)
    return f


def _summary_beside(name: str, source: Path | None) -> dict[str, Any] | None:
    if source is None or not str(source).endswith(REQUESTS_SUFFIX):
        return None
    beside = Path(str(source)[: -len(REQUESTS_SUFFIX)] + SUMMARY_SUFFIX)
    if not beside.is_file():
        return None
    try:
        data = json.loads(read_text(beside, str(beside)))
    except (ValueError, OSError, DataFileError):
        return None
    return data if isinstance(data, dict) and is_summary(data) else None
