"""InferenceMAX / InferenceX results: one flat object per run, latencies in seconds, the setup stated.

SemiAnalysis' sweeps (``SemiAnalysisAI/InferenceX``) turn each run of their vLLM-derived client into an
``agg_<run>.json`` (``utils/process_result.py``): the setup (``hw``, ``framework``, ``precision``, ``tp``, ``ep``,
``conc``, ``isl``/``osl`` or, across nodes, ``num_prefill_gpu``/``num_decode_gpu``), throughput *per GPU*
(``tput_per_gpu``, ``output_tput_per_gpu``, ``input_tput_per_gpu``) and every ``*_ms`` statistic of the client
divided by 1,000 with its unit dropped (``median_ttft``, ``p99_e2el`` ... in seconds), plus ``*_intvty``
(1,000 / TPOT, tokens/s per user). ``collect_results.py`` joins a sweep's files into one JSON array. Agentic
runs (``scenario_type: agentic-coding``) replay coding-agent traces: the first layout is flat (``users``,
``mean_ttlt``, ``mean_input_tokens``, ``theoretical_cache_hit_rate``, ``duration_seconds``), the current one
nests ``request_metrics`` (``latency``, ``tokens``, ``throughput``, ``cache``) and ``server_metrics``.

InferenceX's site serves the same runs as rows of its ``benchmarks`` API (``hardware``, ``model`` as the sweep's
prefix such as ``dsr1``, the GPU counts, and the statistics under ``metrics``, with the run's date and
``run_url``), and its ``together_runner`` baselines keep the client's own figures under ``metrics``
(``request_throughput``, ``*_ms``). Both read here as the run they describe.

The file gives no request count for fixed-length runs, so requests/s is the closed loop's own Little's law,
concurrency over mean end-to-end latency, and the mean lengths follow from the per-GPU token rates.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from calculator.measure.formats.reading import (
    Doc,
    Fields,
    Run,
    a_string,
    dig,
    first_given,
    fmt_number,
    iso_date,
    unread_latency_keys,
    warn_unread,
)

TOOL = "InferenceMAX"
MARKERS = frozenset({"tput_per_gpu", "output_tput_per_gpu", "infmax_model_prefix", "scenario_type"})
"""Keys only InferenceMAX results carry; two of them (with ``hw``) make a file one."""

_ENGINES = {
    "vllm": "vllm",
    "sglang": "sglang",
    "sglang-disagg": "sglang",
    "dynamo-sglang": "sglang",
    "mori-sglang": "sglang",
    "trt": "tensorrt-llm",
    "trtllm": "tensorrt-llm",
    "dynamo-trt": "tensorrt-llm",
    "dynamo-trtllm": "tensorrt-llm",
    "dynamo-vllm": "vllm",
    "llmd-vllm": "vllm",
    "atom": "atom",
}
"""InferenceMAX's ``framework`` values and the engine each runs (Dynamo and llm-d serve through an engine)."""

_GPUS = (
    ("gb300", "gb300"),
    ("gb200", "gb200"),
    ("b300", "b300"),
    ("b200", "b200"),
    ("h200", "h200-sxm"),
    ("h100", "h100-sxm"),
    ("mi355x", "mi355x"),
    ("mi325x", "mi325x"),
    ("mi300x", "mi300x"),
)
"""Runner names (``b200-dgxc-slurm``, ``cluster:mi355x-amds``) to GPU ids, the longest name first."""

_STATS = (("mean", "mean"), ("p50", "median"), ("p90", "p90"), ("p95", "p95"), ("p99", "p99"))
_KNOWN = re.compile(r"^(mean|median|std|min|max|p[0-9.]+)_(ttft|tpot|itl|e2el|ttlt|intvty)(_ms)?$")


PREFIXES = {
    "dsr1": "deepseek-ai/DeepSeek-R1-0528",
    "dsv4": "deepseek-ai/DeepSeek-V4-Pro",
    "qwen3.5": "Qwen/Qwen3.5-397B-A17B",
    "kimik2.5": "moonshotai/Kimi-K2.5",
    "kimik2.6": "moonshotai/Kimi-K2.6",
    "kimik3": "moonshotai/Kimi-K3",
    "glm5": "zai-org/GLM-5",
    "glm5.1": "zai-org/GLM-5.1",
    "glm5.2": "zai-org/GLM-5.2",
    "minimaxm2.5": "MiniMaxAI/MiniMax-M2.5",
    "minimaxm3": "MiniMaxAI/MiniMax-M3",
}
"""The model each sweep prefix runs (InferenceX ``configs/nvidia-master.yaml`` and ``amd-master.yaml``, commit
843c6254ff69b567f772f6a5fd97675af3d04431: ``model-prefix`` beside ``model``; the quantised checkpoints of one model
share its prefix). The ``benchmarks`` API names the model by its prefix only."""


