"""TTFT under load: the formula on hand-computed cases, deploy's use of it, and its error on published TTFTs."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from calculator.capacity.roofline import DecodePoint, ReplicaSpeed, replica_speed
from calculator.capacity.ttft import (
    TTFT_ERROR_NOTE,
    TTFT_OVERHEAD_MS,
    check_ttft_cases,
    chunk_tokens_for,
    erlang_c_wait_s,
    fit_overhead_ms,
    loaded_ttft,
    plain_ttft_ms,
)
from calculator.catalog.catalogs import load_catalogs
from calculator.catalog.gpus import load_gpu_specs
from calculator.catalog.models import load_model_specs
from calculator.pricing.deployments import _loaded_ttft_ms, _Search
from calculator.scenario.inputs import LatencyTarget
from calculator.scenario.model import load_preset


def test_a_lone_prompt_on_an_idle_replica_waits_its_prefill_alone() -> None:
    # 1,000 tokens at 10,000 tokens/s: 100 ms; nothing decoding, nothing arriving, no overhead
    alone = loaded_ttft(1000, 10_000, overhead_ms=0)
    assert alone.total_ms == pytest.approx(100.0)
    assert alone.total_ms == pytest.approx(plain_ttft_ms(1000, 10_000))
    # batch 1 (no other sequence decoding) with a decode step given: still nothing rides along
    assert loaded_ttft(1000, 10_000, decode_step_s=0.02, decoding=0, overhead_ms=0).total_ms == pytest.approx(100.0)


def test_decode_batch_and_arrivals_add_by_hand() -> None:
    # 1,000 tokens at 10,000 tok/s = 100 ms of prefill; 7 others decoding, a 20 ms step; 2 req/s arriving.
    # one 2,048-token chunk: (1 + 0.5) x 20 = 30 ms riding and waiting for the step in progress;
    # prefill utilisation 2 x 0.1 = 0.2, M/D/1 wait 0.2 / (2 x 0.8) x 100 = 12.5 ms. Total 142.5 ms.
    t = loaded_ttft(1000, 10_000, decode_step_s=0.02, decoding=7, arrival_rate=2, overhead_ms=0)
    assert t.interference_ms == pytest.approx(30.0)
    assert t.prefill_queue_ms == pytest.approx(12.5)
    assert t.total_ms == pytest.approx(142.5)
    # a bigger batch decodes in a longer step: 40 ms -> (1.5 x 40) = 60 ms riding, 172.5 ms in all
    assert loaded_ttft(1000, 10_000, decode_step_s=0.04, decoding=63, arrival_rate=2, overhead_ms=0).total_ms == (
        pytest.approx(172.5)
    )
    # 5,000 tokens: 3 chunks of 2,048 -> (3 + 0.5) x 20 = 70 ms riding; 500 ms prefill; rho 0.5 -> 250 ms queue
    long = loaded_ttft(5000, 10_000, decode_step_s=0.02, decoding=7, arrival_rate=1, overhead_ms=0)
    assert long.interference_ms == pytest.approx(70.0) and long.prefill_queue_ms == pytest.approx(250.0)


def test_the_prefill_chunk_is_vllms_default_for_the_gpu() -> None:
    # vLLM's get_batch_defaults (OpenAI server): 8,192 tokens from 70 GiB up except the A100, else 2,048
    gpus = load_gpu_specs()
    assert chunk_tokens_for(gpus.get("h100-sxm")) == 8192  # 80 GB = 74.5 GiB
    assert chunk_tokens_for(gpus.get("l40s")) == 2048  # 48 GB
    # a 20,000-token prompt rides ceil(20,000 / 8,192) = 3 steps, not ceil(20,000 / 2,048) = 10
    t = loaded_ttft(20_000, 10_000, decode_step_s=0.02, decoding=7, chunk_tokens=8192, overhead_ms=0)
    assert t.interference_ms == pytest.approx(3.5 * 20)


def test_prefill_work_beyond_the_replica_never_finishes() -> None:
    assert math.isinf(loaded_ttft(1000, 10_000, arrival_rate=10).total_ms)  # 10 x 0.1 s = 100% prefill


def test_erlang_c_matches_the_textbook_queues() -> None:
    # M/M/1 at 50%: wait = rho / (1 - rho) x S = 1 s for a 1 s service
    assert erlang_c_wait_s(1, 0.5, 1.0) == pytest.approx(1.0)
    # M/M/2 at 1 Erlang: P(wait) = 1/3 (Erlang C), wait = 1/3 x S / (2 - 1) = 1/3 s
    assert erlang_c_wait_s(2, 1.0, 1.0) == pytest.approx(1 / 3)
    assert math.isinf(erlang_c_wait_s(4, 4.0, 1.0))


def test_deploys_estimate_ttft_is_the_loaded_one_at_the_target_utilisation() -> None:
    # prefill 10,000 tok/s, batch 8 decoding in 20 ms steps (400 output tok/s); 1,000 in, 200 out.
    # replica time per request = 0.1 + 200 / 400 = 0.6 s; at 70% utilisation 0.7 / 0.6 = 1.1667 req/s.
    # riding 1.5 x 20 = 30 ms; rho = 1.1667 x 0.1 = 0.11667, queue 0.11667 / (2 x 0.88333) x 100 = 6.604 ms;
    # a slot: c = 8, each held 0.1 + 200 x 0.02 = 4.1 s, a = 4.783 Erlangs: Erlang C (computed separately).
    speed = ReplicaSpeed(
        prefill_tokens_per_s=10_000,
        decode=DecodePoint(batch=8, step_ms=20, tokens_per_s_per_user=50, tokens_per_s_total=400, bound="memory"),
    )
    slot_ms = erlang_c_wait_s(8, 0.7 / 0.6 * 4.1, 4.1) * 1000
    expected = 100 + 30 + 0.7 / 0.6 * 0.1 / (2 * (1 - 0.7 / 0.6 * 0.1)) * 100 + slot_ms + TTFT_OVERHEAD_MS
    assert _loaded_ttft_ms(speed, 1000, 200, 8, 0.7, 2048) == pytest.approx(expected)
    assert 6.6 < expected - 100 - 30 - slot_ms - TTFT_OVERHEAD_MS < 6.61


def test_a_target_the_prefill_lower_bound_met_is_no_longer_met_under_load() -> None:
    cat = load_catalogs()
    scenario = load_preset("rag-chatbot")
    spec = cat.models.get("llama-3.1-8b")
    gpu = cat.gpus.get("h200-sxm")  # no measurement of this model on it: an estimate
    shape = scenario.workload
    u, o = (
        float(shape.input_tokens) * (1 - float(shape.prefix_share) * float(shape.hit_rate)),
        float(shape.output_tokens),
    )
    # the old figure at batch 1: the uncached prompt at the roofline's prefill speed
    plain = u / replica_speed(spec, gpu, "bf16", float(shape.input_tokens), o, 1).prefill_tokens_per_s * 1000
    target = LatencyTarget(ttft_ms=plain * 1.01)  # met by the lower bound, by 1%
    search = _Search(scenario, cat, spec, shape, target, None)
    sized = search.replica(gpu, 1, "bf16", "tp", False)
    assert sized is not None and sized.evidence_kind == "estimate"
    # under load even batch 1 adds the per-request overhead and the wait for its one slot at 70% busy
    assert not sized.meets_target
    assert sized.ttft_ms is not None and sized.ttft_ms > plain * 1.01
    # a target is met at its percentile (p95 by default) of the simulated engine, and the note says how far off
    # that simulation is on published runs
    assert "simulated p95" in sized.latency_note and "hold-out median |error|" in sized.latency_note


def test_loaded_ttft_against_published_measurements() -> None:
    # Published median TTFTs at a known load (calculator/data/ttft_cases.yaml, each with its source):
    #   datacrunch-research/h200-benchmarks, SGLang Llama-3.3-70B BF16 on 4x H200: 85.7 ms at 1 req/s, 106.1 at 4
    #   Spheron (spheron.network/blog/vllm-vs-tensorrt-llm-vs-sglang-benchmarks, 2026-03-23), Llama-3.3-70B FP8
    #     on one H100 at 10 in flight: vLLM 120 ms, TensorRT-LLM 105, SGLang 112
    #   nerdalert/vllm-bench-automation, vLLM Llama-3.2-3B on L40S: 52.9 ms at 2.5 req/s, 76.7 at 7.5 (the fit)
    results = {r.case.id: r for r in check_ttft_cases(load_model_specs(), load_gpu_specs())}
    assert len(results) >= 10
    for r in results.values():
        # the lower bound is below every measurement; the loaded figure is closer to each
        assert r.plain_ms < r.case.measured_ttft_ms
        assert abs(r.after_error) < abs(r.before_error)
    held = [r for r in results.values() if r.case.split == "holdout"]
    assert len({r.case.source.url for r in held}) >= 2
    # what the latency note states (TTFT_ERROR_NOTE): hold-out worst 48%, the H100 points within 10%
    assert max(abs(r.after_error) for r in held) < 0.50
    for engine in ("vllm", "trtllm", "sglang"):
        assert abs(results[f"h100-70b-fp8-{engine}-c10"].after_error) < 0.10
    # the 4x H200 points stay under: the model misses about 30 ms per request SGLang spends there
    assert all(results[i].after_error < -0.25 for i in ("h200-70b-rate1", "h200-70b-rate4"))


def test_the_overhead_is_fitted_on_the_fit_cases_only() -> None:
    assert fit_overhead_ms(load_model_specs(), load_gpu_specs()) == TTFT_OVERHEAD_MS


def test_ttft_check_prints_the_fit_and_hold_out_error_the_latency_note_states() -> None:
    root = Path(__file__).resolve().parents[1]
    run = subprocess.run(
        [sys.executable, str(root / "benchmarks" / "ttft_check.py")],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=60,
        check=True,
    )
    out = run.stdout
    assert out.index("IN-SAMPLE (fit)") < out.index("HOLD-OUT (never seen by the fit)")
    held = next(line for line in out.splitlines() if line.startswith("hold-out:"))
    # the figures TTFT_ERROR_NOTE (and so every estimate's latency note) repeats
    assert "after (under load) median |error| 28%, worst 48%" in held
    assert "hold-out median |error| 28%, worst 48%" in TTFT_ERROR_NOTE
