"""vLLM ``bench serve`` and SGLang ``bench_serving``: one flat object per run."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any

from calculator.measure.formats.prefix import read_prefix_share
from calculator.measure.formats.reading import (
    LATENCY_WORDS,
    Doc,
    Fields,
    Run,
    a_string,
    engine_from_backend,
    first_given,
    fmt_number,
    parse_rate,
    unread_latency_keys,
    warn_unread,
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
_KNOWN_LATENCY = re.compile(
    r"^(mean|median|std|max|min|p[0-9.]+)_"
    r"(ttft|tpot|itl|e2el|e2e_latency|client_queue_time|e2el_including_client_queue|queue_time)(_ms|_s)?$"
)
"""The latency statistics vLLM and SGLang write (``_ms``), and the same in seconds: ``_s``, or no unit at all,
as InferenceMAX writes them after dividing the client's milliseconds by 1,000."""
_PER_REQUEST_TIMES = frozenset({"latencies", "queue_times", "ttfts", "itls", "e2e_latencies"})

_FLAT_EXTRA_PREFIXES = ("spec_decode_", "diffusion_", "probe_")
TOOL_NAMES = {"vllm": "vLLM bench serve", "sglang": "SGLang bench_serving"}


def _flat_latency(data: Mapping[str, Any], metric: str, run: Run, units: set[str]) -> dict[str, float | None]:
    """A metric's statistics in milliseconds, read in the unit each key states (``_ms``; ``_s`` or none: seconds)."""

    def stat(prefix: str) -> float | None:
        for suffix, factor in (("_ms", 1.0), ("_s", 1000.0), ("", 1000.0)):
            value = run.num(data, f"{prefix}_{metric}{suffix}")
            if value is not None:
                units.add(suffix or "none")
                return value * factor
        return None

    return {
        "mean": stat("mean"),
        "p50": first_given(stat("median"), stat("p50")),
        "p90": stat("p90"),
        "p95": stat("p95"),
        "p99": stat("p99"),
    }


_FRAMEWORK_ENGINES = {
    "sgl": "sglang",
    "sglang": "sglang",
    "vllm": "vllm",
    "trt": "tensorrt-llm",
    "trtllm": "tensorrt-llm",
    "trt-llm": "tensorrt-llm",
    "tensorrt-llm": "tensorrt-llm",
    "lmdeploy": "lmdeploy",
    "tgi": "tgi",
}
"""Engines a wrapper's ``framework`` metadata names (``--metadata framework=sgl``, as neuralmagic's
benchmark-compare scripts pass it to vLLM's client)."""


def _framework_engine(d: Mapping[str, Any], f: Fields, client_engine: str | None) -> str | None:
    """The engine the run's own ``framework`` metadata names, which beats the client's backend: vLLM's client
    speaks the ``vllm`` API to any OpenAI-compatible server, so its backend does not name the server."""
    framework = a_string(d.get("framework"))
    if framework is None:
        return client_engine
    engine = _FRAMEWORK_ENGINES.get(framework.lower())
    if engine is None:
        f.notes.append(f"framework {framework!r} is not an engine this calculator knows")
        return client_engine
    if client_engine is not None and client_engine != engine:
        f.notes.append(
            f"engine {engine} from the file's framework={framework} (the client's backend "
            f"{d.get('backend')!r} is the API it spoke, not the server)"
        )
    return engine


def _server_info(info: Mapping[str, Any], f: Fields) -> None:
    """Model, engine and version from SGLang's ``/get_server_info``; a prefill/decode-disaggregated router
    answers with one list of servers per role (``{"prefill": [...], "decode": [...]}``)."""
    servers: list[Mapping[str, Any]] = [info]
    roles = {role: info.get(role) for role in ("prefill", "decode")}
    if any(isinstance(v, list) for v in roles.values()):
        lists = {role: [s for s in v if isinstance(s, Mapping)] for role, v in roles.items() if isinstance(v, list)}
        servers = [s for role in ("decode", "prefill") for s in lists.get(role, [])]
        f.notes.append(
            "prefill/decode disaggregated: "
            + ", ".join(f"{len(v)} {role} server{'s' if len(v) != 1 else ''}" for role, v in lists.items())
        )
    for server in servers:
        if f.model is None:
            f.set_model(first_given(a_string(server.get("served_model_name")), a_string(server.get("model_path"))))
            if f.model_path is None and a_string(server.get("model_path")) not in (None, f.model):
                f.model_path = a_string(server.get("model_path"))
        if f.engine_version is None:
            f.engine_version = a_string(server.get("version"))
    if servers:
        f.engine = "sglang"


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
    units: set[str] = set()
    f.ttft = _flat_latency(d, "ttft", run, units)
    f.itl = _flat_latency(d, "itl", run, units)
    f.e2e = _flat_latency(d, e2e_name, run, units)
    if not any(f.e2e.values()) and e2e_name == "e2e_latency":
        f.e2e = _flat_latency(d, "e2el", run, units)
    tpot = _flat_latency(d, "tpot", run, units)
    if tpot["mean"] is not None or tpot["p50"] is not None:
        which, value = ("mean", tpot["mean"]) if tpot["mean"] is not None else ("median", tpot["p50"])
        f.notes.append(f"{which} TPOT {value:.2f} ms")
    if units - {"_ms"}:
        f.notes.append(
            "latencies read in seconds: "
            + ("keys ending _s" if "_s" in units else "keys without a unit, as InferenceMAX writes them (seconds)")
        )
    warn_unread(
        f,
        unread_latency_keys(d, lambda k: bool(_KNOWN_LATENCY.match(k)) or k in _PER_REQUEST_TIMES),
        TOOL_NAMES[fmt],
    )

    f.set_model(first_given(a_string(d.get("model_id")), a_string(d.get("model"))))
    f.engine = _framework_engine(d, f, engine_from_backend(d.get("backend"), f.notes))
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
            _server_info(info, f)
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
    read_prefix_share(d, completed, f)

    extras = [
        f"{k}={v}"
        for k, v in d.items()
        if k not in _FLAT_KNOWN
        and not _FLAT_STAT.match(k)
        and not k.startswith(_FLAT_EXTRA_PREFIXES)
        and isinstance(v, str | int | float)
        and not isinstance(v, bool)
        and k not in ("model", "framework")
        and not LATENCY_WORDS.search(k)
    ]
    if extras:
        f.notes.append("file metadata (not used for GPU, count or precision): " + ", ".join(extras))
    return f