def is_inferencemax(data: Mapping[str, Any]) -> bool:
    if isinstance(data.get("metrics"), Mapping) and ("hardware" in data or "hw" in data):
        return "conc" in data  # an API row or a together_runner baseline
    return "hw" in data and len(MARKERS & data.keys()) >= 2


def _flattened(d: Mapping[str, Any], f: Fields) -> Mapping[str, Any]:
    """An API row or a together_runner baseline as the flat result it describes."""
    metrics = d.get("metrics")
    if not isinstance(metrics, Mapping):
        return d
    flat = {k: v for k, v in d.items() if k != "metrics"}
    flat.update(metrics)
    if "hardware" in d:
        flat["hw"] = d["hardware"]
        prefix = a_string(d.get("model"))
        if prefix is not None and prefix.lower() in PREFIXES:
            flat["model"] = PREFIXES[prefix.lower()]
            f.notes.append(f"model named by the sweep's prefix {prefix!r}")
        if d.get("disagg") is True or d.get("is_multinode") is True:
            flat["is_multinode"] = True
        elif "num_decode_gpu" in d:  # one engine serves both phases: the counts are the same GPUs
            flat["num_gpus"] = flat.pop("num_decode_gpu")
            flat.pop("num_prefill_gpu", None)
            flat.setdefault("tp", d.get("decode_tp"))
            flat.setdefault("ep", d.get("decode_ep"))
        if isinstance(d.get("run_url"), str):
            f.notes.append(f"run {d['run_url']}")
        date = iso_date(d.get("date"))
        f.measured = date
    return flat


def made_no_request(data: Mapping[str, Any]) -> str | None:
    """How to name a level that sent no request at all (a sweep records a level that failed to start), or None."""
    if data.get("num_requests_total") == 0 and not data.get("num_requests_successful"):
        return f"conc {data.get('conc', data.get('users', '?'))} (no request made)"
    return None


def gpu_of(hw: str) -> str | None:
    name = hw.strip().lower().removeprefix("cluster:")
    for prefix, gpu in _GPUS:
        if name.startswith(prefix):
            return gpu
    return None


def _seconds(data: Mapping[str, Any], metric: str, run: Run, where: str = "") -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for field, prefix in _STATS:
        value = run.num(data, f"{prefix}_{metric}", f"{where}{prefix}_{metric}")
        if value is None and prefix == "median":
            value = run.num(data, f"p50_{metric}", f"{where}p50_{metric}")
        out[field] = None if value is None else value * 1000
    return out


def _nested_seconds(data: Any, run: Run, where: str) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for field, _ in _STATS:
        value = run.num(data, field, f"{where}.{field}") if isinstance(data, Mapping) else None
        out[field] = None if value is None else value * 1000
    return out


def _setup(d: Mapping[str, Any], f: Fields, run: Run) -> int | None:
    """Model, engine, precision, GPU and GPU count from the file's setup; the GPUs the run used."""
    f.set_model(d.get("model"))
    framework = a_string(d.get("framework"))
    if framework is not None:
        f.engine = _ENGINES.get(framework.lower(), framework.lower())
    image = a_string(d.get("image"))
    if image is not None:
        tag = re.search(r":v?([0-9]+(?:\.[0-9]+)*(?:\.post[0-9]+)?)", image.split("@")[0])
        f.engine_version = tag.group(1) if tag else None
        f.notes.append(f"image {image}")
    precision = a_string(d.get("precision"))
    f.precision = precision.lower() if precision else None
    hw = a_string(d.get("hw"))
    if hw is not None:
        f.gpu = gpu_of(hw)
        if f.gpu is None:
            f.notes.append(f"runner {hw!r} names no GPU this calculator knows")
    if d.get("is_multinode") is True:
        prefill, decode = run.count(d, "num_prefill_gpu"), run.count(d, "num_decode_gpu")
        if prefill is not None and decode is not None:
            f.notes.append(f"prefill/decode disaggregated: {prefill} prefill + {decode} decode GPUs")
            return prefill + decode
        return None
    gpus = run.count(d, "num_gpus")
    if gpus is None:
        tp = run.count(d, "tp")
        gpus = None if tp is None else tp * (run.count(d, "pp") or 1) * (run.count(d, "pcp_size") or 1)
    parallel = [f"{k} {d[k]}" for k in ("tp", "ep", "pp", "dp_attention", "spec_decoding") if k in d]
    offload = first_given(
        a_string(d.get("kv_offloading")), a_string(d.get("offloading")), a_string(d.get("offload_mode"))
    )
    if offload and offload not in ("none", "off"):
        f.notes.append(f"KV cache offloaded ({offload})")
    if parallel:
        f.notes.append("parallelism " + ", ".join(parallel))
    return gpus


