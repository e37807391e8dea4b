"""Result files of the public sweeps and of the tools the other importers do not cover: InferenceMAX /
InferenceX (a run's aggregate, a sweep's collected array, flat and nested agentic results, a decode-SLO
result in seconds), llmperf (summary and per-request files), vLLM's client driving SGLang, model paths,
latency keys no reader knows, and the prefix share each run states or leaves unknown.

Every file here is a real one (tests/fixtures/README.md names its repository, commit and licence); the
figures asserted are the file's own, worked out independently of the importer."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calculator.capacity.sizing import replica_capacity
from calculator.catalog.datafile import DataFileError
from calculator.catalog.gpus import load_gpu_specs
from calculator.catalog.measurements import ThroughputRecord, comparable, load_records
from calculator.catalog.models import load_model_specs
from calculator.errors import InputError
from calculator.measure.formats.prefix import read_prefix_share
from calculator.measure.formats.reading import Fields, model_name
from calculator.measure.importers import detect_format, import_file

BENCH = Path(__file__).resolve().parent / "fixtures" / "bench"
IMX = BENCH / "inferencemax"
KIMI_C32 = (
    IMX / "agg_kimik2.5_8k1k_int4_vllm_tp8-ep1-dpafalse_disagg-false_spec-mtp_conc32_MI355-gbt350-odcdh5-wbb3.json"
)
KIMI_SWEEP = IMX / "agg_kimik2.5_collected.json"
AGENTIC_FLAT = (
    IMX
    / "agg_dsr1_tp4_users32_offloadoff_fp4_vllm_tp4-ep4-dpafalse_disagg-false_spec-none_conc32_b200-dgxc-slurm_7.json"
)
AGENTIC_NESTED = (
    IMX
    / "kimik2.7_tp4_conc8_kvnone_fp4_vllm_tp4-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc8_mi355x-amds_06.json"
)
DECODE_SLO = IMX / "glm5_fp8_vllm_tp8_isl1024_osl128_conc4.json"
AGG_GLM = IMX / "agg_bmk_glm5.1-fp4-mi355x-sglang-agentic-hicache.json"
AGG_KIMI_B200 = IMX / "agg_bmk_kimik2.5-fp4-b200-vllm-agentic-lmcache.json"
API_ROWS = IMX / "inferencex-api-benchmarks-dsr1-trimmed.json"
TOGETHER_C64 = IMX / "together-b200-vllm-gptoss-fp4-1k1k-untuned-conc64.json"
HF_CACHE_PATH = IMX / "gpt-oss-120b_concurrency_8_req_rate_inf_gpus_16_ctx_8_gen_8.json"
LLMPERF = BENCH / "llmperf"
LLMPERF_SUMMARY = LLMPERF / "together_ai-togethercomputer-llama-2-70b-chat_550_150_summary.json"
LLMPERF_REQUESTS = LLMPERF / "together_ai-togethercomputer-llama-2-70b-chat_550_150_individual_responses.json"
VLLM_CLIENT_ON_SGLANG = BENCH / "vllm" / "r1-benchmark_h200_qwq-32b_sgl-1000-2000.json"
SGLANG_RANDOM = BENCH / "sglang" / "h200_llama_3_3_70b_online_output.jsonl"


def _json(path: Path) -> Any:
    return json.loads(path.read_text())


def _write(tmp_path: Path, name: str, data: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


# --- InferenceMAX / InferenceX -------------------------------------------------------------------------------


def test_inferencemax_run_states_its_setup_and_sizes_from_littles_law() -> None:
    data = _json(KIMI_C32)
    (record,) = import_file(KIMI_C32)
    assert detect_format(KIMI_C32.read_text()) == "inferencemax"
    assert record.tool == "InferenceMAX"
    assert (record.model, record.precision, record.gpu, record.gpu_count) == (
        "moonshotai/Kimi-K2.5",
        "int4",
        "mi355x",
        8,
    )
    assert (record.engine, record.engine_version) == ("vllm", "0.21.0")  # the image vllm/vllm-openai-rocm:v0.21.0
    assert record.complete and record.concurrency == 32
    # a closed loop of 32: requests/s is 32 over the mean end-to-end latency (209.5 s)
    assert record.requests_per_s == pytest.approx(32 / data["mean_e2el"])
    # the means the per-GPU rates give sit at 0.9x the nominal 8,192 / 1,024 (random lengths 0.8x to 1x)
    assert record.input_tokens == pytest.approx(0.9 * 8192, rel=0.01)
    assert record.output_tokens == pytest.approx(0.9 * 1024, rel=0.01)
    assert record.output_tokens_per_s == pytest.approx(data["output_tput_per_gpu"] * 8)
    # the file's seconds become milliseconds
    assert record.ttft_ms.p50 == pytest.approx(1816.827566944994)
    assert record.ttft_ms.p99 == pytest.approx(14490.030684259256)
    assert record.itl_ms.p50 == pytest.approx(659.2198834987357)
    assert record.prefix_share == 0  # random tokens


def test_inferencemax_collected_sweep_reads_as_one_record_per_level() -> None:
    records = import_file(KIMI_SWEEP)
    assert sorted(r.concurrency or 0 for r in records) == [4, 32, 64]
    (c32,) = [r for r in records if r.concurrency == 32]
    (alone,) = import_file(KIMI_C32)
    assert c32.requests_per_s == alone.requests_per_s and c32.ttft_ms == alone.ttft_ms
    # the 8k-input levels: a busier loop completes more requests per second, each slower
    c64 = next(r for r in records if r.concurrency == 64)
    assert c64.requests_per_s > c32.requests_per_s and (c64.e2e_ms.mean or 0) > (c32.e2e_ms.mean or 0)


def test_a_published_aggregate_array_reads_one_record_per_level() -> None:
    data = _json(AGG_GLM)
    records = import_file(AGG_GLM)
    assert len(records) == len(data) == 12
    assert sorted(r.concurrency or 0 for r in records) == sorted(row["conc"] for row in data)
    first = records[0]
    assert (first.model, first.gpu, first.gpu_count, first.precision, first.engine) == (
        "amd/GLM-5.1-MXFP4",
        "mi355x",
        2,
        "fp4",
        "sglang",
    )
    assert first.engine_version == "0.5.12.post1"  # lmsysorg/sglang-rocm:v0.5.12.post1-rocm720-mi35x-20260529
    row = data[0]
    assert first.requests_per_s == pytest.approx(row["num_requests_successful"] / row["duration_seconds"])
    assert first.e2e_ms.p95 == pytest.approx(row["p95_e2el"] * 1000) and first.ttft_ms.p50 is None  # no median
    assert first.prefix_share is None  # theoretical_cache_hit_rate null: the file does not say


def test_inferencex_api_rows_read_the_prefix_model_and_one_replica() -> None:
    rows = _json(API_ROWS)
    records = import_file(API_ROWS)
    assert len(records) == len(rows)
    mi300x = [(row, r) for row, r in zip(rows, records, strict=True) if row["hardware"] == "mi300x"]
    assert len(mi300x) == 15 and {r.model for _, r in mi300x} == {"deepseek-ai/DeepSeek-R1-0528"}  # prefix dsr1
    row, record = next((row, r) for row, r in mi300x if row["conc"] == 32 and row["isl"] == 1024 and row["osl"] == 1024)
    assert (record.gpu, record.gpu_count, record.precision, record.engine) == ("mi300x", 8, "fp8", "sglang")
    assert record.requests_per_s == pytest.approx(32 / row["metrics"]["mean_e2el"])
    assert record.output_tokens_per_s == pytest.approx(row["metrics"]["output_tput_per_gpu"] * 8)
    assert record.ttft_ms.p50 == pytest.approx(row["metrics"]["median_ttft"] * 1000)
    assert str(record.measured) == row["date"] and row["run_url"] in (record.notes or "")
    # a disaggregated row counts its prefill and its decode GPUs
    row, record = next((row, r) for row, r in zip(rows, records, strict=True) if row["disagg"])
    assert record.gpu_count == row["num_prefill_gpu"] + row["num_decode_gpu"]


def test_together_runner_baselines_read_the_clients_own_figures() -> None:
    data = _json(TOGETHER_C64)
    (record,) = import_file(TOGETHER_C64)
    metrics = data["metrics"]
    assert (record.model, record.gpu, record.gpu_count, record.precision) == ("openai/gpt-oss-120b", "b200", 4, "fp4")
    assert record.requests_per_s == metrics["request_throughput"]
    assert record.output_tokens == pytest.approx(metrics["output_token_throughput"] / metrics["request_throughput"])
    assert record.itl_ms.p50 == metrics["median_itl_ms"] and record.ttft_ms.p99 == metrics["p99_ttft_ms"]
    assert record.unread_latency is None


def test_a_level_that_made_no_request_is_left_out_and_named() -> None:
    data = _json(AGG_KIMI_B200)
    records = import_file(AGG_KIMI_B200)
    assert len(records) == len(data) - 1
    assert "levels of the sweep not read: conc 32 (no request made)" in (records[0].notes or "")
    # the model is a local path on the cluster: its name, the path kept
    assert {(r.model, r.model_path) for r in records} == {("Kimi-K2.5-NVFP4", "/lustre/fsw/models/Kimi-K2.5-NVFP4")}
    assert {r.gpu for r in records} == {"b200"} and {r.gpu_count for r in records} == {4, 8}


def test_flat_agentic_result_reads_the_traces_prefix_share_and_seconds() -> None:
    data = _json(AGENTIC_FLAT)
    (record,) = import_file(AGENTIC_FLAT)
    assert (record.model, record.precision, record.gpu, record.gpu_count) == (
        "nvidia/DeepSeek-R1-0528-FP4",
        "fp4",
        "b200",  # runner b200-dgxc-slurm
        4,
    )
    assert record.requests_per_s == pytest.approx(53 / 1822.856822013855)
    assert record.concurrency == 32  # users
    assert record.input_tokens == pytest.approx(82765.90566037736)
    assert record.output_tokens == pytest.approx(2770.264150943396)  # what the model wrote, not what was asked
    # independently: the run's input tokens/s over its requests/s gives the same mean
    assert data["input_tput_tps"] * data["duration_seconds"] / 53 == pytest.approx(record.input_tokens, rel=1e-6)
    assert record.ttft_ms.mean == pytest.approx(210697.74563807363)
    assert record.e2e_ms.mean == pytest.approx(423824.100157)  # time to last token
    assert record.prefix_share == pytest.approx(0.9684, abs=1e-4)


def test_nested_agentic_result_reads_request_metrics() -> None:
    data = _json(AGENTIC_NESTED)
    (record,) = import_file(AGENTIC_NESTED)
    assert (record.model, record.gpu, record.gpu_count, record.precision) == (
        "amd/Kimi-K2.7-Code-MXFP4",
        "mi355x",
        4,
        "fp4",
    )
    assert record.requests_per_s == pytest.approx(873 / 3628.1645)
    # the file's own one-second windows average the same rate
    assert record.requests_per_s == pytest.approx(data["request_metrics"]["qps"]["mean"], rel=0.002)
    assert record.prefix_share == pytest.approx(0.9547, abs=1e-4)
    assert record.itl_ms.p50 == pytest.approx(34.38) and record.ttft_ms.p95 == pytest.approx(38888.4)
    assert "94.5%" in (record.notes or "")  # the server's own cache, named beside it


def test_decode_slo_result_reads_latencies_in_seconds_not_as_metadata() -> None:
    (record,) = import_file(DECODE_SLO)
    assert record.ttft_ms.p50 == pytest.approx(264.99967742711306)
    assert record.ttft_ms.p99 == pytest.approx(584.8183088190854)
    assert record.e2e_ms.p50 == pytest.approx(3022.5854497402906)
    assert "median TPOT 21.37 ms" in (record.notes or "")
    assert "median_ttft" not in (record.notes or "")  # no longer filed under the file's metadata
    assert record.unread_latency is None and record.model == "zai-org/GLM-5-FP8"
    assert record.requests_per_s == pytest.approx(1.2869348000955494)


# --- model paths ---------------------------------------------------------------------------------------------


def test_hugging_face_cache_path_becomes_the_models_name_and_is_kept_whole() -> None:
    (record,) = import_file(HF_CACHE_PATH)
    assert record.model == "openai/gpt-oss-120b"
    assert (
        record.model_path == "/models/models--openai--gpt-oss-120b/snapshots/b5c939de8f754692c1647ca79fbf85e8c1e70f8a/"
    )
    found = load_model_specs().find(record.model)
    assert found is not None and found.id == "gpt-oss-120b"


@pytest.mark.parametrize(
    ("text", "name", "path"),
    [
        ("meta-llama/Llama-3.3-70B-Instruct", "meta-llama/Llama-3.3-70B-Instruct", None),
        ("/workspace/DeepSeek-V2-Lite", "DeepSeek-V2-Lite", "/workspace/DeepSeek-V2-Lite"),
        ("/data/huggingface/hub/amd/GLM-5.2-MXFP4/", "GLM-5.2-MXFP4", "/data/huggingface/hub/amd/GLM-5.2-MXFP4/"),
        (
            "accounts/fireworks/models/llama-v2-7b-chat",
            "llama-v2-7b-chat",
            "accounts/fireworks/models/llama-v2-7b-chat",
        ),
        ("llama-3.3-70b", "llama-3.3-70b", None),
    ],
)
def test_model_path_reduces_to_the_name(text: str, name: str, path: str | None) -> None:
    assert model_name(text) == (name, path)


def test_a_model_the_user_names_drops_the_files_path() -> None:
    (record,) = import_file(HF_CACHE_PATH, model="gpt-oss-120b")
    assert record.model == "gpt-oss-120b" and record.model_path is None


# --- llmperf -------------------------------------------------------------------------------------------------


def test_llmperf_summary_reads_seconds_and_keeps_its_itl_out() -> None:
    (record,) = import_file(LLMPERF_SUMMARY)
    assert detect_format(LLMPERF_SUMMARY.read_text()) == "llmperf"
    assert record.tool == "llmperf" and record.concurrency == 5
    assert record.model == "llama-2-70b-chat" and record.model_path == "together_ai/togethercomputer/llama-2-70b-chat"
    # all output over the wall time, over the mean output length
    assert record.requests_per_s == pytest.approx(216.45553311958628 / 158.59333333333333)
    assert record.input_tokens == 550 and record.output_tokens == pytest.approx(158.5933, abs=1e-3)
    assert record.ttft_ms.p50 == pytest.approx(635.2748079999628)
    assert record.e2e_ms.p99 == pytest.approx(3534.966199110031)
    # llmperf's inter-token latency is e2e / output tokens, TTFT included: not the streaming gap
    assert record.itl_ms.available == [] and "TTFT included" in (record.notes or "")
    assert record.engine == "unknown" and "framework 'together'" in (record.notes or "")
    assert str(record.measured) == "2023-12-19"
    assert record.prefix_share is None


def test_llmperf_per_request_file_matches_its_summary(tmp_path: Path) -> None:
    (requests,) = import_file(LLMPERF_REQUESTS)
    (summary,) = import_file(LLMPERF_SUMMARY)
    assert detect_format(LLMPERF_REQUESTS.read_text()) == "llmperf-requests"
    # the 150 requests' own mean and median, as llmperf summarised them
    assert requests.ttft_ms.mean == pytest.approx(summary.ttft_ms.mean)
    assert requests.ttft_ms.p50 == pytest.approx(summary.ttft_ms.p50)
    assert requests.e2e_ms.p90 == pytest.approx(summary.e2e_ms.p90)
    assert requests.output_tokens == pytest.approx(summary.output_tokens)
    assert requests.requests_per_s == summary.requests_per_s and requests.concurrency == 5
    assert requests.failed == 0
    alone = tmp_path / LLMPERF_REQUESTS.name
    shutil.copy(LLMPERF_REQUESTS, alone)
    with pytest.raises(DataFileError, match="_summary.json"):
        import_file(alone)


# --- engines -------------------------------------------------------------------------------------------------


def test_vllm_client_driving_sglang_takes_the_engine_from_its_framework(tmp_path: Path) -> None:
    data = _json(VLLM_CLIENT_ON_SGLANG)
    (plain,) = import_file(VLLM_CLIENT_ON_SGLANG)
    assert plain.engine == "vllm"  # the client's backend: all the file says
    # the key `--metadata framework=sgl` adds at the top level (neuralmagic/benchmark-compare's script)
    (sgl,) = import_file(_write(tmp_path, "sgl.json", {**data, "framework": "sgl"}))
    assert sgl.engine == "sglang" and "framework=sgl" in (sgl.notes or "")
    (other,) = import_file(_write(tmp_path, "cloud.json", {**data, "framework": "together"}))
    assert other.engine == "vllm" and "not an engine" in (other.notes or "")


def test_sglang_disaggregated_server_info_keeps_the_model_and_engine(tmp_path: Path) -> None:
    line = json.loads(SGLANG_RANDOM.read_text().splitlines()[0])
    server = {"model_path": "/models/Llama-3.3-70B-Instruct", "version": "0.5.3", "disaggregation_mode": "decode"}
    # a prefill/decode router answers /get_server_info with one list per role (sgl-project/sglang#7731)
    info = {"prefill": [{**server, "disaggregation_mode": "prefill"}], "decode": [server, server]}
    (record,) = import_file(_write(tmp_path, "pd.jsonl", {**line, "server_info": info}))
    assert (record.model, record.model_path) == ("Llama-3.3-70B-Instruct", "/models/Llama-3.3-70B-Instruct")
    assert (record.engine, record.engine_version) == ("sglang", "0.5.3")
    assert "1 prefill server, 2 decode servers" in (record.notes or "")


# --- latency keys no reader knows ----------------------------------------------------------------------------


def test_an_unknown_latency_key_is_named_and_makes_the_record_incomplete(tmp_path: Path) -> None:
    data = _json(VLLM_CLIENT_ON_SGLANG)
    path = _write(tmp_path, "extra.json", {**data, "p99_tbt_ms": 41.0, "mean_request_latency_s": 9.1})
    (record,) = import_file(path, gpu="h200-sxm", gpu_count=1, precision="bf16")
    assert record.unread_latency == ("mean_request_latency_s", "p99_tbt_ms")
    assert record.warnings and "p99_tbt_ms" in record.warnings[0]
    assert record.missing == ["latency"] and not record.complete
    (clean,) = import_file(VLLM_CLIENT_ON_SGLANG, gpu="h200-sxm", gpu_count=1, precision="bf16")
    assert clean.complete and clean.warnings is None


# --- prefix share ---------------------------------------------------------------------------------------------


def test_prefix_share_of_the_random_dataset_is_zero_and_unknown_elsewhere() -> None:
    records = import_file(SGLANG_RANDOM)
    datasets = [json.loads(line)["dataset_name"] for line in SGLANG_RANDOM.read_text().splitlines() if line.strip()]
    assert datasets == ["random"] * 5 + ["sharegpt"] * 2
    # random tokens share nothing; ShareGPT's conversations do not say
    assert [r.prefix_share for r in records] == [0.0] * 5 + [None] * 2
    (unknown,) = import_file(VLLM_CLIENT_ON_SGLANG)
    assert unknown.prefix_share is None and unknown.prefix_share_text == "unknown"
    (given_share,) = import_file(VLLM_CLIENT_ON_SGLANG, prefix_share=0.4)
    assert given_share.prefix_share == 0.4
    # a share the run states itself stands: the user's fills in only where the file is silent
    stated = import_file(SGLANG_RANDOM, prefix_share=0.4)
    assert [r.prefix_share for r in stated] == [0.0] * 5 + [0.4] * 2
    assert "given, not used" in (stated[0].notes or "")


@pytest.mark.parametrize(
    ("settings", "share"),
    [
        # SGLang's defaults: 15 of 16 prompts reuse a 2,048-token system prompt before a 128-token question
        ({"dataset_name": "generated-shared-prefix"}, 15 / 16 * 2048 / 2176),
        (
            {
                "dataset_name": "generated-shared-prefix",
                "gsp_prompts_per_group": "4",
                "gsp_system_prompt_len": "1000",
                "gsp_question_len": "1000",
            },
            0.75 * 0.5,
        ),
        # vLLM's prefix_repetition defaults, 100 prompts over 10 prefixes of 256 before 256-token suffixes
        ({"dataset_name": "prefix_repetition", "num_prompts": 100}, 0.9 * 0.5),
        ({"dataset_name": "random", "random_prefix_len": "512", "random_input_len": "1536"}, 0.25),
        ({"dataset_name": "random"}, 0.0),
        ({"dataset_name": "sharegpt"}, None),
        ({}, None),
    ],
)
def test_prefix_share_from_the_runs_dataset_settings(settings: dict[str, Any], share: float | None) -> None:
    fields = Fields(index=1, line=1)
    read_prefix_share(settings, None, fields)
    assert fields.prefix_share == (None if share is None else pytest.approx(share, abs=1e-4))


def test_a_prefix_share_outside_zero_to_one_is_refused() -> None:
    with pytest.raises(InputError, match="from 0 to 1"):
        import_file(VLLM_CLIENT_ON_SGLANG, prefix_share=1.2)


def test_sizing_from_a_record_without_a_prefix_share_says_what_it_assumed() -> None:
    gpus = load_gpu_specs()
    base = load_records().get("sglang-llama-3.3-70b-bf16-4xh200-rate8")
    unknown = ThroughputRecord.model_validate({**base.model_dump(), "prefix_share": None})
    known = replica_capacity(base, gpus.get(base.gpu or ""), 1000, 0.0, 1.0, 200)
    assumed = replica_capacity(unknown, gpus.get(base.gpu or ""), 1000, 0.0, 1.0, 200)
    assert "does not state its prefix share: assumed 0%" in assumed.note
    assert "prefix share" not in known.note
    assert assumed.requests_per_s == pytest.approx(known.requests_per_s)  # the bundled record states 0


def test_records_that_do_not_state_a_prefix_share_compare_only_with_each_other() -> None:
    base = load_records().get("sglang-llama-3.3-70b-bf16-4xh200-rate8")
    unknown = ThroughputRecord.model_validate({**base.model_dump(), "id": "u", "prefix_share": None})
    assert comparable(unknown, unknown.model_copy(update={"id": "v"}))[0]
    ok, reasons = comparable(base, unknown)
    assert not ok and "prefix share is not stated for u" in reasons[0]


# --- hostile input --------------------------------------------------------------------------------------------

_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 10**6), st.floats(allow_nan=True), st.text(max_size=8), st.just([])
)


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "hw",
                "conc",
                "tput_per_gpu",
                "output_tput_per_gpu",
                "input_tput_per_gpu",
                "mean_e2el",
                "tp",
                "model",
                "precision",
                "framework",
                "scenario_type",
                "num_requests_successful",
                "duration_seconds",
                "mean_input_tokens",
                "infmax_model_prefix",
                "request_metrics",
                "num_prefill_gpu",
                "p99_ttft",
            ]
        ),
        _VALUES,
        max_size=18,
    )
)
def test_hostile_inferencemax_results_fail_with_a_message_never_a_traceback(data: dict[str, Any]) -> None:
    data = {"hw": "b200", "tput_per_gpu": 1.0, "infmax_model_prefix": "x", **data}
    try:
        import_file("agg.json", text=json.dumps(data), name="agg.json")
    except (DataFileError, InputError) as exc:
        assert str(exc)


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "num_concurrent_requests",
                "results_number_output_tokens_mean",
                "results_mean_output_throughput_token_per_s",
                "results_num_completed_requests_per_min",
                "results_ttft_s_mean",
                "results_number_errors",
                "model",
                "timestamp",
                "results_end_to_end_latency_s_quantiles_p99",
            ]
        ),
        _VALUES,
        max_size=9,
    )
)
def test_hostile_llmperf_summaries_fail_with_a_message_never_a_traceback(data: dict[str, Any]) -> None:
    data = {"num_concurrent_requests": 2, "results_x": 1, **data}
    try:
        import_file("x_summary.json", text=json.dumps(data), name="x_summary.json")
    except (DataFileError, InputError) as exc:
        assert str(exc)


# --- the command line -----------------------------------------------------------------------------------------


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    from calculator.cli import main

    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_measurements_import_shows_an_unknown_prefix_share_and_takes_one(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _cli(capsys, "measurements", "import", str(VLLM_CLIENT_ON_SGLANG))
    assert code == 0 and "unknown" in out and "--prefix-share" in out
    code, out, _ = _cli(
        capsys, "measurements", "import", str(VLLM_CLIENT_ON_SGLANG), "--prefix-share", "0.25", "--json"
    )
    assert code == 0 and json.loads(out)[0]["prefix_share"] == 0.25
    code, _, err = _cli(capsys, "measurements", "import", str(VLLM_CLIENT_ON_SGLANG), "--prefix-share", "2")
    assert code != 0 and "outside 0..1" in err


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "tput_per_gpu",
                "output_tput_per_gpu",
                "input_tput_per_gpu",
                "mean_e2el",
                "median_ttft",
                "p99_itl",
                "request_throughput",
                "output_token_throughput",
                "total_token_throughput",
                "median_ttft_ms",
            ]
        ),
        _VALUES,
        max_size=10,
    ),
    st.sampled_from([{"hardware": "mi300x", "model": "dsr1", "num_decode_gpu": 8}, {"hw": "b200", "tp": 4}]),
)
def test_hostile_api_rows_and_baselines_fail_with_a_message_never_a_traceback(
    metrics: dict[str, Any], row: dict[str, Any]
) -> None:
    data = {**row, "conc": 8, "framework": "sglang", "precision": "fp8", "metrics": metrics}
    try:
        import_file("row.json", text=json.dumps([data]), name="row.json")
    except (DataFileError, InputError) as exc:
        assert str(exc)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_any_model_text_reduces_to_a_name_and_keeps_a_path_only_when_it_was_one(text: str) -> None:
    name, path = model_name(text)
    assert isinstance(name, str)
    assert path is None or path == text.strip()


def test_an_unknown_latency_metric_of_an_aiperf_or_guidellm_export_is_named(tmp_path: Path) -> None:
    aiperf = _json(BENCH / "aiperf" / "aiperf-0.13.0_c4_profile_export_aiperf.json")
    aiperf["time_to_last_byte"] = {"unit": "ms", "avg": 91.0, "p50": 90.0}
    (record,) = import_file(_write(tmp_path, "profile_export_aiperf.json", aiperf))
    assert record.unread_latency == ("time_to_last_byte",) and "latency" in record.missing
    guidellm = _json(BENCH / "guidellm" / "guidellm-0.8.1_concurrent_benchmarks.json")
    guidellm["benchmarks"][0]["metrics"]["request_prefill_latency"] = guidellm["benchmarks"][0]["metrics"][
        "request_latency"
    ]
    first = import_file(_write(tmp_path, "benchmarks.json", guidellm))[0]
    assert first.unread_latency == ("request_prefill_latency",)
    # the metrics each tool writes and the importer leaves out on purpose are not warned
    assert all(
        r.unread_latency is None for r in import_file(BENCH / "aiperf" / "aiperf-0.13.0_c4_profile_export_aiperf.json")
    )
