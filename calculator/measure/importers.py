"""Benchmark result files in, throughput records out: one record per run (load level).

Reads what the standard serving benchmarks write (field names, units and quirks are described,
with their sources, in the project's benchmark-format notes):

``vllm``        ``vllm bench serve --save-result`` (one JSON object) or ``--append-result``
                (JSON Lines); old files with the key ``"request_goodput:"``, ``"request_rate": "inf"``,
                numbers as strings and keys a wrapper script added.
``sglang``      ``python -m sglang.bench_serving --output-file`` (JSON Lines), old and new keys,
                the bare ``Infinity`` that Python's ``json`` writes for an infinite request rate.
``genai-perf``  ``profile_export_genai_perf.json``: metric -> {unit, avg, p50, ...}.
``aiperf``      ``profile_export_aiperf.json``: the same layout (or, in older versions, under
                ``records``), plus ``input_config.loadgen`` and ``input_config.endpoint``.
``guidellm``    ``benchmarks.json``: a report whose ``benchmarks[]`` each hold metric distributions.

Latencies become milliseconds whatever unit the file used. Input and output lengths are the
*measured* means (total tokens over completed requests), never the nominal settings of the run:
SGLang's ``random_range_ratio`` draws lengths below the nominal ones. What the file does not say
stays empty: GPU type, GPU count and precision only ever come from the user, so a record imported
without them is incomplete (``record.missing``) and cannot size GPUs until they are given.

A broken file fails as a whole, every problem listed as ``file:line: what is wrong``, so that a
file is never half-imported.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from calculator.catalog.datafile import DataFileError, parse_yaml
from calculator.catalog.measurements import Latency, MeasurementFile, ThroughputRecord
from calculator.catalog.prices import Source
from calculator.catalog.textfile import json_documents, read_text
from calculator.errors import InputError
from calculator.measure.consistency import mismatches

__all__ = ["FORMATS", "TOOLS", "detect_format", "import_file"]

FORMATS = ("vllm", "sglang", "genai-perf", "aiperf", "guidellm", "vllm-nightly", "records")
"""Formats :func:`detect_format` answers with."""

TOOLS = {
    "vllm": "vllm bench serve",
    "sglang": "sglang bench_serving",
    "genai-perf": "genai-perf",
    "aiperf": "aiperf",
    "guidellm": "guidellm",
    "vllm-nightly": "vllm nightly benchmarks",
    "records": "calculator records",
}
"""The tool that writes each format, as records name it in ``tool``."""

UNKNOWN_ENGINE = "unknown"
"""Engine of a record whose file does not name one and the user did not either."""

_SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_SLUG_MAX = 80

# --------------------------------------------------------------------------------------------
# Parsing with positions: every problem names its line.

PER_REQUEST_KEYS = frozenset(
    {
        "input_lens",
        "output_lens",
        "ttfts",
        "itls",
        "latencies",
        "start_times",
        "queue_times",
        "generated_texts",
        "errors",
        "requests",
        "cumulative_distribution_function",
    }
)
"""Per-request details the tools can add (vLLM ``--save-detailed``, SGLang ``--output-details``,
GuideLLM's ``requests`` and distribution curves): the bulk of a large result file and never read here,
so the reader passes over them without decoding (a 300 MB file is read in bounded memory)."""


@dataclass
class _Doc:
    """One JSON object of the file: a whole-file document or one line of JSON Lines."""

    data: Any
    line: int
    """Line the object starts on."""
    key_lines: dict[str, int] = field(default_factory=dict)
    items: dict[str, list[int]] = field(default_factory=dict)
    index: int | None = None
    """Position in the file's top-level list (a summary of several runs), if it came from one."""

    def line_of(self, key: str | None) -> int:
        """Line of a top-level member (``a.b`` finds ``a``), else of the object itself."""
        if key is None:
            return self.line
        return self.key_lines.get(key, self.key_lines.get(key.split(".")[0], self.line))

    def item_lines(self, key: str) -> list[int]:
        """Lines on which the items of the array member ``key`` start."""
        return self.items.get(key, [])


_YAML_SUFFIXES = (".yaml", ".yml")


def _yaml_doc(source: Path | str | None, name: str, text: str | None) -> _Doc | None:
    """A YAML result (GuideLLM's ``benchmarks.yaml``, the calculator's own records) when the file is YAML;
    None when it is neither JSON nor YAML of a known shape (the JSON error then stands)."""
    if text is None:
        text = read_text(Path(source or name), name)
    try:
        data = parse_yaml(text, name)
    except DataFileError:
        if name.lower().endswith(_YAML_SUFFIXES):
            raise
        return None
    if isinstance(data, dict) and (name.lower().endswith(_YAML_SUFFIXES) or data.keys() & {"benchmarks", "records"}):
        return _Doc(data, 1)
    return None


_NIGHTLY_TABLES = ("latency", "throughput", "serving")


def _table_rows(data: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The rows of vLLM's benchmark tables written column by column (``{"serving": {"Test name": {"0": ...}}}``,
    pandas' default ``to_dict``), or None when ``data`` is not that."""
    if not data or not set(data) <= set(_NIGHTLY_TABLES) or not all(isinstance(v, dict) for v in data.values()):
        return None
    rows: list[dict[str, Any]] = []
    for table in _NIGHTLY_TABLES:
        columns = data.get(table) or {}
        if columns and not all(isinstance(c, dict) for c in columns.values()):
            return None
        keys = sorted({k for c in columns.values() for k in c}, key=lambda k: int(k) if str(k).isdigit() else 0)
        rows.extend({col: values.get(k) for col, values in columns.items()} for k in keys)
    return rows


def _parse(source: Path | str | None, name: str, text: str | None = None) -> tuple[list[_Doc], list[str]]:
    """The JSON objects of a result file (one document, one per line of JSON Lines, or one per item of a
    top-level list) and the problems of the lines that are not objects; a file that is not JSON (or YAML of
    a known shape) at all raises."""
    try:
        found, problems, lines = json_documents(source or name, name, skip=PER_REQUEST_KEYS, text=text)
    except DataFileError as exc:
        found, problems, lines = [], exc.lines, False
    if not any(isinstance(doc.value, dict | list) for doc in found) and problems:
        # YAML reads as JSON Lines that are all broken (bar a stray scalar line): try it as YAML
        yaml_doc = _yaml_doc(source, name, text) if any("not valid JSON" in p for p in problems) else None
        if yaml_doc is not None:
            return [yaml_doc], []
        if not found:
            raise DataFileError(problems)
    docs: list[_Doc] = []
    for doc in found:
        rows = _table_rows(doc.value) if isinstance(doc.value, dict) and not lines else None
        if rows is not None:
            docs.extend(_Doc(row, doc.line, index=i) for i, row in enumerate(rows))
        elif isinstance(doc.value, dict):
            docs.append(_Doc(doc.value, doc.line, doc.key_lines, doc.item_lines))
        elif isinstance(doc.value, list) and not lines:
            if not any(isinstance(item, dict) for item in doc.value):
                raise DataFileError(
                    [f"{name}:{doc.line}: expected a JSON object (a benchmark result) or a list of them, got a list"]
                )
            for i, item in enumerate(doc.value):
                if isinstance(item, dict):
                    docs.append(_Doc(item, doc.line, index=i))
                else:
                    problems.append(f"{name}:{doc.line}: [{i}]: expected a JSON object (one run), got {_kind(item)}")
        elif lines:
            problems.append(f"{name}:{doc.line}: expected a JSON object (one run per line), got {_kind(doc.value)}")
        else:
            raise DataFileError(
                [f"{name}:{doc.line}: expected a JSON object (a benchmark result), got {_kind(doc.value)}"]
            )
    problems.sort(key=lambda problem: int(problem[len(name) + 1 :].split(":", 1)[0]))
    return docs, problems


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if value is None:
        return "null"
    return "an object"


# --------------------------------------------------------------------------------------------
# Format detection.

_VLLM_MARKERS = frozenset(
    {
        "request_goodput:",
        "request_goodput",
        "total_token_throughput",
        "model_id",
        "tokenizer_id",
        "num_prompts",
        "burstiness",
        "endpoint_type",
        "mean_e2el_ms",
        "median_e2el_ms",
        "max_concurrent_requests",
        "rtfx",
        "date",
        "label",
    }
)
_SGLANG_MARKERS = frozenset(
    {
        "total_output_tokens_retokenized",
        "mean_e2e_latency_ms",
        "median_e2e_latency_ms",
        "random_range_ratio",
        "sharegpt_output_len",
        "random_input_len",
        "random_output_len",
        "server_info",
        "total_throughput",
        "input_throughput",
        "dataset_name",
        "accept_length",
        "total_input_text_tokens",
    }
)
_SERVING_RESULT_KEYS = frozenset(
    {"completed", "duration", "request_throughput", "output_throughput", "total_input_tokens", "total_output_tokens"}
)
_PERF_METRICS = frozenset(
    {
        "request_throughput",
        "request_latency",
        "time_to_first_token",
        "inter_token_latency",
        "output_token_throughput",
        "output_sequence_length",
        "input_sequence_length",
        "request_count",
    }
)
_AIPERF_ONLY_TOP = frozenset(
    {"records", "was_cancelled", "error_summary", "execution_metadata", "ai_perf_v1", "telemetry_data"}
)
_AIPERF_ONLY_METRICS = frozenset(
    {
        "benchmark_duration",
        "error_request_count",
        "good_request_count",
        "total_isl",
        "total_osl",
        "inter_chunk_latency",
        "prefill_throughput",
        "output_token_count",
        "min_request_timestamp",
        "max_response_timestamp",
        "total_output_tokens",
    }
)
_GENAI_PERF_CONFIG = frozenset({"model", "service_kind", "profile_export_file", "artifact_dir", "endpoint_type"})


def _is_metric(value: Any) -> bool:
    return isinstance(value, dict) and "unit" in value and ("avg" in value or "p50" in value)


def _detect(data: dict[str, Any]) -> str | None:
    if isinstance(data.get("benchmarks"), list):
        return "guidellm"
    if "schema_version" in data and isinstance(data.get("records"), list):
        return "records"
    if _NIGHTLY_MARKERS & data.keys():
        return "vllm-nightly"
    records = data.get("records")
    metrics = records if isinstance(records, dict) else data
    if any(_is_metric(metrics.get(k)) for k in _PERF_METRICS):
        config = data.get("input_config")
        if isinstance(records, dict) or _AIPERF_ONLY_TOP & data.keys() or _AIPERF_ONLY_METRICS & metrics.keys():
            return "aiperf"
        if isinstance(config, dict):
            if isinstance(config.get("endpoint"), dict) or isinstance(config.get("loadgen"), dict):
                return "aiperf"
            if _GENAI_PERF_CONFIG & config.keys():
                return "genai-perf"
        if "telemetry_stats" in data or "sessions" in data:
            return "genai-perf"
        return "genai-perf"  # AIPerf writes this layout to mimic genai-perf; the numbers read the same
    vllm = len(_VLLM_MARKERS & data.keys()) + sum(1 for k in data if _VLLM_STAT.match(k))
    sglang = len(_SGLANG_MARKERS & data.keys()) + sum(1 for k in data if _SGLANG_STAT.match(k))
    # without any result key, only a clear signature counts: the reader then names the keys it lacks
    if vllm == sglang or (not _SERVING_RESULT_KEYS & data.keys() and max(vllm, sglang) < 3):
        return None
    return "vllm" if vllm > sglang else "sglang"


_NIGHTLY_MARKERS = frozenset({"Tput (req/s)", "Test name"})
_SERVING_NEEDS = ("completed", "duration", "request_throughput", "total_input_tokens", "total_output_tokens")
_NEEDS: dict[str, tuple[str, ...]] = {
    "vLLM bench serve or SGLang bench_serving": _SERVING_NEEDS,
    "genai-perf or AIPerf export": ("request_throughput", "input_sequence_length", "output_sequence_length"),
    "GuideLLM report": ("benchmarks",),
    "vLLM nightly summary": ("Test name", "Tput (req/s)", "Total input tokens", "Total output tokens"),
    "calculator records (Replay, bench --out)": ("schema_version", "records"),
}
"""The keys each format cannot be read without, to say what an unknown file lacks."""


def _lacks(data: dict[str, Any]) -> str:
    """For each format, the keys it needs that ``data`` does not have, the closest format first."""
    records = data.get("records")
    keys = set(data) | (set(records) if isinstance(records, dict) else set())
    lacking = sorted(
        ((fmt, [k for k in needs if k not in keys]) for fmt, needs in _NEEDS.items()),
        key=lambda item: len(item[1]) / len(_NEEDS[item[0]]),
    )
    return "; ".join(f"{fmt}: {', '.join(missing)}" for fmt, missing in lacking)


_VLLM_STAT = re.compile(r"^(mean|median|std|p[0-9.]+)_(e2el|client_queue_time|e2el_including_client_queue)_ms$")
_SGLANG_STAT = re.compile(r"^(mean|median|std|p[0-9.]+|max)_e2e_latency_ms$")


def _detect_docs(docs: list[_Doc], name: str, problems: list[str]) -> str:
    for doc in docs:
        fmt = _detect(doc.data)
        if fmt is not None:
            return fmt
    lacks = _lacks(docs[0].data) if docs else "; ".join(f"{fmt}: {', '.join(k)}" for fmt, k in _NEEDS.items())
    raise DataFileError(
        [
            *problems,
            f"{name}:{docs[0].line if docs else 1}: not a benchmark result this calculator knows; "
            f"the keys each format needs that it lacks: {lacks}",
        ]
    )


def detect_format(text: str, *, name: str = "<input>") -> str:
    """Which tool wrote ``text``: one of :data:`FORMATS`.

    Decided from the content, not the file name; a DataFileError (naming ``name``) when the
    text is not JSON or not a result format this module reads.
    """
    docs, problems = _parse(None, name, text)
    fmt = _detect_docs(docs, name, problems)
    if problems:
        raise DataFileError(problems)
    return fmt


# --------------------------------------------------------------------------------------------
# Reading values: every bad value becomes a problem line, and reading goes on.


class _Bad(ValueError):
    pass


def _number(value: Any) -> float | None:
    """A number from the file; strings such as ``"1000"`` count (old vLLM wrappers wrote those)."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise _Bad(f"expected a number, got {json.dumps(value)}")
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        text = value.strip().replace(",", "")
        if text.lower() in ("", "null", "none", "n/a", "-"):
            return None
        try:
            number = float(text)
        except ValueError:
            raise _Bad(f"expected a number, got {value!r}") from None
    else:
        raise _Bad(f"expected a number, got {_kind(value)}")
    return None if math.isnan(number) else number


@dataclass
class _Run:
    """Reading one run of a file, collecting problems with their lines."""

    name: str
    doc: _Doc
    problems: list[str]
    where: str = ""
    """Prefix naming the run inside a file that holds several in one object (``benchmarks[2]: ``)."""
    line: int | None = None
    """Line of this run when it is not the document's own line (an item of a list)."""

    def problem(self, key: str | None, message: str) -> None:
        line = self.line if self.line is not None else self.doc.line_of(key)
        label = f"{key}: " if key else ""
        self.problems.append(f"{self.name}:{line}: {self.where}{label}{message}")

    def num(self, data: Any, key: str, label: str | None = None) -> float | None:
        if not isinstance(data, Mapping):
            return None
        try:
            return _number(data.get(key))
        except _Bad as exc:
            self.problem(label or key, str(exc))
            return None

    def count(self, data: Any, key: str, label: str | None = None) -> int | None:
        value = self.num(data, key, label)
        if value is None:
            return None
        if value < 0 or not value.is_integer():
            self.problem(label or key, f"expected a whole number of requests, got {value:g}")
            return None
        return int(value)


def _finite_positive(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) and value > 0 else None


def _fmt(value: float) -> str:
    """4.0 -> '4', 2.5 -> '2.5' (for ids and notes)."""
    return f"{value:g}" if abs(value) < 1e6 else f"{value:.0f}"


def _dig(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def _first(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


def _a_string(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip()
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], str) and value[0].strip():
        return value[0].strip()
    return None


# --------------------------------------------------------------------------------------------
# What every importer produces before it becomes a record.


@dataclass
class _Fields:
    """A run as read from the file, before the user's overrides and validation."""

    index: int
    line: int
    requests_per_s: float | None = None
    input_tokens: float | None = None
    output_tokens: float | None = None
    output_tokens_per_s: float | None = None
    total_tokens_per_s: float | None = None
    concurrency: float | None = None
    request_rate: float | None = None
    rate_infinite: bool = False
    ttft: dict[str, float | None] = field(default_factory=dict)
    itl: dict[str, float | None] = field(default_factory=dict)
    e2e: dict[str, float | None] = field(default_factory=dict)
    failed: int | None = None
    completed: float | None = None
    duration_s: float | None = None
    """Requests completed and the run's length, as the file states them (for the consistency check)."""
    model: str | None = None
    engine: str | None = None
    engine_version: str | None = None
    measured: dt.date | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def load_label(self) -> str:
        parts = []
        if self.concurrency is not None:
            parts.append(f"c{_fmt(self.concurrency)}")
        if self.request_rate is not None:
            parts.append(f"rate{_fmt(self.request_rate)}")
        elif self.rate_infinite and self.concurrency is None:
            parts.append("rate-inf")
        return "-".join(parts)


# Engines named by a benchmark client's backend; generic clients (openai, openai-chat ...) name none.
_ENGINE_BY_BACKEND = {
    "vllm": "vllm",
    "vllm-chat": "vllm",
    "sglang": "sglang",
    "sglang-native": "sglang",
    "sglang-oai": "sglang",
    "sglang-oai-chat": "sglang",
    "lmdeploy": "lmdeploy",
    "lmdeploy-chat": "lmdeploy",
    "tgi": "tgi",
    "trt": "tensorrt-llm",
    "tensorrt-llm": "tensorrt-llm",
    "tensorrtllm": "tensorrt-llm",
    "trtllm": "tensorrt-llm",
    "deepspeed-mii": "deepspeed-mii",
    "scalellm": "scalellm",
    "llama.cpp": "llama.cpp",
}
_CLIENT_BACKENDS = frozenset({"openai", "openai-chat", "openai-audio", "openai-embeddings", "gserver", "truss"})


def _engine_from_backend(backend: Any, notes: list[str]) -> str | None:
    if not isinstance(backend, str) or not backend.strip():
        return None
    key = backend.strip().lower()
    if key in _ENGINE_BY_BACKEND:
        return _ENGINE_BY_BACKEND[key]
    if key in _CLIENT_BACKENDS or key.startswith("openai"):
        notes.append(f"client backend {backend!r} does not name the engine")
        return None
    return key


def _latency(values: Mapping[str, float | None], run: _Run, key: str) -> Latency:
    try:
        return Latency(**{k: v for k, v in values.items() if v is not None})
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            run.problem(key, f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}")
        return Latency()


# --------------------------------------------------------------------------------------------
# vLLM and SGLang: one flat object per run.

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


def _flat_latency(data: Mapping[str, Any], metric: str, run: _Run) -> dict[str, float | None]:
    def stat(prefix: str) -> float | None:
        return run.num(data, f"{prefix}_{metric}_ms")

    return {
        "mean": stat("mean"),
        "p50": _first(stat("median"), stat("p50")),
        "p90": stat("p90"),
        "p95": stat("p95"),
        "p99": stat("p99"),
    }


def _rate(value: Any, run: _Run, fields: _Fields) -> None:
    """``request_rate``: a number, ``inf`` (vLLM writes the string), ``Infinity``, or SGLang's ``"trace"``."""
    if value is None:
        return
    if isinstance(value, str) and value.strip().lower() in ("inf", "infinity", "+inf"):
        fields.rate_infinite = True
        return
    if isinstance(value, str) and value.strip().lower() == "trace":
        fields.notes.append("requests replayed at the trace's timestamps (no fixed rate)")
        return
    try:
        rate = _number(value)
    except _Bad as exc:
        run.problem("request_rate", str(exc))
        return
    if rate is None:
        return
    if math.isinf(rate):
        fields.rate_infinite = True
    elif rate <= 0:
        run.problem("request_rate", f"must be positive or inf, got {_fmt(rate)}")
    else:
        fields.request_rate = rate


def _flat(doc: _Doc, fmt: str, index: int, run: _Run) -> _Fields:
    d: dict[str, Any] = doc.data
    f = _Fields(index=index, line=doc.line)
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

    f.output_tokens_per_s = _first(out_tput, total_out / duration if total_out is not None and duration else None)
    total_tput = run.num(d, "total_token_throughput") if fmt == "vllm" else run.num(d, "total_throughput")
    if total_tput is None and total_in is not None and total_out is not None and duration:
        total_tput = (total_in + total_out) / duration
    f.total_tokens_per_s = total_tput

    _rate(d.get("request_rate"), run, f)
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

    f.model = _first(_a_string(d.get("model_id")), _a_string(d.get("model")))
    f.engine = _engine_from_backend(d.get("backend"), f.notes)
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
            f.model = _first(f.model, _a_string(info.get("model_path")))
            f.engine_version = _a_string(info.get("version"))
        if isinstance(d.get("dataset_name"), str):
            f.notes.append(f"dataset {d['dataset_name']}")
        ratio = run.num(d, "random_range_ratio")
        in_len, out_len = d.get("random_input_len"), d.get("random_output_len")
        if d.get("dataset_name") == "random" and ratio is not None and ratio < 1:
            f.notes.append(
                f"nominal random lengths {in_len} in / {out_len} out with random_range_ratio {_fmt(ratio)}: "
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


# --------------------------------------------------------------------------------------------
# genai-perf and AIPerf: metric -> {unit, avg, p50, ...}.

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


class _Metrics:
    def __init__(self, metrics: Mapping[str, Any], run: _Run) -> None:
        self.metrics = metrics
        self.run = run

    def _get(self, tag: str) -> Mapping[str, Any] | None:
        value = self.metrics.get(tag)
        if value is None:
            return None
        if not isinstance(value, Mapping):
            self.run.problem(tag, f"expected an object with unit and statistics, got {_kind(value)}")
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


def _iso_date(value: Any) -> dt.date | None:
    if not isinstance(value, str):
        return None
    try:
        return dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00")).date()
    except ValueError:
        return None


def _profiling_phase(config: Mapping[str, Any], f: _Fields) -> Mapping[str, Any]:
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


def _perf_export(doc: _Doc, fmt: str, run: _Run) -> _Fields:
    d: dict[str, Any] = doc.data
    f = _Fields(index=1, line=doc.line)
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
    errors = m.stat("error_request_count")
    if errors is not None:
        f.failed = int(errors) if errors >= 0 and errors.is_integer() else None

    raw_config = d.get("input_config")
    config: dict[str, Any] = raw_config if isinstance(raw_config, dict) else {}
    phase = _profiling_phase(config, f)
    f.concurrency = run.num(
        {
            "c": _first(
                config.get("concurrency"),
                _dig(config, "loadgen", "concurrency"),
                _dig(config, "perf_analyzer", "stimulus", "concurrency"),
                phase.get("concurrency"),
            )
        },
        "c",
        "input_config.phases[].concurrency" if "concurrency" in phase else "input_config.concurrency",
    )
    _rate(
        _first(
            config.get("request_rate"),
            _dig(config, "loadgen", "request_rate"),
            _dig(config, "perf_analyzer", "stimulus", "request_rate"),
            phase.get("rate"),
            phase.get("request_rate"),
        ),
        run,
        f,
    )
    items = _dig(config, "models", "items")
    named = [m.get("name") for m in items if isinstance(m, dict)] if isinstance(items, list) else None
    models = _first(
        config.get("model"), config.get("model_names"), _dig(config, "endpoint", "model_names"), named or None
    )
    f.model = _a_string(models)
    if f.model is None and isinstance(models, list) and len(models) > 1:
        f.notes.append(f"several models benchmarked together: {', '.join(map(str, models))}")
    if str(config.get("service_kind", "")).lower() == "triton":
        f.engine = _engine_from_backend(config.get("backend"), f.notes)
    f.measured = _iso_date(_first(d.get("start_time"), _dig(d, "execution_metadata", "start_time")))
    if isinstance(d.get("aiperf_version"), str):
        f.notes.append(f"aiperf {d['aiperf_version']}")

    gpus = []
    for endpoint in (_dig(d, "telemetry_data", "endpoints") or {}).values():
        for gpu in (_dig(endpoint, "gpus") or {}).values():
            if isinstance(gpu, dict) and isinstance(gpu.get("gpu_name"), str):
                gpus.append(gpu["gpu_name"])
    if gpus:
        names = sorted(set(gpus))
        f.notes.append(
            f"GPU telemetry saw {len(gpus)} GPU(s): {', '.join(names)} "
            "(not used as the record's GPU; say which GPU ran it)"
        )
    return f


# --------------------------------------------------------------------------------------------
# GuideLLM: benchmarks[] with metric distributions per request status.


def _distribution(metrics: Any, key: str, status: str = "successful") -> Mapping[str, Any] | None:
    value = _dig(metrics, key)
    if not isinstance(value, Mapping):
        return None
    summary = value.get(status) if status in value else value
    return summary if isinstance(summary, Mapping) else None


def _guidellm_strategy(bench: Mapping[str, Any], f: _Fields, run: _Run) -> None:
    strategy = _first(
        _dig(bench, "config", "strategy"),
        _dig(bench, "args", "strategy"),
        _dig(bench, "scheduler", "strategy"),
        _dig(bench, "strategy"),
    )
    if not isinstance(strategy, Mapping):
        return
    kind = str(_first(strategy.get("type_"), strategy.get("type"), "")).lower()
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


def _guidellm(doc: _Doc, run_for: Callable[[int, int | None], _Run]) -> list[_Fields]:
    report: dict[str, Any] = doc.data
    benchmarks = report["benchmarks"]
    lines = doc.item_lines("benchmarks")
    if not benchmarks:
        run_for(0, None).problem("benchmarks", "the report holds no benchmark")
        return []
    model = _first(
        _a_string(_dig(report, "config", "model")),
        _a_string(_dig(report, "config", "spec", "backend", "model")),
        _a_string(_dig(report, "args", "model")),
    )
    out = []
    for i, bench in enumerate(benchmarks, start=1):
        line = lines[i - 1] if i - 1 < len(lines) else None
        run = run_for(i, line)
        f = _Fields(index=i, line=line if line is not None else doc.line)
        if not isinstance(bench, Mapping):
            run.problem(None, f"expected a benchmark object, got {_kind(bench)}")
            continue
        metrics = bench.get("metrics")
        if not isinstance(metrics, Mapping):
            run.problem("metrics", "the benchmark has no metrics")
            continue

        def mean(key: str, summary_key: str = "mean", *, run: _Run = run, metrics: Any = metrics) -> float | None:
            summary = _distribution(metrics, key)
            return run.num(summary, summary_key, f"metrics.{key}.successful.{summary_key}") if summary else None

        def latency(
            key: str, factor: float = 1.0, *, run: _Run = run, metrics: Any = metrics
        ) -> dict[str, float | None]:
            summary = _distribution(metrics, key)
            if summary is None:
                return {}
            pct = summary.get("percentiles") if isinstance(summary.get("percentiles"), Mapping) else {}
            label = f"metrics.{key}.successful"
            values = {
                "mean": run.num(summary, "mean", f"{label}.mean"),
                "p50": _first(run.num(pct, "p50", f"{label}.percentiles.p50"), run.num(summary, "median")),
                "p90": run.num(pct, "p90", f"{label}.percentiles.p90"),
                "p95": run.num(pct, "p95", f"{label}.percentiles.p95"),
                "p99": run.num(pct, "p99", f"{label}.percentiles.p99"),
            }
            return {k: v * factor if v is not None else None for k, v in values.items()}

        totals = _first(
            _dig(metrics, "request_totals"),
            _dig(bench, "request_totals"),
            _dig(bench, "scheduler_metrics", "requests_made"),
        )
        completed = run.num(totals, "successful", "request_totals.successful")
        f.failed = run.count(totals, "errored", "request_totals.errored")
        duration = run.num(bench, "duration")
        if duration is None:
            times = bench if "start_time" in bench else _dig(bench, "run_stats")
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
        _guidellm_strategy(bench, f, run)
        f.model = _first(
            model,
            _a_string(_dig(bench, "config", "backend", "model")),
            _a_string(_dig(bench, "worker", "backend_model")),  # GuideLLM 0.2 and 0.3
        )
        start_time = run.num(bench, "start_time")
        if start_time is not None and start_time > 0:
            f.measured = dt.datetime.fromtimestamp(start_time, tz=dt.UTC).date()
        out.append(f)
    version = _dig(report, "metadata", "guidellm_version")
    if isinstance(version, str):
        for f in out:
            f.notes.append(f"guidellm {version}")
    return out


# --------------------------------------------------------------------------------------------
# vLLM's nightly benchmark summary: rows with the columns renamed for its markdown tables.

_NIGHTLY_RATE = re.compile(r"qps_([0-9]+(?:\.[0-9]+)?|inf)\b", re.IGNORECASE)
_NIGHTLY_LATENCY = {
    "ttft": ("Mean TTFT (ms)", "Median TTFT (ms)", "P99 TTFT (ms)"),
    "itl": ("Mean ITL (ms)", "Median ITL (ms)", "P99 ITL (ms)"),
}


def _nightly_kind(row: Mapping[str, Any]) -> str:
    """'serving', or the offline test a row holds ('latency', 'throughput'): those have no serving shape."""
    name = str(row.get("Test name") or "")
    if "Tput (req/s)" not in row or name.startswith("latency"):
        return "latency"
    if name.startswith("throughput") or not any(k in row for k in _NIGHTLY_LATENCY["ttft"]):
        return "throughput"
    return "serving"


def _nightly(doc: _Doc, index: int, run: _Run) -> _Fields:
    row: dict[str, Any] = doc.data
    f = _Fields(index=index, line=doc.line)
    done = _first(run.num(row, "Successful req."), run.num(row, "# of req."))
    rps = run.num(row, "Tput (req/s)")
    out_tput = run.num(row, "Output Tput (tok/s)")
    total_tput = _first(run.num(row, "Total Token Tput (tok/s)"), run.num(row, "Total Tput (tok/s)"))
    total_in, total_out = run.num(row, "Total input tokens"), run.num(row, "Total output tokens")
    if rps is None or rps <= 0:
        run.problem("Tput (req/s)", "missing or not positive: no request throughput to read")
    else:
        f.requests_per_s = rps
    if done and total_in is not None:
        f.input_tokens = total_in / done
    elif rps and total_tput is not None and out_tput is not None:
        f.input_tokens = (total_tput - out_tput) / rps
        f.notes.append("input_tokens = (total - output token throughput) / request throughput")
    elif rps:
        run.problem(
            None,
            "no mean input length: needs 'Total input tokens' and 'Successful req.' "
            "(or 'Total Tput (tok/s)' and 'Output Tput (tok/s)')",
        )
    if done and total_out is not None:
        f.output_tokens = total_out / done
    elif rps and out_tput is not None:
        f.output_tokens = out_tput / rps
        f.notes.append("output_tokens = output token throughput / request throughput")
    elif rps:
        run.problem(
            None, "no mean output length: needs 'Total output tokens' and 'Successful req.' (or 'Output Tput (tok/s)')"
        )
    f.output_tokens_per_s, f.total_tokens_per_s, f.completed = out_tput, total_tput, done
    for metric, (mean, median, p99) in _NIGHTLY_LATENCY.items():
        values = {"mean": run.num(row, mean), "p50": run.num(row, median), "p99": run.num(row, p99)}
        setattr(f, metric, values)
    name = row.get("Test name")
    if isinstance(name, str):
        f.notes.append(f"test {name}")
        rate = _NIGHTLY_RATE.search(name)
        if rate:
            _rate(rate.group(1), run, f)
    f.engine = _engine_from_backend(row.get("Engine"), f.notes) if row.get("Engine") else None
    if row.get("GPU"):
        f.notes.append(f"GPU column {row['GPU']!r} (not used as the record's GPU; say which GPU ran it)")
    return f


# --------------------------------------------------------------------------------------------
# The calculator's own records (Replay's download, ``bench --out``).


def _own_records(doc: _Doc, name: str, overrides: Mapping[str, Any]) -> list[ThroughputRecord]:
    try:
        document = MeasurementFile.model_validate(doc.data)
    except ValidationError as exc:
        raise DataFileError(
            [f"{name}: {'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors(include_url=False)]
        ) from None
    given = {k: v for k, v in overrides.items() if v is not None}
    if not given:
        return list(document.records)
    try:
        return [ThroughputRecord.model_validate({**r.model_dump(), **given}) for r in document.records]
    except ValidationError as exc:
        raise DataFileError(
            [f"{name}: {'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors(include_url=False)]
        ) from None


# --------------------------------------------------------------------------------------------
# The public entry point.


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9._-]+", "-", text.lower())
    slug = re.sub(r"-{2,}", "-", slug).strip("-._")
    return slug or "import"


_GENERIC_STEMS = frozenset(
    {"profile_export_aiperf", "profile_export_genai_perf", "profile_export", "benchmarks", "results", "result"}
)


def _id_stem(display: str, path: Path | None) -> str:
    stem = Path(display).stem
    if stem.lower() in _GENERIC_STEMS and path is not None and path.parent.name:
        stem = f"{path.parent.name}-{stem}"
    return _slug(stem)


def _record_id(stem: str, f: _Fields) -> str:
    suffix = f"-{f.index}" + (f"-{f.load_label}" if f.load_label else "")
    return f"{stem[: _SLUG_MAX - len(suffix)].rstrip('-._') or 'import'}{suffix}"


def _check_user(
    gpu: str | None, gpu_count: int | None, precision: str | None, model: str | None, engine: str | None
) -> tuple[str | None, str | None]:
    if gpu is not None:
        gpu = gpu.strip().lower()
        if not _SLUG.match(gpu) or len(gpu) > _SLUG_MAX:
            raise InputError(
                "measurement.gpu", f"{gpu!r} is not a GPU id (lower-case letters, digits, '-', such as h100-sxm)"
            )
    if gpu_count is not None and (isinstance(gpu_count, bool) or not isinstance(gpu_count, int) or gpu_count < 1):
        raise InputError("measurement.gpu_count", f"must be a whole number of GPUs, at least 1; got {gpu_count!r}")
    if precision is not None:
        precision = precision.strip().lower()
        if not precision:
            raise InputError("measurement.precision", "must not be empty (bf16, fp16, fp8, int4, fp4)")
    for label, value in (("measurement.model", model), ("measurement.engine", engine)):
        if value is not None and not value.strip():
            raise InputError(label, "must not be empty")
    return gpu, precision


def import_file(
    path: Path | str,
    *,
    model: str | None = None,
    gpu: str | None = None,
    gpu_count: int | None = None,
    precision: str | None = None,
    engine: str | None = None,
    engine_version: str | None = None,
    text: str | None = None,
    name: str | None = None,
) -> list[ThroughputRecord]:
    """Read a benchmark result file into one throughput record per run, in file order.

    ``text`` is the file's content when it did not come from disk (an upload); ``name`` is the
    name to show (default: the path). The format is detected from the content.
    ``model``, ``gpu``, ``gpu_count``, ``precision``, ``engine`` and ``engine_version`` are what
    the user says about the setup: they override the file. The model may come from the file when
    it states it; GPU type, GPU count and precision never do, and stay empty (the record is then
    incomplete) unless given here. Raises DataFileError listing every problem of the file, or
    InputError for a bad user value.
    """
    user_gpu, user_precision = _check_user(gpu, gpu_count, precision, model, engine)
    file_path = Path(path)
    display = name or str(path)
    source_path: Path | None = file_path if text is None or not name else None
    docs, problems = _parse(file_path, display, text)
    fmt = _detect_docs(docs, display, problems)
    tool = TOOLS[fmt]

    if fmt == "records":
        if len(docs) > 1:
            raise DataFileError([f"{display}:{docs[1].line}: a records file holds one document, found more"])
        overrides = {
            "model": model.strip() if model else None,
            "gpu": user_gpu,
            "gpu_count": gpu_count,
            "precision": user_precision,
            "engine": engine.strip() if engine else None,
            "engine_version": engine_version,
        }
        return _own_records(docs[0], display, overrides)

    runs: list[tuple[_Fields, _Run]] = []
    skipped: list[str] = []
    if fmt == "guidellm":
        made: dict[int, _Run] = {}

        def run_for(i: int, line: int | None) -> _Run:
            made[i] = _Run(display, docs[0], problems, where=f"benchmarks[{i - 1}]: " if i else "", line=line)
            return made[i]

        for f in _guidellm(docs[0], run_for):
            runs.append((f, made[f.index]))
    elif fmt in ("genai-perf", "aiperf"):
        if len(docs) > 1:
            raise DataFileError([f"{display}:{docs[1].line}: a {tool} export holds one JSON object, found more"])
        run = _Run(display, docs[0], problems)
        runs.append((_perf_export(docs[0], fmt, run), run))
    else:
        for i, doc in enumerate(docs, start=1):
            run = _Run(display, doc, problems, where=f"[{doc.index}]: " if doc.index is not None else "")
            detected = _detect(doc.data)
            if detected is not None and detected != fmt:
                run.problem(None, f"this run looks like {TOOLS[detected]} output, the file's first like {tool}")
                continue
            if fmt == "vllm-nightly":
                kind = _nightly_kind(doc.data)
                if kind != "serving":
                    skipped.append(f"{doc.data.get('Test name') or f'[{doc.index}]'} ({kind})")
                    continue
                runs.append((_nightly(doc, i, run), run))
            else:
                runs.append((_flat(doc, fmt, i, run), run))
        if fmt == "vllm-nightly" and not runs and not problems:
            raise DataFileError([f"{display}:{docs[0].line}: the summary holds no serving test, only offline tests"])

    document = Path(name).name if name else file_path.name
    stem = _id_stem(document, source_path)
    today = dt.date.today()
    records: list[ThroughputRecord] = []
    for f, run in runs:
        where = f"{run.where}line {f.line}" if not run.where else f"{run.where.rstrip(': ')} (line {f.line})"
        notes = list(f.notes)
        if skipped:
            notes.append(f"offline tests in the summary not read (no serving shape): {', '.join(skipped)}")
        if f.engine is None and engine is None:
            notes.append("engine not stated in the file; say which engine ran it")
        fields: dict[str, Any] = {
            "id": _record_id(stem, f),
            "model": model.strip() if model else f.model,
            "precision": user_precision,
            "gpu": user_gpu,
            "gpu_count": gpu_count,
            "engine": (engine.strip() if engine else None) or f.engine or UNKNOWN_ENGINE,
            "engine_version": engine_version or f.engine_version,
            "tool": tool,
            "input_tokens": f.input_tokens,
            "output_tokens": f.output_tokens,
            "concurrency": f.concurrency,
            "request_rate": _finite_positive(f.request_rate),
            "requests_per_s": f.requests_per_s,
            "output_tokens_per_s": _finite_positive(f.output_tokens_per_s),
            "total_tokens_per_s": _finite_positive(f.total_tokens_per_s),
            "ttft_ms": _latency(f.ttft, run, "ttft"),
            "itl_ms": _latency(f.itl, run, "itl"),
            "e2e_ms": _latency(f.e2e, run, "e2e latency"),
            "failed": f.failed,
            "measured": f.measured,
            "source": Source(document=document, read=today, note=f"{tool} result, {where}"),
            "notes": "; ".join(notes) or None,
            "mismatches": tuple(
                mismatches(
                    requests_per_s=f.requests_per_s,
                    output_tokens=f.output_tokens,
                    output_tokens_per_s=f.output_tokens_per_s,
                    completed=f.completed,
                    duration_s=f.duration_s,
                )
            )
            or None,
        }
        if any(v is None for v in (f.requests_per_s, f.input_tokens, f.output_tokens)):
            continue  # already reported
        try:
            records.append(ThroughputRecord(**fields))
        except ValidationError as exc:
            for err in exc.errors(include_url=False):
                run.problem(".".join(str(p) for p in err["loc"]), err["msg"])
    if problems:
        raise DataFileError(problems)
    return records
