"""Benchmark importers: real result files and each tool's current format become throughput records
with the numbers read straight from the file, nothing guessed, and broken files fail whole, by line."""

from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path
from typing import Any

import pytest

from calculator.catalog.datafile import DataFileError
from calculator.catalog.measurements import ThroughputRecord
from calculator.cli import words
from calculator.errors import InputError
from calculator.measure.importers import detect_format, import_file

from .clock import TODAY

# Real result files written by the benchmark tools themselves (tests/fixtures/README.md names each
# file's source and licence); they are read, never edited.
BENCH = Path(__file__).resolve().parent / "fixtures" / "bench"

VLLM_L40S = BENCH / "vllm" / "results_l40s_llama32_3b.jsonl"
SGLANG_70B_ONLINE = BENCH / "sglang" / "h200_llama_3_3_70b_online_output.jsonl"
SGLANG_70B_OFFLINE = BENCH / "sglang" / "h200_llama_3_3_70b_offline_output.jsonl"
SGLANG_405B = BENCH / "sglang" / "h200_llama_405b_online_output.jsonl"
SGLANG_DEEPSEEK = BENCH / "sglang" / "h200_deepseek_dp_mla_output.jsonl"


def _rows(path: Path) -> list[dict[str, Any]]:
    """The file's runs, read independently of the importer (Python's json takes the bare Infinity)."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write(tmp_path: Path, name: str, content: Any) -> Path:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content, indent=2), encoding="utf-8")
    return path


# --------------------------------------------------------------------------------------------
# Real files written by the tools on real hardware.


@pytest.mark.parametrize(
    ("path", "count", "tool"),
    [
        (VLLM_L40S, 9, "vllm"),
        (SGLANG_70B_ONLINE, 7, "sglang"),
        (SGLANG_70B_OFFLINE, 7, "sglang"),
        (SGLANG_405B, 6, "sglang"),
        (SGLANG_DEEPSEEK, 1, "sglang"),
    ],
)
def test_each_real_file_imports_one_record_per_run(path: Path, count: int, tool: str) -> None:
    records = import_file(path)
    assert len(records) == count
    assert detect_format(path.read_text()) == tool
    assert len({r.id for r in records}) == count
    assert all(r.source.document == path.name and r.source.read == TODAY for r in records)
    assert [r.source.note for r in records] == [f"{r.tool} result, line {i}" for i, r in enumerate(records, 1)]


def test_sglang_rate_4_row_reads_throughput_as_completed_over_duration_and_ttft_p50() -> None:
    row = _rows(SGLANG_70B_ONLINE)[2]
    record = import_file(SGLANG_70B_ONLINE)[2]
    assert row["request_rate"] == 4.0
    assert record.request_rate == 4.0
    assert record.concurrency is None
    assert record.requests_per_s == pytest.approx(row["completed"] / row["duration"])
    assert record.requests_per_s == pytest.approx(4.042, abs=5e-4)
    assert record.ttft_ms.p50 == pytest.approx(106.06, abs=5e-3)
    assert record.ttft_ms.mean is None and record.ttft_ms.p99 is None  # old SGLang files lack them
    assert record.itl_ms.p50 == row["median_itl_ms"]
    assert record.e2e_ms.mean == row["mean_e2e_latency_ms"]
    assert record.e2e_ms.p50 == row["median_e2e_latency_ms"]
    assert record.output_tokens_per_s == row["output_throughput"]
    assert record.total_tokens_per_s == pytest.approx(
        (row["total_input_tokens"] + row["total_output_tokens"]) / row["duration"]
    )
    assert record.engine == "sglang" and record.tool == "sglang bench_serving"
    assert record.id == "h200_llama_3_3_70b_online_output-3-rate4"


def test_sglang_lengths_are_the_measured_means_not_the_nominal_random_lengths() -> None:
    for row, record in zip(_rows(SGLANG_70B_ONLINE), import_file(SGLANG_70B_ONLINE), strict=True):
        assert record.input_tokens == pytest.approx(row["total_input_tokens"] / row["completed"])
        assert record.output_tokens == pytest.approx(row["total_output_tokens"] / row["completed"])
        if row["dataset_name"] != "random":
            continue  # the last two rows are ShareGPT runs: random_input_len is not what was sent
        # random_range_ratio 0 draws lengths from [1, nominal]: about half of the nominal 1024
        assert row["random_range_ratio"] == 0.0
        assert record.input_tokens < 0.6 * row["random_input_len"]
        assert record.notes is not None and "random_range_ratio" in record.notes


def test_sglang_bare_infinity_rate_is_an_as_fast_as_possible_run() -> None:
    assert "Infinity" in SGLANG_70B_OFFLINE.read_text()
    records = import_file(SGLANG_70B_OFFLINE)
    assert all(r.request_rate is None and r.concurrency is None for r in records)
    assert all(r.id.endswith("-rate-inf") for r in records)
    first = _rows(SGLANG_70B_OFFLINE)[0]
    assert records[0].requests_per_s == pytest.approx(first["completed"] / first["duration"])


def test_vllm_real_file_reads_numbers_and_survives_its_quirks() -> None:
    rows = _rows(VLLM_L40S)
    records = import_file(VLLM_L40S)
    assert "request_goodput:" in rows[0] and rows[2]["request_rate"] == "inf" and rows[0]["input_len"] == "1000"
    for row, record in zip(rows, records, strict=True):
        assert record.requests_per_s == row["request_throughput"]
        assert record.output_tokens_per_s == row["output_throughput"]
        assert record.total_tokens_per_s == row["total_token_throughput"]
        assert record.input_tokens == pytest.approx(row["total_input_tokens"] / row["completed"])
        assert record.output_tokens == pytest.approx(row["total_output_tokens"] / row["completed"])
        assert record.ttft_ms.mean == row["mean_ttft_ms"]
        assert record.ttft_ms.p50 == row["median_ttft_ms"]
        assert record.ttft_ms.p99 == row["p99_ttft_ms"]
        assert record.itl_ms.p99 == row["p99_itl_ms"]
        assert record.e2e_ms.available == []  # e2el is not in vLLM's default percentile metrics
        assert record.model == row["model_id"] == "meta-llama/Llama-3.2-3B-Instruct"
        assert record.engine == "vllm" and record.tool == "vllm bench serve"
        assert record.measured == dt.date(2025, 5, 30)
    assert [r.request_rate for r in records] == [10.0, 30.0, None] * 3
    assert records[2].id == "results_l40s_llama32_3b-3-rate-inf"


def test_vllm_wrapper_gpu_string_is_kept_in_notes_but_never_becomes_the_gpu() -> None:
    record = import_file(VLLM_L40S)[0]
    assert record.gpu is None and record.gpu_count is None and record.precision is None
    assert record.notes is not None
    assert "gpu=4xNVIDIA_L40S" in record.notes and "deployment=no-features" in record.notes


def test_vllm_numbers_given_as_strings_are_read(tmp_path: Path) -> None:
    row = _rows(VLLM_L40S)[0]
    quoted = {
        k: (str(v) if k in ("completed", "duration", "total_input_tokens", "request_throughput") else v)
        for k, v in row.items()
    }
    record = import_file(_write(tmp_path, "quoted.json", quoted))[0]
    assert record.requests_per_s == row["request_throughput"]
    assert record.input_tokens == pytest.approx(row["total_input_tokens"] / row["completed"])


def test_records_without_gpu_are_incomplete_until_the_user_says_gpu_count_and_precision() -> None:
    bare = import_file(SGLANG_70B_ONLINE)
    assert all(r.missing == ["model", "precision", "gpu", "gpu_count"] and not r.complete for r in bare)
    given = import_file(SGLANG_70B_ONLINE, model="llama-3.3-70b", gpu="h200-sxm", gpu_count=4, precision="BF16")
    assert all(r.complete and r.missing == [] for r in given)
    assert (given[2].model, given[2].gpu, given[2].gpu_count, given[2].precision) == (
        "llama-3.3-70b",
        "h200-sxm",
        4,
        "bf16",
    )
    assert given[2].replica_gpus == 4
    # the user's facts fill the gaps and change no measured number
    assert [r.requests_per_s for r in given] == [r.requests_per_s for r in bare]
    vllm = import_file(VLLM_L40S)[0]
    assert vllm.missing == ["precision", "gpu", "gpu_count"]  # the model is stated in the file


def test_user_model_and_engine_override_the_file() -> None:
    record = import_file(VLLM_L40S, model="llama-3.2-3b", engine="vllm-custom", engine_version="0.9.0")[0]
    assert (record.model, record.engine, record.engine_version) == ("llama-3.2-3b", "vllm-custom", "0.9.0")


def test_ids_are_stable_across_imports_and_uploads_use_their_display_name() -> None:
    assert [r.id for r in import_file(SGLANG_405B)] == [r.id for r in import_file(SGLANG_405B)]
    uploaded = import_file("upload", text=SGLANG_405B.read_text(), name="My H200 run (405B).jsonl")
    assert uploaded[0].id == "my-h200-run-405b-1-rate1"
    assert uploaded[0].source.document == "My H200 run (405B).jsonl"
    assert [r.requests_per_s for r in uploaded] == [r.requests_per_s for r in import_file(SGLANG_405B)]


def test_imported_records_round_trip_through_the_record_schema() -> None:
    for record in import_file(VLLM_L40S) + import_file(SGLANG_DEEPSEEK):
        assert ThroughputRecord.model_validate(record.model_dump(mode="json")) == record


# --------------------------------------------------------------------------------------------
# Each tool's current format, written here from the format notes.

VLLM_CURRENT: dict[str, Any] = {
    "date": "20260312-101500",
    "endpoint_type": "openai",
    "backend": "vllm",
    "label": None,
    "model_id": "Qwen/Qwen3-32B",
    "tokenizer_id": "Qwen/Qwen3-32B",
    "num_prompts": 1000,
    "request_rate": 8.0,
    "burstiness": 1.0,
    "max_concurrency": 64,
    "duration": 130.5,
    "completed": 996,
    "failed": 4,
    "total_input_tokens": 2_040_000,
    "total_output_tokens": 254_000,
    "request_throughput": 7.632,
    "request_goodput": None,
    "output_throughput": 1946.4,
    "total_token_throughput": 17578.5,
    "max_output_tokens_per_s": 2400.0,
    "max_concurrent_requests": 64,
    "rtfx": 0.0,
    "mean_ttft_ms": 210.0,
    "median_ttft_ms": 180.0,
    "std_ttft_ms": 50.0,
    "p50_ttft_ms": 180.0,
    "p90_ttft_ms": 300.0,
    "p95_ttft_ms": 350.0,
    "p99_ttft_ms": 520.0,
    "p99.9_ttft_ms": 900.0,
    "mean_tpot_ms": 30.0,
    "median_tpot_ms": 29.0,
    "p99_tpot_ms": 45.0,
    "mean_itl_ms": 29.5,
    "median_itl_ms": 27.0,
    "p90_itl_ms": 35.0,
    "p95_itl_ms": 40.0,
    "p99_itl_ms": 60.0,
    "mean_e2el_ms": 7800.0,
    "median_e2el_ms": 7600.0,
    "p90_e2el_ms": 9100.0,
    "p95_e2el_ms": 9500.0,
    "p99_e2el_ms": 11000.0,
    "mean_client_queue_time_ms": 12.0,
    "p99_client_queue_time_ms": 80.0,
}


def test_vllm_current_single_object_maps_p_percentile_keys(tmp_path: Path) -> None:
    path = _write(tmp_path, "vllm-8.0qps-concurrency64-Qwen3-32B-20260312-101500.json", VLLM_CURRENT)
    assert detect_format(path.read_text()) == "vllm"
    [record] = import_file(path)
    assert record.ttft_ms.model_dump() == {"mean": 210.0, "p50": 180.0, "p90": 300.0, "p95": 350.0, "p99": 520.0}
    assert record.itl_ms.model_dump() == {"mean": 29.5, "p50": 27.0, "p90": 35.0, "p95": 40.0, "p99": 60.0}
    assert record.e2e_ms.model_dump() == {"mean": 7800.0, "p50": 7600.0, "p90": 9100.0, "p95": 9500.0, "p99": 11000.0}
    assert (record.request_rate, record.concurrency, record.failed) == (8.0, 64, 4)
    assert record.requests_per_s == 7.632
    assert record.input_tokens == pytest.approx(2_040_000 / 996)
    assert record.output_tokens == pytest.approx(254_000 / 996)
    assert record.model == "Qwen/Qwen3-32B" and record.engine == "vllm"
    assert record.measured == dt.date(2026, 3, 12)
    assert record.id == "vllm-8.0qps-concurrency64-qwen3-32b-20260312-101500-1-c64-rate8"


def test_vllm_append_result_json_lines_give_one_record_per_line(tmp_path: Path) -> None:
    second = {**VLLM_CURRENT, "request_rate": "inf", "max_concurrency": None, "request_throughput": 9.1}
    path = _write(tmp_path, "sweep.jsonl", json.dumps(VLLM_CURRENT) + "\n" + json.dumps(second) + "\n")
    records = import_file(path)
    assert [r.request_rate for r in records] == [8.0, None]
    assert [r.requests_per_s for r in records] == [7.632, 9.1]
    assert [r.id for r in records] == ["sweep-1-c64-rate8", "sweep-2-rate-inf"]


def test_vllm_without_request_throughput_uses_completed_over_duration(tmp_path: Path) -> None:
    row = {k: v for k, v in VLLM_CURRENT.items() if k != "request_throughput"}
    [record] = import_file(_write(tmp_path, "r.json", row))
    assert record.requests_per_s == pytest.approx(996 / 130.5)
    assert record.notes is not None and "completed / duration" in record.notes


def test_vllm_generic_openai_client_backend_names_no_engine(tmp_path: Path) -> None:
    [record] = import_file(_write(tmp_path, "r.json", {**VLLM_CURRENT, "backend": "openai-chat"}))
    assert record.engine == "unknown"
    [given] = import_file(_write(tmp_path, "r.json", {**VLLM_CURRENT, "backend": "openai-chat"}), engine="trt-llm")
    assert given.engine == "trt-llm"


SGLANG_NEW = {
    "tag": "h100-tp2",
    "backend": "sglang-oai",
    "dataset_name": "random",
    "request_rate": float("inf"),
    "max_concurrency": 32,
    "sharegpt_output_len": None,
    "random_input_len": 2048,
    "random_output_len": 256,
    "random_range_ratio": 1.0,
    "server_info": {
        "model_path": "meta-llama/Llama-3.1-8B-Instruct",
        "tp_size": 2,
        "version": "0.5.4",
        "dtype": "auto",
    },
    "duration": 60.0,
    "completed": 480,
    "total_input_tokens": 983_040,
    "total_input_text_tokens": 983_040,
    "total_input_vision_tokens": 0,
    "total_output_tokens": 122_880,
    "total_output_tokens_retokenized": 122_700,
    "request_throughput": 8.0,
    "input_throughput": 16384.0,
    "output_throughput": 2048.0,
    "total_throughput": 18432.0,
    "mean_e2e_latency_ms": 3900.0,
    "median_e2e_latency_ms": 3850.0,
    "std_e2e_latency_ms": 200.0,
    "p90_e2e_latency_ms": 4200.0,
    "p99_e2e_latency_ms": 4700.0,
    "mean_ttft_ms": 250.0,
    "median_ttft_ms": 230.0,
    "std_ttft_ms": 40.0,
    "p99_ttft_ms": 410.0,
    "mean_tpot_ms": 14.3,
    "median_tpot_ms": 14.1,
    "std_tpot_ms": 1.0,
    "p99_tpot_ms": 18.0,
    "mean_itl_ms": 14.2,
    "median_itl_ms": 13.9,
    "std_itl_ms": 3.0,
    "p95_itl_ms": 17.0,
    "p99_itl_ms": 25.0,
    "concurrency": 31.2,
    "accept_length": None,
    "max_output_tokens_per_s": 2300.0,
    "max_concurrent_requests": 32,
}


def test_sglang_new_keys_with_bare_infinity(tmp_path: Path) -> None:
    line = json.dumps(SGLANG_NEW)
    assert '"request_rate": Infinity' in line
    path = _write(tmp_path, "sglang-oai_0312_480_2048_256.jsonl", line + "\n")
    assert detect_format(path.read_text()) == "sglang"
    [record] = import_file(path)
    assert record.request_rate is None and record.concurrency == 32
    assert record.requests_per_s == 8.0
    assert record.total_tokens_per_s == 18432.0  # SGLang's total_throughput
    assert record.input_tokens == 2048.0 and record.output_tokens == 256.0
    assert record.ttft_ms.model_dump() == {"mean": 250.0, "p50": 230.0, "p90": None, "p95": None, "p99": 410.0}
    assert record.itl_ms.p95 == 17.0
    assert record.e2e_ms.p90 == 4200.0 and record.e2e_ms.mean == 3900.0
    assert record.model == "meta-llama/Llama-3.1-8B-Instruct"
    assert (record.engine, record.engine_version) == ("sglang", "0.5.4")
    # the server's tp_size is not turned into the record's GPU count: only the user says that
    assert record.gpu_count is None and record.missing == ["precision", "gpu", "gpu_count"]
    assert record.id == "sglang-oai_0312_480_2048_256-1-c32"


def test_sglang_trace_replay_rate_is_no_fixed_rate(tmp_path: Path) -> None:
    path = _write(tmp_path, "trace.jsonl", json.dumps({**SGLANG_NEW, "request_rate": "trace", "max_concurrency": None}))
    [record] = import_file(path)
    assert record.request_rate is None and record.concurrency is None
    assert record.notes is not None and "trace" in record.notes


GENAI_PERF: dict[str, Any] = {
    "request_throughput": {"unit": "requests/sec", "avg": 3.5},
    "request_latency": {
        "unit": "s",
        "avg": 2.5,
        "p50": 2.4,
        "p90": 3.0,
        "p95": 3.2,
        "p99": 3.9,
        "min": 1.0,
        "max": 4.2,
    },
    "time_to_first_token": {"unit": "ms", "avg": 120.0, "p50": 110.0, "p90": 160.0, "p95": 180.0, "p99": 240.0},
    "time_to_second_token": {"unit": "ms", "avg": 30.0},
    "inter_token_latency": {"unit": "ms", "avg": 9.5, "p50": 9.2, "p90": 11.0, "p95": 12.0, "p99": 15.0},
    "output_token_throughput_per_user": {"unit": "tokens/sec/user", "avg": 105.0},
    "output_sequence_length": {"unit": "tokens", "avg": 250.0, "p50": 250.0},
    "input_sequence_length": {"unit": "tokens", "avg": 1000.0, "p50": 1000.0},
    "output_token_throughput": {"unit": "tokens/sec", "avg": 875.0},
    "request_goodput": {"unit": "requests/sec", "avg": 3.1},
    "request_count": {"unit": "count", "avg": 350},
    "input_config": {
        "model": ["meta-llama/Llama-3.1-8B-Instruct"],
        "backend": "tensorrtllm",
        "service_kind": "openai",
        "endpoint_type": "chat",
        "concurrency": 8,
        "request_rate": None,
        "profile_export_file": "artifacts/run/profile_export.json",
    },
}


def test_genai_perf_export_converts_seconds_to_ms(tmp_path: Path) -> None:
    path = _write(tmp_path, "profile_export_genai_perf.json", GENAI_PERF)
    assert detect_format(path.read_text()) == "genai-perf"
    [record] = import_file(path)
    assert record.e2e_ms.model_dump() == pytest.approx(
        {"mean": 2500.0, "p50": 2400.0, "p90": 3000.0, "p95": 3200.0, "p99": 3900.0}
    )
    assert record.ttft_ms.model_dump() == {"mean": 120.0, "p50": 110.0, "p90": 160.0, "p95": 180.0, "p99": 240.0}
    assert record.itl_ms.p99 == 15.0
    assert record.requests_per_s == 3.5 and record.output_tokens_per_s == 875.0
    assert (record.input_tokens, record.output_tokens) == (1000.0, 250.0)
    assert record.total_tokens_per_s == pytest.approx(875.0 + 3.5 * 1000.0)  # derived, said so in the notes
    assert record.concurrency == 8 and record.request_rate is None
    assert record.model == "meta-llama/Llama-3.1-8B-Instruct"
    # --backend tensorrtllm is genai-perf's default and only matters for Triton; it names no engine here
    assert record.engine == "unknown" and record.tool == "genai-perf"
    assert record.id == f"{tmp_path.name}-profile_export_genai_perf-1-c8"


def test_genai_perf_nanoseconds_and_triton_backend(tmp_path: Path) -> None:
    export = json.loads(json.dumps(GENAI_PERF))
    export["time_to_first_token"] = {"unit": "ns", "avg": 120_000_000, "p50": 110_000_000, "p99": 240_000_000}
    export["input_config"] |= {"service_kind": "triton", "backend": "vllm", "concurrency": None, "request_rate": 4.0}
    [record] = import_file(_write(tmp_path, "profile_export_genai_perf.json", export))
    assert record.ttft_ms.model_dump() == {"mean": 120.0, "p50": 110.0, "p90": None, "p95": None, "p99": 240.0}
    assert record.engine == "vllm"
    assert record.request_rate == 4.0 and record.concurrency is None


AIPERF: dict[str, Any] = {
    "request_throughput": {"unit": "requests/sec", "avg": 0.2504302580624667},
    "request_latency": {
        "unit": "ms",
        "avg": 3652.1454372343746,
        "p1": 3518.0,
        "p50": 3644.0809205,
        "p90": 3800.0,
        "p95": 3850.0,
        "p99": 3909.3341161199996,
        "std": 70.3,
    },
    "time_to_first_token": {"unit": "ms", "avg": 30.814987671875, "p50": 30.668547999999998, "p99": 34.344268879999994},
    "inter_token_latency": {
        "unit": "ms",
        "avg": 18.19909533160138,
        "p50": 18.158001085427134,
        "p99": 19.481766498241203,
    },
    "output_token_throughput": {"unit": "tokens/sec", "avg": 50.08213863971112},
    "output_sequence_length": {"unit": "tokens", "avg": 200.0},
    "input_sequence_length": {"unit": "tokens", "avg": 100.0},
    "request_count": {"unit": "requests", "avg": 64},
    "error_request_count": {"unit": "requests", "avg": 2},
    "benchmark_duration": {"unit": "sec", "avg": 255.6},
    "telemetry_data": {
        "summary": {"endpoints_configured": ["http://localhost:9400/metrics"]},
        "endpoints": {
            "localhost:9400": {"gpus": {"gpu_0": {"gpu_index": 0, "gpu_name": "NVIDIA RTX 6000 Ada Generation"}}}
        },
    },
    "input_config": {
        "endpoint": {"model_names": ["Qwen/Qwen3-0.6B"], "type": "chat", "streaming": True, "url": "localhost:8000"},
        "loadgen": {"concurrency": 1, "request_count": 64, "warmup_request_count": 1},
    },
    "was_cancelled": False,
    "error_summary": [],
    "start_time": "2025-11-07T13:38:54.793124",
    "end_time": "2025-11-07T13:43:13.730640",
}


def test_aiperf_export_reads_metrics_config_and_keeps_telemetry_gpu_out_of_the_record(tmp_path: Path) -> None:
    path = _write(tmp_path, "profile_export_aiperf.json", AIPERF)
    assert detect_format(path.read_text()) == "aiperf"
    [record] = import_file(path)
    assert record.tool == "aiperf"
    assert record.requests_per_s == 0.2504302580624667
    assert record.ttft_ms.p50 == 30.668547999999998 and record.ttft_ms.p99 == 34.344268879999994
    assert record.e2e_ms.p90 == 3800.0 and record.e2e_ms.mean == 3652.1454372343746
    assert record.itl_ms.mean == 18.19909533160138
    assert (record.input_tokens, record.output_tokens, record.failed) == (100.0, 200.0, 2)
    assert record.concurrency == 1 and record.model == "Qwen/Qwen3-0.6B"
    assert record.measured == dt.date(2025, 11, 7)
    assert record.gpu is None and record.notes is not None and "NVIDIA RTX 6000 Ada Generation" in record.notes


def test_aiperf_seconds_units_and_throughput_from_count_over_duration(tmp_path: Path) -> None:
    export = json.loads(json.dumps(AIPERF))
    del export["request_throughput"]
    export["time_to_first_token"] = {"unit": "s", "avg": 0.031, "p50": 0.0305, "p99": 0.0345}
    export["benchmark_duration"] = {"unit": "ms", "avg": 256_000.0}
    [record] = import_file(_write(tmp_path, "profile_export_aiperf.json", export))
    assert record.requests_per_s == pytest.approx(64 / 256.0)
    assert record.ttft_ms.mean == pytest.approx(31.0) and record.ttft_ms.p99 == pytest.approx(34.5)


def test_aiperf_older_layout_with_records(tmp_path: Path) -> None:
    records = {
        tag: {"tag": tag, "header": tag.replace("_", " ").title(), "count": 64, **stats}
        for tag, stats in AIPERF.items()
        if isinstance(stats, dict) and "unit" in stats
    }
    export = {"records": records, "input_config": AIPERF["input_config"], "was_cancelled": False}
    path = _write(tmp_path, "profile_export_aiperf.json", export)
    assert detect_format(path.read_text()) == "aiperf"
    [record] = import_file(path)
    assert record.requests_per_s == 0.2504302580624667 and record.ttft_ms.p50 == 30.668547999999998


def _distribution(mean: float, p50: float, p90: float, p95: float, p99: float) -> dict[str, Any]:
    ds = {
        "mean": mean,
        "median": p50,
        "mode": p50,
        "variance": 1.0,
        "std_dev": 1.0,
        "min": p50 / 2,
        "max": p99 * 1.1,
        "count": 100,
        "total_sum": mean * 100,
        "percentiles": {
            "p001": p50 / 2,
            "p01": p50 / 2,
            "p05": p50 / 2,
            "p10": p50 / 2,
            "p25": p50,
            "p50": p50,
            "p75": p90,
            "p90": p90,
            "p95": p95,
            "p99": p99,
            "p999": p99,
        },
    }
    return {"successful": ds, "errored": None, "incomplete": None, "total": ds}


def _guidellm_benchmark(
    index: int, strategy: dict[str, Any], rps: float, ttft: float, latency_s: float
) -> dict[str, Any]:
    return {
        "type_": "generative_benchmark",
        "id_": f"bench-{index}",
        "run_id": "run-1",
        "run_index": index,
        "config": {
            "strategy": strategy,
            "constraints": {},
            "profile": {},
            "requests": {},
            "backend": {"type_": "openai_http"},
            "environment": {},
        },
        "scheduler_metrics": {"requests_made": {"successful": 100, "errored": 1, "incomplete": 0, "total": 101}},
        "metrics": {
            "request_totals": {"successful": 100, "errored": 1, "incomplete": 0, "total": 101},
            "requests_per_second": _distribution(rps, rps, rps, rps, rps),
            "request_concurrency": _distribution(4.0, 4.0, 4.0, 4.0, 4.0),
            "request_latency": _distribution(
                latency_s, latency_s * 0.9, latency_s * 1.2, latency_s * 1.3, latency_s * 1.5
            ),
            "prompt_token_count": _distribution(512.0, 512.0, 512.0, 512.0, 512.0),
            "output_token_count": _distribution(128.0, 128.0, 128.0, 128.0, 128.0),
            "total_token_count": _distribution(640.0, 640.0, 640.0, 640.0, 640.0),
            "time_to_first_token_ms": _distribution(ttft, ttft * 0.9, ttft * 1.5, ttft * 1.8, ttft * 2.5),
            "time_per_output_token_ms": _distribution(12.0, 12.0, 14.0, 15.0, 18.0),
            "inter_token_latency_ms": _distribution(11.0, 10.5, 13.0, 14.0, 17.0),
            "output_tokens_per_second": _distribution(rps * 128, rps * 128, 0, 0, 0),
            "tokens_per_second": _distribution(rps * 640, rps * 640, 0, 0, 0),
        },
        "requests": {"successful": [], "errored": [], "incomplete": []},
        "start_time": 1767225600.0 + 100 * index,
        "end_time": 1767225660.0 + 100 * index,
        "duration": 60.0,
        "warmup_duration": 0.0,
        "cooldown_duration": 0.0,
    }


GUIDELLM = {
    "metadata": {"version": 2, "guidellm_version": "0.5.0", "python_version": "3.12.3", "platform": "Linux"},
    "config": {"target": "http://localhost:8000", "model": "ibm-granite/granite-3.3-8b-instruct", "profile": "sweep"},
    "benchmarks": [
        _guidellm_benchmark(0, {"type_": "synchronous"}, 1.2, 40.0, 1.5),
        _guidellm_benchmark(1, {"type_": "constant", "rate": 5.0, "max_concurrency": None}, 4.9, 60.0, 1.9),
        _guidellm_benchmark(2, {"type_": "concurrent", "streams": 16}, 9.5, 90.0, 1.7),
        _guidellm_benchmark(3, {"type_": "throughput", "max_concurrency": None}, 12.0, 300.0, 2.6),
    ],
}


def test_guidellm_report_gives_one_record_per_benchmark_with_request_latency_in_seconds(tmp_path: Path) -> None:
    path = _write(tmp_path, "benchmarks.json", json.dumps(GUIDELLM))  # GuideLLM writes it on one line
    assert detect_format(path.read_text()) == "guidellm"
    records = import_file(path)
    assert len(records) == 4
    assert [(r.concurrency, r.request_rate) for r in records] == [(1, None), (None, 5.0), (16, None), (None, None)]
    constant = records[1]
    assert constant.requests_per_s == 4.9
    assert constant.e2e_ms.mean == pytest.approx(1900.0) and constant.e2e_ms.p99 == pytest.approx(1.9 * 1.5 * 1000)
    assert constant.ttft_ms.mean == 60.0 and constant.ttft_ms.p50 == pytest.approx(54.0)
    assert constant.itl_ms.p95 == 14.0
    assert (constant.input_tokens, constant.output_tokens, constant.failed) == (512.0, 128.0, 1)
    assert constant.output_tokens_per_s == pytest.approx(4.9 * 128)
    assert constant.total_tokens_per_s == pytest.approx(4.9 * 640)
    assert constant.model == "ibm-granite/granite-3.3-8b-instruct" and constant.tool == "guidellm"
    assert constant.engine == "unknown"  # openai_http is GuideLLM's client, not the serving engine
    assert constant.measured == dt.date(2026, 1, 1)
    assert [r.id.split("benchmarks-")[1] for r in records] == ["1-c1", "2-rate5", "3-c16", "4-rate-inf"]
    assert constant.source.note == "guidellm result, benchmarks[1] (line 1)"


def test_guidellm_throughput_falls_back_to_successful_over_duration(tmp_path: Path) -> None:
    report = json.loads(json.dumps(GUIDELLM))
    del report["benchmarks"][0]["metrics"]["requests_per_second"]
    records = import_file(_write(tmp_path, "benchmarks.json", report))
    assert records[0].requests_per_s == pytest.approx(100 / 60.0)


# --------------------------------------------------------------------------------------------
# Broken input fails whole, naming the file and the line.


def _problems(path: Path | str, **kwargs: Any) -> list[str]:
    with pytest.raises(DataFileError) as info:
        import_file(path, **kwargs)
    return info.value.lines


def test_not_json_names_file_and_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "broken.json", '{\n  "duration": 12.0,\n  "completed": oops\n}\n')
    [problem] = _problems(path)
    assert problem.startswith(f"{path}:3: not valid JSON")
    with pytest.raises(DataFileError, match="broken.json:3"):
        detect_format(path.read_text(), name="broken.json")


def test_empty_and_unknown_files_are_refused(tmp_path: Path) -> None:
    assert _problems(_write(tmp_path, "empty.json", "  \n")) == [f"{tmp_path / 'empty.json'}: the file is empty"]
    [problem] = _problems(_write(tmp_path, "other.json", {"hello": "world"}))
    assert "not a benchmark result this calculator knows" in problem and ":1:" in problem
    [problem] = _problems(_write(tmp_path, "list.json", [1, 2]))
    assert "expected a JSON object" in problem


def test_json_lines_with_bad_lines_fail_whole_listing_every_problem(tmp_path: Path) -> None:
    good = json.dumps(SGLANG_NEW)
    no_throughput = json.dumps({k: v for k, v in SGLANG_NEW.items() if k not in ("duration", "request_throughput")})
    text = "\n".join([good, '{"backend": "sglang", "duration": 1', good, "[1, 2]", "", no_throughput]) + "\n"
    path = _write(tmp_path, "runs.jsonl", text)
    problems = _problems(path)
    assert problems[0].startswith(f"{path}:2: not valid JSON")
    assert problems[1] == f"{path}:4: expected a JSON object (one run per line), got a list"
    assert problems[2] == (f"{path}:6: the run has neither 'duration' nor 'request_throughput': no throughput to read")
    assert len(problems) == 3  # the good lines 1 and 3 are fine, and still not imported alone


def test_bad_value_in_a_pretty_printed_result_names_its_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "vllm.json", {**VLLM_CURRENT, "max_concurrency": 0, "completed": "many"})
    text = path.read_text().splitlines()
    completed_line = next(i for i, line in enumerate(text, 1) if '"completed"' in line)
    problems = _problems(path)
    assert f"{path}:{completed_line}: completed: expected a number, got 'many'" in problems
    assert any(p.startswith(f"{path}:1: concurrency: Input should be greater than 0") for p in problems)


def test_perf_export_with_a_unit_that_is_not_time_is_refused(tmp_path: Path) -> None:
    export = json.loads(json.dumps(GENAI_PERF))
    export["time_to_first_token"]["unit"] = "tokens"
    path = _write(tmp_path, "profile_export_genai_perf.json", export)
    [problem] = _problems(path)
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if '"time_to_first_token"' in text)
    assert problem == f"{path}:{line}: time_to_first_token.unit: expected a time unit (ns, us, ms, s), got 'tokens'"


def test_perf_export_missing_both_duration_and_throughput_is_refused(tmp_path: Path) -> None:
    export = {k: v for k, v in GENAI_PERF.items() if k != "request_throughput"}
    [problem] = _problems(_write(tmp_path, "profile_export_genai_perf.json", export))
    assert "neither 'benchmark_duration' nor 'request_throughput'" in problem


def test_guidellm_benchmark_problems_name_the_benchmark_and_its_line(tmp_path: Path) -> None:
    report = json.loads(json.dumps(GUIDELLM))
    del report["benchmarks"][2]["metrics"]["prompt_token_count"]
    path = _write(tmp_path, "benchmarks.json", report)
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if '"id_": "bench-2"' in text) - 2
    [problem] = _problems(path)
    assert problem == f"{path}:{line}: benchmarks[2]: no measured mean input length (metrics.prompt_token_count)"


def test_unreadable_file_is_a_data_file_error(tmp_path: Path) -> None:
    [problem] = _problems(tmp_path / "missing.jsonl")
    assert problem.startswith(f"{tmp_path / 'missing.jsonl'}: cannot read file")


def test_upload_errors_name_the_upload(tmp_path: Path) -> None:
    [problem] = _problems("ignored", text="not json", name="mine.json")
    assert problem.startswith("mine.json:1: not valid JSON")


@pytest.mark.parametrize(
    ("kwargs", "field", "flag"),
    [
        ({"gpu": "NVIDIA H100"}, "measurement.gpu", "--gpu"),
        ({"gpu_count": 0}, "measurement.gpu_count", "--gpu-count"),
        ({"precision": " "}, "measurement.precision", "--precision"),
    ],
)
def test_bad_user_values_are_input_errors(tmp_path: Path, kwargs: dict[str, Any], field: str, flag: str) -> None:
    path = _write(tmp_path, "r.json", VLLM_CURRENT)
    with pytest.raises(InputError) as info:
        import_file(path, **kwargs)
    assert info.value.field == field and words.flag(field) == flag


def test_nan_statistics_count_as_absent(tmp_path: Path) -> None:
    [record] = import_file(_write(tmp_path, "r.json", {**VLLM_CURRENT, "p99_ttft_ms": math.nan}))
    assert record.ttft_ms.p99 is None and record.ttft_ms.p50 == 180.0
