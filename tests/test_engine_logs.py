"""Memory that matches the engines: checkpoint formats, the KV dtype default, engine overheads checked
against public engine logs (tests/fixtures/engine_logs, sources in tests/fixtures/README.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from calculator.capacity.engine_logs import check_log, read_log
from calculator.capacity.memory import default_kv_dtype, fit, kv_split, weight_bytes
from calculator.catalog.gpus import load_gpu_specs
from calculator.catalog.models import load_model_specs
from calculator.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
LOGS = sorted((FIXTURES / "engine_logs").glob("*.log"))
MODELS = load_model_specs()
GPUS = load_gpu_specs()
GIB = 2**30


BOUNDED = [p for p in LOGS if read_log(p).header.get("bound") != "excluded"]


@pytest.mark.parametrize("path", BOUNDED, ids=lambda p: p.stem)
def test_fit_is_within_5_percent_of_the_kv_cache_an_engine_log_reports(path: Path) -> None:
    # Fitted on: vllm-19996, vllm019 Llama-3.1-8B TP1/TP2 (vLLM); both SGLang logs. Every other log is held out.
    # Under 10 GiB of KV memory per GPU the bound is 1 GiB (a few hundred MiB of overhead is a large share of a
    # small budget): Qwen3-32B and gpt-oss-120b on one H100.
    check = check_log(read_log(path), MODELS, GPUS, FIXTURES)
    assert check.within_bound, f"{path.stem}: error {check.error:+.1%}, {check.gib_error} GiB"


def test_at_least_five_held_out_logs_and_five_within_5_percent_in_tokens() -> None:
    held_out = [p for p in BOUNDED if read_log(p).role == "hold-out"]
    in_tokens = [p for p in BOUNDED if read_log(p).reported_tokens and not read_log(p).compares_memory]
    assert len(held_out) >= 5 and len(in_tokens) >= 5
    for path in in_tokens:
        assert abs(check_log(read_log(path), MODELS, GPUS, FIXTURES).error) <= 0.05


def test_the_excluded_log_is_a_known_miss_that_says_why() -> None:
    # vLLM with an LMCache connector (vllm#21348): about +27% tokens; the note says why it is out of the bound
    for path in set(LOGS) - set(BOUNDED):
        case = read_log(path)
        assert case.role == "hold-out" and "LMCache" in case.header["note"]
        assert 0.05 < check_log(case, MODELS, GPUS, FIXTURES).error < 0.5


def test_llama_8b_on_one_h100_caches_close_to_the_410128_tokens_vllm_logged() -> None:
    # vllm#19996: 410,128 tokens (with an EAGLE head: one more layer of KV, 0.47 GiB more weights); hand:
    # 0.9 x 0.99 x 80 GiB - 16.06 GB - (0.13 GiB + 1024 x 128,256 x 34 B = 4.29 GiB) = 52.0 GiB / 128 KiB = 426k
    result = fit(MODELS.get("llama-3.1-8b"), GPUS.get("h100-sxm"), "bf16", 131072)
    assert result.engine == "vllm" and result.utilisation == 0.9
    assert result.max_cached_tokens == pytest.approx(410_128, rel=0.05)


def test_every_log_names_its_source_and_a_kv_line() -> None:
    assert len(LOGS) >= 5
    for path in LOGS:
        case = read_log(path)
        assert case.header["url"].startswith("https://")
        assert (case.reported_tokens or 0) > 0 or (case.reported_kv_gib or 0) > 0


def test_gpt_oss_120b_mxfp4_weights_come_close_to_what_vllm_loads_on_one_h100() -> None:
    model = MODELS.get("gpt-oss-120b")
    # files: 114.7B experts x 4.25 bits (E2M1 + an E8M0 scale per 32) + 2.1B x 2 bytes = 65.13 GB = 60.66 GiB
    assert weight_bytes(model, "fp4") / GIB == pytest.approx(60.66, abs=0.01)
    # vLLM on one H100 prints "Model loading took 64.38 GiB" (vllm#33155; llm-d-benchmark's summary), the peak
    # while it repacks the experts: its KV sizing keeps 0.9 x 79.18 = 71.26 - 3.33 (KV) - 7.38 (activation)
    # - 0.13 (non-torch) = 60.42 GiB for the weights it keeps (llm-d-benchmark empirical-vllm-memory-results.md)
    assert weight_bytes(model, "fp4") / GIB == pytest.approx(60.42, rel=0.01)
    assert weight_bytes(model, "fp4") / GIB == pytest.approx(64.38, rel=0.065)
    # at another precision the rule stays parameters x bytes: 116.8B x 1 byte
    assert weight_bytes(model, "fp8") == pytest.approx(116.8e9)


def test_deepseek_v3_fp8_checkpoint_keeps_embeddings_and_head_in_bf16() -> None:
    model = MODELS.get("deepseek-v3")
    # 671B at 1 byte plus the BF16 embeddings and head (2 x 129,280 x 7,168 = 1.85B) and router (0.11B) a
    # second byte each, plus one FP32 scale per 128 x 128 block: 669.04 x 1.000244 + 1.96 x 2 = 673.1 GB
    assert weight_bytes(model, "fp8") / 1e9 == pytest.approx(673.1, abs=0.1)
    assert weight_bytes(model, "fp8") > 671e9


def test_kv_cache_defaults_to_the_model_dtype_whatever_the_weights() -> None:
    # vLLM and SGLang --kv-cache-dtype auto: BF16 beside FP8 or FP4 weights; FP8 only when asked
    assert default_kv_dtype("fp8") == "bf16" and default_kv_dtype("fp4") == "bf16"
    assert default_kv_dtype("fp16") == "fp16"
    result = fit(MODELS.get("llama-3.3-70b"), GPUS.get("h100-sxm"), "fp8", 8192, gpus=2)
    assert result.kv_dtype == "bf16" and result.kv_bytes_per_token == 327_680  # 2 x 80 x 8 x 128 x 2
    assert fit(MODELS.get("llama-3.3-70b"), GPUS.get("h100-sxm"), "fp8", 8192, 2, "fp8").kv_bytes_per_token == 163_840


def test_data_parallel_attention_fits_more_tokens_for_an_mla_model_on_8_gpus() -> None:
    model, gpu = MODELS.get("deepseek-v3"), GPUS.get("h200-sxm")
    tp = fit(model, gpu, "fp8", 32768, gpus=8)
    dp = fit(model, gpu, "fp8", 32768, gpus=8, attention="dp")
    # TP keeps the latent on all 8 GPUs, DP keeps each sequence on one; DP repeats the attention weights on
    # every GPU: 673.1 GB x (11.4/671 + (1 - 11.4/671)/8) = 94.1 GB a GPU, where TP splits all: 84.1 GB
    assert tp.kv_replicated and not dp.kv_replicated
    assert tp.weights_per_gpu_gb == pytest.approx(673.1 / 8, abs=0.05)
    assert dp.weights_per_gpu_gb == pytest.approx(673.1 * (11.4 / 671 + (1 - 11.4 / 671) / 8), abs=0.05)
    # so each GPU's budget shrinks by 10 GB, but 8 GPUs each hold their own sequences instead of one copy
    expected = 8 * tp.max_cached_tokens * dp.kv_budget_per_gpu_gb / tp.kv_budget_per_gpu_gb
    assert dp.max_cached_tokens == pytest.approx(expected, rel=1e-6)
    assert dp.max_cached_tokens > 5 * tp.max_cached_tokens and dp.max_sequences > 5 * tp.max_sequences
    assert kv_split(model, 8, attention="dp") == (8, False)


def test_unknown_engine_or_attention_layout_is_a_named_error() -> None:
    model, gpu = MODELS.get("llama-3.1-8b"), GPUS.get("h100-sxm")
    with pytest.raises(InputError, match="engine"):
        fit(model, gpu, engine="tgi")
    with pytest.raises(InputError, match="attention"):
        fit(model, gpu, attention="ep")  # type: ignore[arg-type]


def test_memory_check_prints_every_log() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "memory_check.py")],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    ).stdout
    assert all(p.stem in out for p in LOGS) and "hold-out" in out


def test_int4_group_quantisation_counts_a_scale_per_group() -> None:
    # an AWQ/GPTQ-style checkpoint: 4-bit weights, one FP16 scale and one FP16 zero per 128, embeddings and
    # head (2 x 128,256 x 4,096 = 1.05B) in BF16: 6.98B x (0.5 + 4/128) + 1.05B x 2 = 3.71 + 2.10 = 5.81 GB
    from calculator.catalog.models import Checkpoint
    from calculator.catalog.prices import Source

    source = Source.model_validate(
        {"url": "https://huggingface.co/docs/transformers/quantization/awq", "read": "2026-11-30"}
    )
    checkpoint = Checkpoint(format="int4", group_size=128, scale_bytes=4, high_precision_params_b=1.05, source=source)
    model = MODELS.get("llama-3.1-8b").model_copy(update={"checkpoint": checkpoint})
    assert weight_bytes(model, "int4") / 1e9 == pytest.approx((8.03 - 1.05) * (0.5 + 4 / 128) + 1.05 * 2, rel=1e-9)
    assert weight_bytes(model, "bf16") == pytest.approx(8.03e9 * 2)  # another precision: parameters x bytes


def test_fit_command_takes_the_engine_and_the_attention_layout(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from calculator.cli.parser import main

    args = ["fit", "--model", "deepseek-v3", "--gpu", "h200-sxm", "--precision", "fp8", "--gpus", "8"]
    assert main([*args, "--engine", "sglang", "--attention", "dp", "--context", "32768", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["engine"] == "sglang" and data["attention"] == "dp" and data["kv_replicated"] is False
    assert data["utilisation"] == 0.81  # SGLang's mem_fraction_static default on 8 GPUs
    assert data["weights_basis"].startswith("the FP8 checkpoint as published")
