"""The engine as an input of the roofline: an engine family's speed factor, fitted on that family's fit
cases only, applied where the roofline computes a step and a prefill rate (the experiment behind
``benchmarks/roofline_check.py --per-engine``; the defaults keep the shared efficiencies)."""

from __future__ import annotations

import pytest

from calculator.capacity.calibration import (
    MIN_ENGINE_FIT_CASES,
    Case,
    check_cases,
    engine_family,
    estimate_error,
    fit_engine_assumptions,
    load_cases,
)
from calculator.capacity.roofline import DEFAULT_ASSUMPTIONS, RooflineAssumptions, decode_step, prefill_rate
from calculator.catalog.gpus import load_gpu_specs
from calculator.catalog.models import load_model_specs
from calculator.catalog.prices import Source

MODELS = load_model_specs()
GPUS = load_gpu_specs()
H100 = GPUS.get("h100-sxm")
"""H100 SXM: 3.35 TB/s, 989.5 dense BF16 TFLOP/s (NVIDIA's datasheet, as in calculator/data/gpu_specs)."""
NO_FLOOR = RooflineAssumptions(layer_overhead_us=0, sequence_overhead_us=0, tp_overhead=0)


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("vLLM v0.11.0", "vllm"),
        ("vllm 0.9.0 (V1)", "vllm"),
        ("vllm (Lambda, 2026)", "vllm"),
        ("SGLang v0.5.6.post2", "sglang"),
        ("sglang glm5-blackwell image (2026-02)", "sglang"),
        ("tensorrt-llm (PyTorch backend, v1.0 docs)", "tensorrt-llm"),
        ("TensorRT-LLM (page)", "tensorrt-llm"),
        ("trtllm", "tensorrt-llm"),
        ("llama.cpp", None),
    ],
)
def test_engine_names_normalise_to_their_family_whatever_the_version(name: str, family: str | None) -> None:
    assert engine_family(name) == family


def test_every_bundled_case_names_an_engine_of_a_known_family() -> None:
    assert all(engine_family(c.engine) is not None for c in load_cases())


def test_an_engine_speed_factor_scales_a_decode_step_by_hand() -> None:
    # 16 GB read at 3.35 TB/s x 0.8 = 5.970 ms (memory bound: 16e9 FLOPs at 989.5 TFLOP/s x 0.55 is 0.03 ms);
    # an engine at 0.9x the shared speed takes 5.970 / 0.9 = 6.633 ms
    a = NO_FLOOR.model_copy(update={"bandwidth_efficiency": 0.8, "engine_speed": 0.9})
    point = decode_step(H100, "bf16", 1, 16e9, 16e9, 1, a)
    assert point.step_ms == pytest.approx(6.633, abs=0.001)
    assert decode_step(
        H100, "bf16", 1, 16e9, 16e9, 1, NO_FLOOR.model_copy(update={"bandwidth_efficiency": 0.8})
    ).step_ms == pytest.approx(5.970, abs=0.001)


def test_an_engine_speed_factor_scales_prefill_by_hand() -> None:
    # 989.5e12 x 0.6 / 16e9 FLOPs a token = 37,106 tokens/s; x 1.2 = 44,528
    a = NO_FLOOR.model_copy(update={"prefill_flops_efficiency": 0.6, "engine_speed": 1.2})
    assert prefill_rate(H100, "bf16", 16e9, 1, a) == pytest.approx(44_528, rel=1e-4)


def test_a_family_s_assumptions_apply_to_its_own_cases_only() -> None:
    cases = [c for c in load_cases() if c.split == "fit"][:40]
    shared = {r.case.id: r.estimate for r in check_cases(MODELS, GPUS, DEFAULT_ASSUMPTIONS, cases)}
    slow = DEFAULT_ASSUMPTIONS.model_copy(update={"engine_speed": 0.5})
    moved = check_cases(MODELS, GPUS, DEFAULT_ASSUMPTIONS, cases, per_engine={"sglang": slow})
    for r in moved:
        # every time in a case's estimate is divided by the speed, so its throughput halves exactly
        expected = shared[r.case.id] * (0.5 if engine_family(r.case.engine) == "sglang" else 1.0)
        assert r.estimate == pytest.approx(expected, rel=1e-9)
    assert any(engine_family(r.case.engine) == "sglang" for r in moved)


def _decode_cases(n: int) -> list[Case]:
    """``n`` single-family fit cases (TensorRT-LLM's fixed-length tables), half re-sourced to a second
    document so the family passes the two-source rule."""
    mine = [c for c in load_cases() if c.split == "fit" and engine_family(c.engine) == "tensorrt-llm"][:n]
    other = Source(url="https://example.org/second-document", read=mine[0].source.read)
    return [c if i % 2 else c.model_copy(update={"source": other}) for i, c in enumerate(mine)]


def test_the_per_engine_fit_recovers_a_known_engine_speed() -> None:
    # measurements made exactly 0.8x the shared estimate: the one speed factor that explains them is 0.8
    cases = _decode_cases(MIN_ENGINE_FIT_CASES)
    shared = DEFAULT_ASSUMPTIONS.efficiencies_only()
    estimates = {r.case.id: r.estimate for r in check_cases(MODELS, GPUS, shared, cases)}
    slower = [c.model_copy(update={"measured": estimates[c.id] * 0.8}) for c in cases]
    fitted = fit_engine_assumptions(MODELS, GPUS, shared, "speed", slower, rounds=1)
    assert set(fitted) == {"tensorrt-llm"}
    assert fitted["tensorrt-llm"].engine_speed == pytest.approx(0.8)


def test_a_family_with_too_few_fit_cases_keeps_the_shared_efficiencies() -> None:
    cases = _decode_cases(MIN_ENGINE_FIT_CASES - 1)
    assert fit_engine_assumptions(MODELS, GPUS, DEFAULT_ASSUMPTIONS, "speed", cases, rounds=1) == {}
    # one source document, however many points, is one run's conditions, not the engine's
    one_source = [c for c in load_cases() if c.split == "fit" and engine_family(c.engine) == "tensorrt-llm"][:10]
    assert fit_engine_assumptions(MODELS, GPUS, DEFAULT_ASSUMPTIONS, "speed", one_source, rounds=1) == {}


def test_the_per_engine_fit_never_reads_the_hold_out_cases() -> None:
    cases = _decode_cases(MIN_ENGINE_FIT_CASES)
    held = [c.model_copy(update={"split": "holdout", "measured": c.measured * 1000}) for c in cases]
    shared = DEFAULT_ASSUMPTIONS.efficiencies_only()
    alone = fit_engine_assumptions(MODELS, GPUS, shared, "speed", cases, rounds=1)
    assert fit_engine_assumptions(MODELS, GPUS, shared, "speed", [*cases, *held], rounds=1) == alone


def test_the_shipped_defaults_keep_one_speed_for_every_engine() -> None:
    # per-engine factors did not improve the hold-out (benchmarks/roofline_check.py --per-engine), so the
    # defaults and the error band users see stay the shared ones
    assert DEFAULT_ASSUMPTIONS.engine_speed == 1.0
    assert "roofline hold-out" in estimate_error().provenance
