"""Every version of every benchmark tool, read figure for figure from files the tools wrote themselves.

Each expected figure is read here straight from the raw file (json / yaml), never from the importer, so a
test fails when the importer reads the wrong key, unit or statistic. tests/fixtures/README.md names how
each file was written and where it comes from.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calculator.catalog.datafile import DataFileError
from calculator.catalog.measurements import ThroughputRecord
from calculator.measure.bench import write_records
from calculator.measure.consistency import TOLERANCE
from calculator.measure.importers import detect_format, import_file

BENCH = Path(__file__).resolve().parent / "fixtures" / "bench"
AIPERF = BENCH / "aiperf"
GUIDELLM = BENCH / "guidellm"
VLLM_L40S = BENCH / "vllm" / "results_l40s_llama32_3b.jsonl"
VLLM_NIGHTLY = BENCH / "vllm" / "l40s_llama32_3b_vllm_nightly_results.json"
SGLANG = BENCH / "sglang" / "h200_llama_3_3_70b_online_output.jsonl"


def _problems(path: Path | str, **kwargs: Any) -> list[str]:
    with pytest.raises(DataFileError) as info:
        import_file(path, **kwargs)
    return info.value.lines


# --------------------------------------------------------------------------------------------
# AIPerf 0.8 (schema 1.1) to 0.13 (schema 1.4).


def _aiperf_load(config: dict[str, Any]) -> tuple[float | None, float | None]:
    """(concurrency, request rate) wherever the version put them: loadgen (0.8) or the profiling phase (0.9+)."""
    if "loadgen" in config:
        return config["loadgen"].get("concurrency"), config["loadgen"].get("request_rate")
    [phase] = [p for p in config["phases"] if p.get("kind", p["name"]) == "profiling"]
    return phase.get("concurrency"), phase.get("rate")


@pytest.mark.parametrize(
    ("name", "version", "concurrency", "rate"),
    [
        ("aiperf-0.8.0_rate20_profile_export_aiperf.json", "0.8.0", None, 20.0),
        ("aiperf-0.9.0_rate20_profile_export_aiperf.json", "0.9.0", None, 20.0),
        ("aiperf-0.10.0_rate20_profile_export_aiperf.json", "0.10.0", None, 20.0),
        ("aiperf-0.10.0_c4_profile_export_aiperf.json", "0.10.0", 4, None),
        ("aiperf-0.13.0_c4_profile_export_aiperf.json", "0.13.0", 4, None),
    ],
)
def test_aiperf_export_of_each_version_reads_its_own_figures(
    name: str, version: str, concurrency: int | None, rate: float | None
) -> None:
    path = AIPERF / name
    raw = json.loads(path.read_text())
    assert raw["aiperf_version"] == version
    assert _aiperf_load(raw["input_config"]) == (concurrency, rate)  # what the run was told, as the file says it
    assert detect_format(path.read_text()) == "aiperf"
    [record] = import_file(path)
    assert (record.concurrency, record.request_rate) == (concurrency, rate)
    assert record.model == "test-model" and record.tool == "aiperf"
    assert record.requests_per_s == raw["request_throughput"]["avg"]
    assert raw["request_throughput"]["unit"] == "requests/sec"
    assert record.input_tokens == raw["input_sequence_length"]["avg"]
    assert record.output_tokens == raw["output_sequence_length"]["avg"]
    assert record.output_tokens_per_s == raw["output_token_throughput"]["avg"]
    ttft, itl, e2e = raw["time_to_first_token"], raw["inter_token_latency"], raw["request_latency"]
    assert ttft["unit"] == itl["unit"] == e2e["unit"] == "ms"
    assert record.ttft_ms.model_dump() == {k: ttft[k if k != "mean" else "avg"] for k in record.ttft_ms.model_dump()}
    assert record.itl_ms.p99 == itl["p99"] and record.e2e_ms.p90 == e2e["p90"]
    assert record.mismatches is None  # AIPerf's figures agree with each other
    assert record.missing == ["precision", "gpu", "gpu_count"]


def test_aiperf_requests_per_s_agrees_with_its_request_count_over_its_duration() -> None:
    raw = json.loads((AIPERF / "aiperf-0.13.0_c4_profile_export_aiperf.json").read_text())
    counted = raw["request_count"]["avg"] / raw["benchmark_duration"]["avg"]
    assert raw["benchmark_duration"]["unit"] == "sec"
    assert raw["request_throughput"]["avg"] == pytest.approx(counted, rel=TOLERANCE)


# --------------------------------------------------------------------------------------------
# GuideLLM 0.2 to 0.8, JSON and YAML.


def _guidellm_model(report: dict[str, Any], bench: dict[str, Any]) -> str:
    spec = report.get("config", {}).get("spec", {}).get("backend", {}).get("model")  # 0.8
    return str(spec or report.get("args", {}).get("model") or bench["worker"]["backend_model"])  # 0.4-0.5, 0.2-0.3


def _guidellm_load(bench: dict[str, Any]) -> tuple[float | None, float | None]:
    strategy = (bench.get("config") or bench["args"])["strategy"]
    if strategy["type_"] == "concurrent":
        return strategy["streams"], None
    return strategy.get("max_concurrency"), strategy["rate"]


GUIDELLM_FILES = [
    ("guidellm-0.2.1_concurrent_benchmarks.json", "test", [(2, None), (4, None)]),
    ("guidellm-0.2.1_constant_benchmarks.yaml", "test", [(None, 8.0)]),
    ("guidellm-0.3.0_constant_benchmarks.json", "test", [(None, 6.0), (None, 12.0)]),
    ("guidellm-0.4.0_concurrent_benchmarks.json", "test", [(2, None), (4, None)]),
    ("guidellm-0.5.0_concurrent_benchmarks.json", "test", [(2, None), (4, None)]),
    ("guidellm-0.5.0_constant_benchmarks.yaml", "test", [(512, 10.0)]),  # a rate with a concurrency cap
    ("guidellm-0.8.1_concurrent_benchmarks.json", "test-model", [(2, None), (4, None)]),
]


@pytest.mark.parametrize(("name", "model", "loads"), GUIDELLM_FILES)
def test_guidellm_report_of_each_version_reads_its_own_figures(
    name: str, model: str, loads: list[tuple[float | None, float | None]]
) -> None:
    path = GUIDELLM / name
    report = yaml.safe_load(path.read_text()) if path.suffix == ".yaml" else json.loads(path.read_text())
    records = import_file(path)
    assert len(records) == len(report["benchmarks"]) == len(loads)
    for bench, record, load in zip(report["benchmarks"], records, loads, strict=True):
        metrics = bench["metrics"]

        def mean(key: str, metrics: dict[str, Any] = metrics) -> float:
            return float(metrics[key]["successful"]["mean"])

        assert _guidellm_model(report, bench) == model == record.model
        assert _guidellm_load(bench) == load == (record.concurrency, record.request_rate)
        assert record.requests_per_s == mean("requests_per_second")
        assert record.input_tokens == mean("prompt_token_count")
        assert record.output_tokens == mean("output_token_count")
        assert record.output_tokens_per_s == mean("output_tokens_per_second")
        ttft = metrics["time_to_first_token_ms"]["successful"]
        assert record.ttft_ms.mean == ttft["mean"]
        assert record.ttft_ms.p50 == ttft["percentiles"].get("p50", ttft["median"])  # 0.2 writes no p50
        assert record.ttft_ms.p99 == ttft["percentiles"]["p99"]
        assert record.itl_ms.p95 == metrics["inter_token_latency_ms"]["successful"]["percentiles"]["p95"]
        # GuideLLM states request latency in seconds
        assert record.e2e_ms.mean == pytest.approx(metrics["request_latency"]["successful"]["mean"] * 1000)
        assert record.tool == "guidellm"


def test_guidellm_yaml_and_json_of_one_run_give_the_same_records(tmp_path: Path) -> None:
    report = json.loads((GUIDELLM / "guidellm-0.3.0_constant_benchmarks.json").read_text())
    as_yaml = tmp_path / "benchmarks.yaml"
    as_yaml.write_text(yaml.safe_dump(report))
    as_json = tmp_path / "benchmarks.json"
    as_json.write_text(json.dumps(report))
    strip = {"source", "notes"}
    assert [r.model_dump(exclude=strip) for r in import_file(as_yaml)] == [
        r.model_dump(exclude=strip) for r in import_file(as_json)
    ]


@pytest.mark.parametrize(
    ("name", "level"),
    [("guidellm-0.4.0_concurrent_benchmarks.json", 1), ("guidellm-0.5.0_concurrent_benchmarks.json", 1)],
)
def test_guidellm_output_rate_that_disagrees_with_requests_times_length_is_flagged(name: str, level: int) -> None:
    metrics = json.loads((GUIDELLM / name).read_text())["benchmarks"][level]["metrics"]
    rps = metrics["requests_per_second"]["successful"]["mean"]
    out_len = metrics["output_token_count"]["successful"]["mean"]
    stated = metrics["output_tokens_per_second"]["successful"]["mean"]
    assert abs(stated - rps * out_len) > TOLERANCE * max(stated, rps * out_len)  # the file disagrees with itself
    record = import_file(GUIDELLM / name)[level]
    assert record.mismatches is not None
    [said] = record.mismatches
    assert said.startswith(f"output tokens/s: the file states {stated:,.4g}")
    assert f"= {rps * out_len:,.4g} ({stated / (rps * out_len):.2f}x)" in said
    first = import_file(GUIDELLM / name)[0]
    m0 = json.loads((GUIDELLM / name).read_text())["benchmarks"][0]["metrics"]
    stated0 = m0["output_tokens_per_second"]["successful"]["mean"]
    implied0 = m0["requests_per_second"]["successful"]["mean"] * m0["output_token_count"]["successful"]["mean"]
    assert (first.mismatches is None) == (abs(stated0 - implied0) <= TOLERANCE * max(stated0, implied0))


# --------------------------------------------------------------------------------------------
# vLLM: the nightly summary list, a plain list of results, and an older summary without token totals.


def test_vllm_nightly_summary_rows_read_as_the_results_they_summarise() -> None:
    rows = json.loads(VLLM_NIGHTLY.read_text())
    assert detect_format(VLLM_NIGHTLY.read_text()) == "vllm-nightly"
    records = import_file(VLLM_NIGHTLY)
    assert len(records) == len(rows) == 9
    raw = {
        f"serving_llama32-3b_{r['deployment']}_qps_{r['request_rate']}": r
        for r in (json.loads(line) for line in VLLM_L40S.read_text().splitlines() if line.strip())
    }
    for row, record in zip(rows, records, strict=True):
        result = raw[row["Test name"]]
        assert record.requests_per_s == row["Tput (req/s)"] == result["request_throughput"]
        assert record.input_tokens == pytest.approx(row["Total input tokens"] / row["Successful req."])
        assert record.input_tokens == pytest.approx(result["total_input_tokens"] / result["completed"])
        assert record.output_tokens == pytest.approx(result["total_output_tokens"] / result["completed"])
        assert record.output_tokens_per_s == result["output_throughput"]
        assert record.total_tokens_per_s == result["total_token_throughput"]
        assert (record.ttft_ms.mean, record.ttft_ms.p50) == (result["mean_ttft_ms"], result["median_ttft_ms"])
        assert record.itl_ms.p50 == result["median_itl_ms"]
        rate = re.search(r"qps_([\w.]+)$", row["Test name"])
        assert rate is not None
        assert record.request_rate == (None if rate.group(1) == "inf" else float(rate.group(1)))
        assert record.engine == "vllm" and record.gpu is None
        assert record.notes is not None and "4xNVIDIA_L40S" in record.notes
        assert record.missing == ["model", "precision", "gpu", "gpu_count"]  # the summary names no model
        assert record.mismatches is None


def test_a_json_list_of_vllm_results_reads_like_the_same_results_as_json_lines(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in VLLM_L40S.read_text().splitlines() if line.strip()]
    listed = tmp_path / "results.json"
    listed.write_text(json.dumps(rows, indent=1))
    from_list = import_file(listed)
    from_lines = import_file(VLLM_L40S)
    assert [r.requests_per_s for r in from_list] == [r.requests_per_s for r in from_lines]
    assert [r.input_tokens for r in from_list] == [r.input_tokens for r in from_lines]
    assert from_list[3].source.note == "vllm bench serve result, [3] (line 1)"


def test_an_older_nightly_summary_without_token_totals_names_the_columns_it_lacks(tmp_path: Path) -> None:
    # the summary script before token columns were added (vllm commit 0e819f03) kept only these columns
    kept = ["Test name", "GPU", "Successful req.", "Tput (req/s)", "Mean TTFT (ms)", "Median TTFT (ms)", "Engine"]
    rows = [{k: row[k] for k in kept} for row in json.loads(VLLM_NIGHTLY.read_text())]
    path = tmp_path / "vllm_nightly_results.json"
    path.write_text(json.dumps(rows))
    problems = _problems(path)
    assert len(problems) == 2 * len(rows)
    assert problems[0] == (
        f"{path}:1: [0]: no mean input length: needs 'Total input tokens' and 'Successful req.' "
        "(or 'Total Tput (tok/s)' and 'Output Tput (tok/s)')"
    )


# --------------------------------------------------------------------------------------------
# What a file lacks, per format; the figures a file states against each other.


def test_a_vllm_result_without_duration_and_throughput_names_those_keys(tmp_path: Path) -> None:
    row = json.loads(VLLM_L40S.read_text().splitlines()[0])
    for key in ("duration", "request_throughput", "completed", "total_input_tokens", "total_output_tokens"):
        del row[key]
    path = tmp_path / "result.json"
    path.write_text(json.dumps(row))
    problems = _problems(path)
    assert problems[0] == f"{path}:1: the run has neither 'duration' nor 'request_throughput': no throughput to read"
    assert "top-level keys" not in " ".join(problems)


def test_an_unknown_file_is_told_which_keys_each_format_needs(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"hello": "world", "benchmarks": {"not": "a list"}}))
    [problem] = _problems(path)
    assert problem.startswith(f"{path}:1: not a benchmark result this calculator knows; the keys each format needs")
    assert "vLLM bench serve or SGLang bench_serving: completed, duration, request_throughput" in problem
    assert "genai-perf or AIPerf export: request_throughput, input_sequence_length, output_sequence_length" in problem
    assert "hello" not in problem  # what it needs, not a dump of what it has


def test_a_genai_perf_run_whose_output_rate_disagrees_with_its_requests_says_so(tmp_path: Path) -> None:
    # the example: 0.47 req/s x 73.5 output tokens is about 34.5 tok/s, yet the file says 12.1
    export = {
        "request_throughput": {"unit": "requests/sec", "avg": 0.47},
        "output_token_throughput": {"unit": "tokens/sec", "avg": 12.1},
        "output_sequence_length": {"unit": "tokens", "avg": 73.5},
        "input_sequence_length": {"unit": "tokens", "avg": 550.0},
        "time_to_first_token": {"unit": "ms", "avg": 120.0},
        "input_config": {"model": ["m"], "endpoint_type": "chat", "concurrency": 1},
    }
    path = tmp_path / "profile_export_genai_perf.json"
    path.write_text(json.dumps(export))
    [record] = import_file(path)
    assert record.output_tokens_per_s == 12.1  # the file's figure is kept
    assert record.mismatches == (
        "output tokens/s: the file states 12.1, but its request rate x mean output length is 0.47 x 73.5 = "
        f"{0.47 * 73.5:.4g} ({12.1 / (0.47 * 73.5):.2f}x)",
    )


def test_requests_per_s_that_disagrees_with_completed_over_duration_is_flagged(tmp_path: Path) -> None:
    row = json.loads(SGLANG.read_text().splitlines()[2])
    row["request_throughput"] = 2 * row["completed"] / row["duration"]
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps(row) + "\n")
    [record] = import_file(path)
    assert record.mismatches is not None
    assert any(m.startswith("requests/s: the file states") and "(2.00x)" in m for m in record.mismatches)
    assert all(r.mismatches is None for r in import_file(SGLANG))


# --------------------------------------------------------------------------------------------
# The calculator's own records (Replay's YAML download, bench --out) come back as they were written.


def test_records_written_by_bench_read_back_unchanged_and_take_what_the_user_says(tmp_path: Path) -> None:
    records = import_file(AIPERF / "aiperf-0.13.0_c4_profile_export_aiperf.json")
    path = tmp_path / "replay-test-model.yaml"
    write_records(path, records, header="python -m calculator bench")
    assert detect_format(path.read_text()) == "records"
    assert import_file(path) == records
    [given] = import_file(path, gpu="h100-sxm", gpu_count=2, precision="fp8")
    assert (given.gpu, given.gpu_count, given.precision, given.complete) == ("h100-sxm", 2, "fp8", True)
    assert given.requests_per_s == records[0].requests_per_s


def test_a_records_file_with_a_bad_record_names_the_field(tmp_path: Path) -> None:
    path = tmp_path / "records.yaml"
    path.write_text("schema_version: 1\nrecords:\n  - id: x\n    engine: vllm\n    input_tokens: -1\n")
    problems = _problems(path)
    assert any(p.startswith(f"{path}: records.0.input_tokens:") for p in problems)


# --------------------------------------------------------------------------------------------
# Hostile input: truncated and gutted versions of the real files fail with the file named, never a traceback.

SMALL = [
    AIPERF / "aiperf-0.9.0_rate20_profile_export_aiperf.json",
    GUIDELLM / "guidellm-0.2.1_concurrent_benchmarks.json",
    VLLM_NIGHTLY,
    VLLM_L40S,
    SGLANG,
]


def _outcome(path: Path) -> list[ThroughputRecord] | list[str]:
    try:
        return import_file(path)
    except DataFileError as exc:
        return exc.lines


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.sampled_from(SMALL), cut=st.floats(min_value=0.0, max_value=0.999))
def test_a_truncated_result_file_fails_naming_the_file(tmp_path: Path, which: Path, cut: float) -> None:
    text = which.read_text()
    path = tmp_path / which.name
    path.write_text(text[: int(len(text) * cut)])
    outcome = _outcome(path)
    if outcome and isinstance(outcome[0], str):
        assert all(str(line).startswith(str(path)) for line in outcome)


def _gut(data: Any, drop: list[int]) -> Any:
    """``data`` with some of its keys removed, at the top and one level down (runs, metrics, rows)."""
    if isinstance(data, list):
        return [_gut(item, drop) for item in data]
    if not isinstance(data, dict):
        return data
    keys = sorted(data)
    gone = {keys[i % len(keys)] for i in drop} if keys else set()
    return {k: (_gut(v, drop[1:]) if isinstance(v, dict | list) else v) for k, v in data.items() if k not in gone}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.sampled_from(SMALL[:3]), drop=st.lists(st.integers(0, 500), min_size=1, max_size=6))
def test_a_result_file_with_keys_removed_reads_or_names_the_file_and_what_is_missing(
    tmp_path: Path, which: Path, drop: list[int]
) -> None:
    path = tmp_path / which.name
    path.write_text(json.dumps(_gut(json.loads(which.read_text()), drop), indent=1))
    outcome = _outcome(path)
    if outcome and isinstance(outcome[0], str):
        assert all(str(line).startswith(str(path)) for line in outcome)
        assert all(len(str(line)) < 2000 for line in outcome)  # a message, not a dump of the file


@pytest.mark.parametrize("key", ["request_throughput", "input_sequence_length", "output_sequence_length"])
def test_an_aiperf_export_without_a_figure_it_needs_names_that_key(tmp_path: Path, key: str) -> None:
    raw = json.loads((AIPERF / "aiperf-0.10.0_c4_profile_export_aiperf.json").read_text())
    del raw[key]
    # and the figures it would otherwise be worked out from
    del raw[{"request_throughput": "benchmark_duration", "input_sequence_length": "total_isl"}.get(key, "total_osl")]
    path = tmp_path / "profile_export_aiperf.json"
    path.write_text(json.dumps(raw))
    problems = _problems(path)
    assert any(key in p for p in problems) and all(p.startswith(str(path)) for p in problems)


# --------------------------------------------------------------------------------------------
# genai-perf 24.x (a real export; the 25.x layout is covered in tests/test_importers.py).

GENAI_PERF = BENCH / "genai-perf" / "perf_analyzer_issue_298_streaming_profile_export_genai_perf.json"


def test_genai_perf_24_export_reads_its_own_figures() -> None:
    raw = json.loads(GENAI_PERF.read_text())
    assert detect_format(GENAI_PERF.read_text()) == "genai-perf"
    [record] = import_file(GENAI_PERF)
    assert record.requests_per_s == raw["request_throughput"]["avg"]
    assert record.input_tokens == raw["input_sequence_length"]["avg"]
    assert record.output_tokens == raw["output_sequence_length"]["avg"]
    assert record.output_tokens_per_s == raw["output_token_throughput"]["avg"]
    assert record.total_tokens_per_s == pytest.approx(
        raw["output_token_throughput"]["avg"] + raw["request_throughput"]["avg"] * raw["input_sequence_length"]["avg"]
    )
    ttft = raw["time_to_first_token"]
    assert record.ttft_ms.model_dump() == {k: ttft[k if k != "mean" else "avg"] for k in record.ttft_ms.model_dump()}
    assert record.e2e_ms.p99 == raw["request_latency"]["p99"] and record.itl_ms.p50 == raw["inter_token_latency"]["p50"]
    assert record.concurrency == raw["input_config"]["concurrency"] == 100
    assert record.model == raw["input_config"]["model"][0] == "ensemble"
    # Triton's TensorRT-LLM backend names the engine
    assert raw["input_config"]["service_kind"] == "triton" and record.engine == "tensorrt-llm"
    assert record.mismatches is None  # 17.22 req/s x 2,565.9 tokens is the 44,190 tok/s it states


def test_the_command_line_lists_the_figures_a_file_contradicts_itself_on(capsys: pytest.CaptureFixture[str]) -> None:
    from calculator.cli import main

    path = GUIDELLM / "guidellm-0.5.0_concurrent_benchmarks.json"
    assert main(["measurements", "import", str(path)]) == 0
    out = capsys.readouterr().out
    [record] = [r for r in import_file(path) if r.mismatches]
    assert record.mismatches is not None
    assert "The file's own figures disagree" in out
    assert f"  {record.id}: {record.mismatches[0]}" in out
    assert main(["measurements", "import", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["mismatches"] for r in data] == [None, list(record.mismatches)]


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.floats(min_value=0.0, max_value=0.999))
def test_a_truncated_yaml_report_fails_naming_the_file(tmp_path: Path, cut: float) -> None:
    source = GUIDELLM / "guidellm-0.2.1_constant_benchmarks.yaml"
    text = source.read_text()
    path = tmp_path / source.name
    path.write_text(text[: int(len(text) * cut)])
    outcome = _outcome(path)
    if outcome and isinstance(outcome[0], str):
        assert all(str(line).startswith(str(path)) for line in outcome)
