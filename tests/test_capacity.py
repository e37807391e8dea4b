"""Memory fit, the roofline against published measurements, and sizing at a latency target."""

from __future__ import annotations

import pytest

from calculator.capacity.calibration import check_cases, estimate_error, summarise
from calculator.capacity.memory import fit, weight_bytes
from calculator.capacity.roofline import decode, expert_share_read
from calculator.capacity.sizing import best_under_target
from calculator.catalog.gpus import load_gpu_specs
from calculator.catalog.measurements import Latency, ThroughputRecord, comparable, load_records
from calculator.catalog.models import load_model_specs
from calculator.errors import InputError
from calculator.scenario.inputs import LatencyTarget

MODELS = load_model_specs()
GPUS = load_gpu_specs()


def test_weights_of_a_mixture_of_experts_count_every_expert() -> None:
    mixtral = MODELS.get("mixtral-8x7b")
    assert weight_bytes(mixtral, "bf16") == pytest.approx(mixtral.params_total_b * 2e9)
    assert weight_bytes(mixtral, "int4") == pytest.approx(mixtral.params_total_b * 0.5e9)


# vLLM's reserve on one H100 (releases 0.9-0.16, from llm-d's 0.11 logs): 0.28 GiB fixed + 1,024 sequences x
# 128,256 logits x 37.7 B of sampler warm-up + the RoPE table (131,072 positions x 128 x 2 B) = 0.28 + 4.61 + 0.03
LLAMA_RESERVE_GIB = 0.28 + 1024 * 128_256 * 37.7 / 2**30 + 131_072 * 128 * 2 / 2**30
H100_GIB = 79.19  # what CUDA reports of an "80 GB" H100 (vLLM 0.19 logs: total_memory=79.19GiB)