def read_inferencemax(doc: Doc, index: int, run: Run) -> Fields:
    f = Fields(index=index, line=doc.line)
    d = _flattened(doc.data, f)
    gpus = _setup(d, f, run)
    f.gpu_count = gpus
    if "request_throughput" in d:
        _client_figures(d, f, run)
    elif d.get("scenario_type") == "agentic-coding":
        _agentic(d, f, run, gpus)
    else:
        _fixed_lengths(d, f, run, gpus)
    understood = {"request_metrics", "server_metrics", "num_requests_total", "num_requests_successful", "metrics"}
    warn_unread(f, unread_latency_keys(d, lambda k: bool(_KNOWN.match(k)) or k in understood), TOOL)
    return f


def _client_figures(d: Mapping[str, Any], f: Fields, run: Run) -> None:
    """A together_runner baseline: the client's own request rate, token rates and ``*_ms`` statistics."""
    f.concurrency = run.num(d, "conc")
    f.requests_per_s = run.num(d, "request_throughput")
    f.output_tokens_per_s = run.num(d, "output_token_throughput")
    f.total_tokens_per_s = run.num(d, "total_token_throughput")
    rate, out, total = f.requests_per_s, f.output_tokens_per_s, f.total_tokens_per_s
    if rate and out is not None and total is not None:
        f.output_tokens, f.input_tokens = out / rate, (total - out) / rate
        f.notes.append("mean lengths = the client's output and total token rates / requests/s")
        isl, osl = run.num(d, "isl"), run.num(d, "osl")
        if isl and osl:
            f.notes.append(
                f"nominal {fmt_number(isl)} in / {fmt_number(osl)} out; measured {f.input_tokens:.0f} in / "
                f"{f.output_tokens:.0f} out (requests that stop early make the output shorter)"
            )
    else:
        run.problem("metrics", "needs request_throughput, output_token_throughput and total_token_throughput")
    for target, metric in (("ttft", "ttft"), ("itl", "itl"), ("e2e", "e2el")):
        setattr(
            f,
            target,
            {"p50": run.num(d, f"median_{metric}_ms"), "p99": run.num(d, f"p99_{metric}_ms")},
        )
    f.completed = run.num(d, "successful_requests")
    f.prefix_share = 0.0
    f.notes.append("prefix share 0: InferenceMAX's fixed-length runs send random tokens that share nothing")


def _fixed_lengths(d: Mapping[str, Any], f: Fields, run: Run, gpus: int | None) -> None:
    f.concurrency = run.num(d, "conc")
    f.ttft = _seconds(d, "ttft", run)
    f.itl = _seconds(d, "itl", run)
    f.e2e = _seconds(d, "e2el", run)
    mean_e2e = f.e2e.get("mean")
    if f.concurrency and mean_e2e:
        f.requests_per_s = f.concurrency / (mean_e2e / 1000)
    else:
        run.problem(None, "needs conc and mean_e2el to work out requests/s (the file holds no request count)")
    prefill = run.count(d, "num_prefill_gpu") if "num_prefill_gpu" in d else gpus
    decode = run.count(d, "num_decode_gpu") if "num_decode_gpu" in d else gpus
    total = run.num(d, "tput_per_gpu")
    out = run.num(d, "output_tput_per_gpu")
    inp = run.num(d, "input_tput_per_gpu")
    if gpus and total is not None:
        f.total_tokens_per_s = total * gpus
    if decode and out is not None:
        f.output_tokens_per_s = out * decode
    if f.requests_per_s and f.output_tokens_per_s:
        f.output_tokens = f.output_tokens_per_s / f.requests_per_s
    if f.requests_per_s and prefill and inp is not None:
        f.input_tokens = inp * prefill / f.requests_per_s
    if f.input_tokens is None or f.output_tokens is None:
        run.problem(None, "needs tp (or the GPU counts) and the per-GPU token rates to work out the mean lengths")
        return
    f.notes.append(
        "requests/s = conc / mean_e2el (Little's law; the file holds no request count); mean lengths = per-GPU "
        "token rates x GPUs / requests/s"
    )
    isl, osl = run.num(d, "isl"), run.num(d, "osl")
    if isl and osl:
        f.notes.append(
            f"nominal {fmt_number(isl)} in / {fmt_number(osl)} out; InferenceMAX draws random lengths from "
            "0.8x to 1x the nominal ones (random_range_ratio 0.8), so the means run about 0.9x"
        )
    f.prefix_share = 0.0
    f.notes.append("prefix share 0: InferenceMAX's fixed-length runs send random tokens that share nothing")


