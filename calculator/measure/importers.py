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
                ``records``), plus ``input_config.loadgen`` and ``input_config.endpoint`` (0.8) or
                ``input_config.phases[]`` and ``input_config.models.items[]`` (0.9 and later).
``guidellm``    ``benchmarks.json`` or ``.yaml``: a report whose ``benchmarks[]`` each hold metric
                distributions (0.2 to 0.8; the model in ``worker.backend_model`` up to 0.3).
``vllm-nightly``  vLLM's nightly benchmark summary: a JSON list of rows with renamed columns
                (``Tput (req/s)``, ``Total input tokens`` ...), or its tables column by column.
``inferencemax``  InferenceMAX / InferenceX results (SemiAnalysis' public sweeps): a run's ``agg_*.json``, a
                sweep's collected array of them, a flat or nested agentic (trace replay) result; the
                setup (GPU, count, precision, engine) stated, latencies in seconds.
``llmperf``     ray-project/llmperf ``*_summary.json``; ``llmperf-requests``: its
                ``*_individual_responses.json``, read with the summary beside it.
``records``     the calculator's own records (``schema_version`` and ``records``), as Replay and
                ``bench --out`` write them.

A JSON list of results reads as JSON Lines would.

Latencies become milliseconds whatever unit the file used (the key's suffix, the file's own units, or
the tool's convention). Input and output lengths are the *measured* means (total tokens over completed
requests), never the nominal settings of the run: SGLang's ``random_range_ratio`` draws lengths below the
nominal ones. What the file does not say stays empty: GPU type, GPU count and precision come from the
user (or from the few files that state them, InferenceMAX's), so a record imported without them is
incomplete (``record.missing``) and cannot size GPUs until they are given. A latency-like key no reader
understands is named in the record's warnings and makes it incomplete too. The prefix share comes from the
run's own settings where the file states them (:mod:`calculator.measure.formats.prefix`), else from the
user, else it stays unknown (never 0). A model path is reduced to the model's name and kept whole in
``model_path``.

A broken file fails as a whole, every problem listed as ``file:line: what is wrong``, so that a
file is never half-imported. Each format's reader is in :mod:`calculator.measure.formats`; this module
detects the format, applies what the user says about the setup, checks the file's figures against each
other (:mod:`calculator.measure.consistency`) and makes the records.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from calculator.catalog.datafile import DataFileError, parse_yaml
from calculator.catalog.measurements import ThroughputRecord
from calculator.catalog.prices import Source
from calculator.catalog.textfile import json_documents, read_text
from calculator.errors import InputError
from calculator.measure.consistency import mismatches
from calculator.measure.formats.flat import read_flat
from calculator.measure.formats.guidellm import read_guidellm
from calculator.measure.formats.inferencemax import is_inferencemax, made_no_request, read_inferencemax
from calculator.measure.formats.llmperf import is_request, is_summary, read_requests, read_summary
from calculator.measure.formats.nightly import nightly_kind, read_nightly
from calculator.measure.formats.perf import read_perf_export
from calculator.measure.formats.reading import Doc, Fields, Run, finite_positive, kind_of, to_latency
from calculator.measure.formats.records import own_records

__all__ = ["FORMATS", "TOOLS", "detect_format", "import_file"]

FORMATS = (
    "vllm",
    "sglang",
    "genai-perf",
    "aiperf",
    "guidellm",
    "vllm-nightly",
    "inferencemax",
    "llmperf",
    "llmperf-requests",
    "records",
)
"""Formats :func:`detect_format` answers with."""

TOOLS = {
    "vllm": "vllm bench serve",
    "sglang": "sglang bench_serving",
    "genai-perf": "genai-perf",
    "aiperf": "aiperf",
    "guidellm": "guidellm",
    "vllm-nightly": "vllm nightly benchmarks",
    "inferencemax": "InferenceMAX",
    "llmperf": "llmperf",
    "llmperf-requests": "llmperf",
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


_YAML_SUFFIXES = (".yaml", ".yml")


def _yaml_doc(source: Path | str | None, name: str, text: str | None) -> Doc | None:
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
        return Doc(data, 1)
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
        keys = sorted({k for c in columns.values() for k in c}, key=lambda k: int(k) if _row_number(k) else 0)
        rows.extend({col: values.get(k) for col, values in columns.items()} for k in keys)
    return rows


def _row_number(key: Any) -> bool:
    """Whether a column table's key reads as a row number: ASCII digits ('²' is a digit to isdigit() only),
    at most 18 of them (int() refuses 4,300)."""
    text = str(key)
    return text.isascii() and text.isdigit() and len(text) <= 18


def _parse(source: Path | str | None, name: str, text: str | None = None) -> tuple[list[Doc], list[str]]:
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
    docs: list[Doc] = []
    for doc in found:
        rows = _table_rows(doc.value) if isinstance(doc.value, dict) and not lines else None
        if rows is not None:
            docs.extend(Doc(row, doc.line, index=i) for i, row in enumerate(rows))
        elif isinstance(doc.value, dict):
            docs.append(Doc(doc.value, doc.line, doc.key_lines, doc.item_lines))
        elif isinstance(doc.value, list) and not lines:
            if not any(isinstance(item, dict) for item in doc.value):
                raise DataFileError(
                    [f"{name}:{doc.line}: expected a JSON object (a benchmark result) or a list of them, got a list"]
                )
            for i, item in enumerate(doc.value):
                if isinstance(item, dict):
                    docs.append(Doc(item, doc.line, index=i))
                else:
                    problems.append(f"{name}:{doc.line}: [{i}]: expected a JSON object (one run), got {kind_of(item)}")
        elif lines:
            problems.append(f"{name}:{doc.line}: expected a JSON object (one run per line), got {kind_of(doc.value)}")
        else:
            raise DataFileError(
                [f"{name}:{doc.line}: expected a JSON object (a benchmark result), got {kind_of(doc.value)}"]
            )
    problems.sort(key=lambda problem: int(problem[len(name) + 1 :].split(":", 1)[0]))
    return docs, problems


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
_GENAI_PERF_NESTED_CONFIG = frozenset({"perf_analyzer", "subcommand", "template_filename"})
"""genai-perf 25.x nests its settings as AIPerf does (``input_config.endpoint``), but only genai-perf drives
perf_analyzer (``input_config.perf_analyzer.stimulus``) and records its subcommand."""


def _is_metric(value: Any) -> bool:
    return isinstance(value, dict) and "unit" in value and ("avg" in value or "p50" in value)


def _detect(data: dict[str, Any]) -> str | None:
    if is_inferencemax(data):
        return "inferencemax"
    if is_summary(data):
        return "llmperf"
    if is_request(data):
        return "llmperf-requests"
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
            if _GENAI_PERF_NESTED_CONFIG & config.keys():
                return "genai-perf"
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
    "InferenceMAX result": ("hw", "conc", "tput_per_gpu", "output_tput_per_gpu", "infmax_model_prefix"),
    "llmperf summary": ("num_concurrent_requests", "results_number_output_tokens_mean"),
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


def _detect_docs(docs: list[Doc], name: str, problems: list[str]) -> str:
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


def _record_id(stem: str, f: Fields) -> str:
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
    prefix_share: float | None = None,
    text: str | None = None,
    name: str | None = None,
) -> list[ThroughputRecord]:
    """Read a benchmark result file into one throughput record per run, in file order.

    ``text`` is the file's content when it did not come from disk (an upload); ``name`` is the
    name to show (default: the path). The format is detected from the content.
    ``model``, ``gpu``, ``gpu_count``, ``precision``, ``engine`` and ``engine_version`` are what the user
    says about the setup: they override the file. The model may come
    from the file when it states it; GPU type, GPU count and precision only from the files that state
    them (InferenceMAX's), and stay empty otherwise (the record is then incomplete) unless given here. The
    prefix share comes from the run's settings where the file states them, else from ``prefix_share`` (which
    never replaces what the run states), else it stays unknown. Raises DataFileError listing every problem
    of the file, or InputError for a bad user value.
    """
    user_gpu, user_precision = _check_user(gpu, gpu_count, precision, model, engine)
    if prefix_share is not None and (
        isinstance(prefix_share, bool) or not isinstance(prefix_share, int | float) or not 0 <= prefix_share <= 1
    ):
        raise InputError(
            "measurement.prefix_share",
            f"must be a share of the input tokens from 0 to 1 (0.8 is 80% repeated); got {prefix_share!r}",
        )
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
            "prefix_share": prefix_share,
        }
        return own_records(docs[0], display, overrides)

    runs: list[tuple[Fields, Run]] = []
    skipped: list[str] = []
    if fmt == "guidellm":
        made: dict[int, Run] = {}

        def run_for(i: int, line: int | None) -> Run:
            made[i] = Run(display, docs[0], problems, where=f"benchmarks[{i - 1}]: " if i else "", line=line)
            return made[i]

        for f in read_guidellm(docs[0], run_for):
            runs.append((f, made[f.index]))
    elif fmt == "llmperf-requests":
        run = Run(display, docs[0], problems)
        runs.append((read_requests(docs, display, source_path or (file_path if text is None else None), run), run))
    elif fmt in ("genai-perf", "aiperf"):
        if len(docs) > 1:
            raise DataFileError([f"{display}:{docs[1].line}: a {tool} export holds one JSON object, found more"])
        run = Run(display, docs[0], problems)
        runs.append((read_perf_export(docs[0], fmt, run), run))
    else:
        for i, doc in enumerate(docs, start=1):
            run = Run(display, doc, problems, where=f"[{doc.index}]: " if doc.index is not None else "")
            detected = _detect(doc.data)
            if detected is not None and detected != fmt:
                run.problem(None, f"this run looks like {TOOLS[detected]} output, the file's first like {tool}")
                continue
            if fmt == "inferencemax":
                empty = made_no_request(doc.data)
                if empty is not None:
                    skipped.append(empty)
                    continue
                runs.append((read_inferencemax(doc, i, run), run))
                continue
            if fmt == "llmperf":
                runs.append((read_summary(doc, i, run), run))
                continue
            if fmt == "vllm-nightly":
                kind = nightly_kind(doc.data)
                if kind != "serving":
                    skipped.append(f"{doc.data.get('Test name') or f'[{doc.index}]'} ({kind})")
                    continue
                runs.append((read_nightly(doc, i, run), run))
            else:
                runs.append((read_flat(doc, fmt, i, run), run))
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
            what = "levels of the sweep not read" if fmt == "inferencemax" else "offline tests in the summary not read"
            why = "" if fmt == "inferencemax" else " (no serving shape)"
            notes.append(f"{what}{why}: {', '.join(skipped)}")
        if f.engine is None and engine is None:
            notes.append("engine not stated in the file; say which engine ran it")
        share = f.prefix_share
        if prefix_share is not None and share is None:
            share = float(prefix_share)
            notes.append(f"prefix share {share:.1%} as given (the file does not say)")
        elif prefix_share is not None and share is not None and abs(share - prefix_share) > 0.0005:
            notes.append(f"prefix share {prefix_share:.1%} given, not used: the run's own settings say {share:.1%}")
        elif share is None and not any(n.startswith("prefix share unknown") for n in notes):
            notes.append("prefix share unknown: the file does not say; give it (--prefix-share) to size from it")
        fields: dict[str, Any] = {
            "id": _record_id(stem, f),
            "model": model.strip() if model else f.model,
            "model_path": None if model else f.model_path,
            "precision": user_precision or f.precision,
            "gpu": user_gpu or f.gpu,
            "gpu_count": gpu_count or f.gpu_count,
            "prefix_share": share,
            "warnings": tuple(f.warnings) or None,
            "unread_latency": tuple(f.unread_latency) or None,
            "engine": (engine.strip() if engine else None) or f.engine or UNKNOWN_ENGINE,
            "engine_version": engine_version or f.engine_version,
            "tool": tool,
            "input_tokens": f.input_tokens,
            "output_tokens": f.output_tokens,
            "concurrency": f.concurrency,
            "request_rate": finite_positive(f.request_rate),
            "requests_per_s": f.requests_per_s,
            "output_tokens_per_s": finite_positive(f.output_tokens_per_s),
            "total_tokens_per_s": finite_positive(f.total_tokens_per_s),
            "ttft_ms": to_latency(f.ttft, run, "ttft"),
            "itl_ms": to_latency(f.itl, run, "itl"),
            "e2e_ms": to_latency(f.e2e, run, "e2e latency"),
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