def test_70b_at_fp8_fills_an_h100_and_does_not_fit_at_32k_context() -> None:
    # vLLM may use 90% of what CUDA reports: 0.9 x 79.19 GiB = 76.53 GB; 70.6 GB of FP8 weights and the
    # reserve (4.92 GiB, 5.28 GB) leave 0.64 GB, short of one 32k sequence in BF16 (32,768 x 320 KiB = 10.74 GB)
    result = fit(MODELS.get("llama-3.3-70b"), GPUS.get("h100-sxm"), "fp8", 32768)
    assert not result.fits and result.max_sequences == 0
    assert result.kv_bytes_per_token == 327_680  # 2 x 80 layers x 8 KV heads x 128 x 2 bytes
    budget = (0.9 * H100_GIB * 2**30 - 70.6e9 - LLAMA_RESERVE_GIB * 2**30) / 1e9
    assert result.kv_budget_per_gpu_gb == pytest.approx(budget, abs=0.01)
    assert result.shortfall_gb == pytest.approx(32768 * 327_680 / 1e9 - budget, abs=0.01)
    assert any("2 GPUs" in s for s in result.suggestions)
    # the longest context one BF16 sequence can hold in 0.64 GB: 0.64e9 / 320 KiB = 1,9xx tokens
    assert result.max_context_that_fits == pytest.approx(budget * 1e9 / 327_680, abs=16)
    assert any(f"{result.max_context_that_fits:,} tokens" in s for s in result.suggestions)
    # with an FP8 cache (the user's choice): 2k x 160 KiB = 0.34 GB a sequence, one fits in 0.64 GB
    fp8_kv = fit(MODELS.get("llama-3.3-70b"), GPUS.get("h100-sxm"), "fp8", 2048, kv_dtype="fp8")
    assert fp8_kv.max_sequences == int(budget * 1e9 // (2048 * 163_840)) == 1


def test_kv_budget_gives_the_number_of_sequences() -> None:
    # Llama-3.1-8B BF16 on an H100: 0.9 x 79.19 GiB - 16.06 GB - the 4.92 GiB reserve; 8k x 128 KiB each
    result = fit(MODELS.get("llama-3.1-8b"), GPUS.get("h100-sxm"), "bf16", 8192)
    assert result.fits and result.usable_memory_per_gpu_gib == pytest.approx(H100_GIB)
    assert result.max_sequences == int(
        (0.9 * H100_GIB * 2**30 - 16.06e9 - LLAMA_RESERVE_GIB * 2**30) // (8192 * 131_072)
    )
    assert result.kv_budget_per_gpu_gib == pytest.approx(result.kv_budget_per_gpu_gb * 1e9 / 2**30)


def test_tensor_parallel_splits_kv_across_kv_heads_only() -> None:
    llama = MODELS.get("llama-3.3-70b")  # 8 KV heads
    on8 = fit(llama, GPUS.get("h200-sxm"), "bf16", 8192, gpus=8)
    on16 = fit(llama, GPUS.get("h200-sxm"), "bf16", 8192, gpus=16)
    assert not on8.kv_replicated and on16.kv_replicated
    assert on16.kv_per_sequence_per_gpu_gb == pytest.approx(on8.kv_per_sequence_per_gpu_gb)


def test_mla_latent_is_replicated_on_every_gpu() -> None:
    result = fit(MODELS.get("deepseek-v3"), GPUS.get("h200-sxm"), "fp8", 32768, gpus=8)
    assert result.kv_replicated
    # BF16 latent by default now (the model's dtype), not split
    assert result.kv_per_sequence_per_gpu_gb == pytest.approx(61 * 576 * 2 * 32768 / 1e9)


def test_unknown_precision_is_a_named_error() -> None:
    with pytest.raises(InputError, match="precision"):
        fit(MODELS.get("llama-3.1-8b"), GPUS.get("h100-sxm"), "fp3", 8192)


def test_a_batch_touches_more_experts_as_it_grows() -> None:
    mixtral = MODELS.get("mixtral-8x7b")  # 8 experts, 2 per token
    assert expert_share_read(mixtral, 1) == pytest.approx(0.25)
    assert expert_share_read(mixtral, 2) == pytest.approx(1 - 0.75**2)
    assert expert_share_read(mixtral, 64) == pytest.approx(1.0, abs=1e-6)
    assert expert_share_read(MODELS.get("llama-3.1-8b"), 8) == 1.0


def test_decode_is_memory_bound_at_batch_one_and_compute_bound_at_large_batch() -> None:
    model, gpu = MODELS.get("llama-3.1-8b"), GPUS.get("h100-sxm")
    assert decode(model, gpu, "bf16", 1, 1000).bound == "memory"
    assert decode(model, gpu, "bf16", 2048, 100).bound == "compute"


def test_the_roofline_is_as_accurate_on_held_out_measurements_as_it_states() -> None:
    # the accuracy stated in calculator/capacity/roofline.py and printed by benchmarks/roofline_check.py:
    # on 265 held-out points (222 mixture-of-experts) a median |error| of 36% and a worst of 362% once
    # TensorRT-LLM's later perf overview, dstack's DeepSeek-R1 MI300X / H200 runs, NIM's sweep and MLPerf v5.1's
    # MI300X, MI325X, H200 and B200 runs joined the hold-out
    # (2026-12-02; 19% and 243% on the 63 points before). It misses the targets; this pins the stated
    # figure so a change that worsens it is seen.
    held = summarise(check_cases(MODELS, GPUS), "holdout")
    assert held.points >= 40 and held.moe_points >= 10
    assert held.median_abs <= 0.36
    assert held.worst_abs <= 3.65
    error = estimate_error()
    assert error.points == held.points and error.median_abs == held.median_abs
    assert error.low_factor <= 1 <= error.high_factor


def test_the_roofline_is_within_25_percent_of_most_of_the_measurements_it_was_fitted_to() -> None:
    fitted = summarise(check_cases(MODELS, GPUS), "fit")
    assert fitted.median_abs <= 0.12
    assert fitted.low >= -0.25 and fitted.high <= 0.45


def test_measurements_above_the_physical_ceiling_are_set_aside() -> None:
    # 120 tokens/s for one user of a 70B FP8 model on one H100 needs more than its 3.35 TB/s (47 tokens/s)
    flagged = {r.case.id for r in check_cases(MODELS, GPUS) if not r.plausible}
    assert "vllm-70b-fp8-h100-c1" in flagged


def _level(rate: float, ttft95: float, itl95: float) -> ThroughputRecord:
    return ThroughputRecord.model_validate(
        {
            "id": f"level-{rate:g}",
            "engine": "vllm",
            "input_tokens": 1000,
            "output_tokens": 200,
            "requests_per_s": rate,
            "ttft_ms": Latency(p95=ttft95),
            "itl_ms": Latency(p95=itl95),
            "source": {"document": "test", "read": "2026-01-01"},
        }
    )


def test_highest_throughput_meeting_the_latency_target_is_chosen() -> None:
    levels = [_level(1, 200, 20), _level(4, 600, 30), _level(8, 1400, 45), _level(16, 4000, 90)]
    best, reasons = best_under_target(levels, LatencyTarget(percentile="p95", ttft_ms=1000, tokens_per_s_per_user=25))
    assert best is not None and best.requests_per_s == 4  # rate 8 misses TTFT, and 22 tokens/s per user
    assert any("TTFT p95 1400 ms > 1000 ms" in r for r in reasons)


def test_a_percentile_the_file_does_not_hold_is_said_not_guessed() -> None:
    best, reasons = best_under_target([_level(1, 200, 20)], LatencyTarget(percentile="p99", ttft_ms=1000))
    assert best is None and "no TTFT p99 in the record (it has: p95)" in reasons[0]


def test_records_compare_only_under_the_same_conditions() -> None:
    records = load_records()
    rate4 = records.get("sglang-llama-3.3-70b-bf16-4xh200-rate4")
    rate8 = records.get("sglang-llama-3.3-70b-bf16-4xh200-rate8")
    h100 = records.get("vllm-llama-3.3-70b-fp8-1xh100-c50")
    assert comparable(rate4, rate8) == (True, [])
    ok, why = comparable(rate4, h100)
    assert not ok
    assert "precision differs: bf16 vs fp8" in why and "gpu differs: h200-sxm vs h100-sxm" in why