def _agentic(d: Mapping[str, Any], f: Fields, run: Run, gpus: int | None) -> None:
    f.concurrency = first_given(run.num(d, "conc"), run.num(d, "users"))
    completed = first_given(run.num(d, "num_requests_successful"), run.num(d, "total_requests_completed"))
    metrics = d.get("request_metrics")
    if isinstance(metrics, Mapping):
        latency = metrics.get("latency")
        f.ttft = _nested_seconds(dig(latency, "ttft"), run, "request_metrics.latency.ttft")
        f.itl = _nested_seconds(dig(latency, "itl"), run, "request_metrics.latency.itl")
        f.e2e = _nested_seconds(dig(latency, "e2el"), run, "request_metrics.latency.e2el")
        duration = run.num(dig(metrics, "throughput"), "duration_seconds", "request_metrics.throughput")
        f.input_tokens = run.num(dig(metrics, "tokens", "input"), "mean", "request_metrics.tokens.input.mean")
        f.output_tokens = run.num(
            dig(metrics, "tokens", "output_actual"), "mean", "request_metrics.tokens.output_actual.mean"
        )
        f.output_tokens_per_s = run.num(dig(metrics, "throughput", "output"), "tokens_per_second", "throughput")
        f.total_tokens_per_s = run.num(dig(metrics, "throughput", "total"), "tokens_per_second", "throughput")
        hit = run.num(dig(metrics, "cache"), "theoretical_cache_hit_rate", "request_metrics.cache")
        served = run.num(dig(d, "server_metrics", "cache"), "overall_cache_hit_rate", "server_metrics.cache")
    else:
        f.ttft = _seconds(d, "ttft", run)
        f.itl = _seconds(d, "itl", run)
        ttlt = _seconds(d, "ttlt", run)
        f.e2e = ttlt if any(v is not None for v in ttlt.values()) else _seconds(d, "e2el", run)
        duration = run.num(d, "duration_seconds")
        f.input_tokens = run.num(d, "mean_input_tokens")
        f.output_tokens = run.num(d, "mean_output_tokens_actual")
        f.output_tokens_per_s = run.num(d, "output_tput_tps")
        f.total_tokens_per_s = run.num(d, "total_tput_tps")
        hit = run.num(d, "theoretical_cache_hit_rate")
        served = run.num(d, "server_gpu_cache_hit_rate")
        if f.e2e is ttlt:
            f.notes.append("end-to-end latency is the trace replay's time to last token (ttlt)")
    f.completed, f.duration_s = completed, duration
    if completed and duration:
        f.requests_per_s = completed / duration
    else:
        run.problem(None, "needs the successful request count and the run's duration to work out requests/s")
    if f.input_tokens is None or f.output_tokens is None:
        run.problem(None, "needs the mean input and output tokens of the successful requests")
    if hit is not None and 0 <= hit <= 1:
        f.prefix_share = round(hit, 4)
        f.notes.append(
            f"prefix share {hit:.1%}: the trace's own messages, the share of prompt tokens an unlimited cache "
            "serves (theoretical_cache_hit_rate)"
        )
    if served is not None:
        f.notes.append(f"the server's own prefix cache served {served:.1%} of prompt tokens")
    dataset = dig(d, "dataset", "hf_dataset_name")
    if isinstance(dataset, str):
        f.notes.append(f"trace {dataset}")
    if gpus is None:
        run.problem("tp", "needs tp (or num_gpus) to say how many GPUs served the trace")
