"""Which estimator answers a setup, and the error band it carries: read from the residuals ``make data`` stores."""

from __future__ import annotations

import json

import pytest

from calculator.capacity.calibration import Residual, family_error, load_cases
from calculator.capacity.error_bands import (
    MIN_BAND_POINTS,
    BandFile,
    ErrorBands,
    Family,
    inputs_digest,
    load_error_bands,
)
from calculator.capacity.estimate import estimate_setup
from calculator.capacity.profiled import available
from calculator.capacity.residuals import profiled_version
from calculator.catalog.gpus import load_gpu_specs
from calculator.catalog.models import load_model_specs
from calculator.cli import main

MODELS, GPUS = load_model_specs(), load_gpu_specs()
needs_profiled = pytest.mark.skipif(not available(), reason="the optional extra 'profiled' is not installed")


def _residual(i: int, error: float, *, estimator: str = "roofline", moe: bool = False, engine: str = "vllm",
              architecture: str = "hopper", source: str = "s") -> Residual:  # fmt: skip
    return Residual.model_validate(
        {"case_id": f"c{i}", "source": f"{source}{i % 3}", "estimator": estimator, "measured": 100.0,
         "estimate": 100.0 * (1 + error), "moe": moe, "architecture": architecture, "run": "concurrency",
         "engine": engine}
    )  # fmt: skip


def _bands(residuals: list[Residual]) -> ErrorBands:
    file = BandFile(schema_version=1, inputs_digest="x", roofline_fit_set="test", profiled_version="0",
                    residuals=tuple(residuals))  # fmt: skip
    return ErrorBands(file=file)


def test_the_stored_residuals_are_current_with_the_cases_catalogues_and_code() -> None:
    """`make data` wrote them from what is in the repository now: a stale file fails here, not in a user's bill."""
    stored = load_error_bands().file
    assert stored.inputs_digest == inputs_digest(stored.profiled_version), "run `make data`: error_bands.json is stale"
    if available():
        assert stored.profiled_version == profiled_version()
    # every residual belongs to a bundled case, and the roofline's cover every plausible case
    ids = {c.id for c in load_cases()}
    assert {r.case_id for r in stored.residuals} <= ids
    assert len([r for r in stored.residuals if r.estimator == "roofline"]) >= 150


def test_a_family_too_small_for_its_own_band_takes_the_next_coarser_one() -> None:
    # 12 dense Hopper vLLM points at +10%, 3 dense Hopper SGLang points at -50%, 12 MoE points at +40%
    rs = [_residual(i, 0.10) for i in range(MIN_BAND_POINTS + 2)]
    rs += [_residual(100 + i, -0.50, engine="sglang") for i in range(3)]
    rs += [_residual(200 + i, 0.40, moe=True) for i in range(12)]
    bands = _bands(rs)
    vllm = bands.band("roofline", Family(moe=False, architecture="hopper", engine="vllm"))
    assert vllm.points == 12 and vllm.low_factor == 1.0 and vllm.high_factor == pytest.approx(1.10)
    assert "dense/hopper/vllm" in vllm.provenance
    # SGLang's three points are too few: the band is dense Hopper's 15 (12 at +10%, 3 at -50%)
    sglang = bands.band("roofline", Family(moe=False, architecture="hopper", engine="sglang"))
    assert sglang.points == 15 and "dense/hopper " in sglang.provenance
    expected = family_error([r for r in rs if not r.moe])
    assert sglang.low_factor == pytest.approx(1 + expected.low) and sglang.high_factor == pytest.approx(1.10)
    # a GPU architecture nobody measured: all dense points, then everything
    assert bands.band("roofline", Family(moe=False, architecture="cdna3", engine="vllm")).points == 15


def test_auto_takes_the_profiled_tables_only_where_they_win_on_the_same_held_out_points() -> None:
    roof = [_residual(i, -0.30, engine="tensorrt-llm") for i in range(8)]
    prof = [_residual(i, 0.05, estimator="profiled", engine="tensorrt-llm") for i in range(8)]
    # on MoE the profiled median is lower but its tail is longer: no win
    roof += [_residual(50 + i, 0.25, moe=True) for i in range(8)]
    prof += [_residual(50 + i, 0.20 if i < 6 else 3.0, estimator="profiled", moe=True) for i in range(8)]
    # four points only: too few to prefer the tables whatever they score
    roof += [_residual(90 + i, 0.5, engine="sglang") for i in range(4)]
    prof += [_residual(90 + i, 0.0, estimator="profiled", engine="sglang") for i in range(4)]
    bands = _bands(roof + prof)
    assert bands.choose(Family(moe=False, architecture="hopper", engine="tensorrt-llm")).estimator == "profiled"
    assert bands.choose(Family(moe=True, architecture="hopper", engine="vllm")).estimator == "roofline"
    few = bands.choose(Family(moe=False, architecture="hopper", engine="sglang"))
    assert few.estimator == "roofline" and "fewer than 5" in few.reason
    assert bands.choose(Family(moe=False, architecture="cdna3", engine="vllm")).estimator == "roofline"


def test_the_roofline_answers_amd_and_names_its_leave_one_source_out_band() -> None:
    """No profiled tables exist for AMD: auto answers with the roofline and its CDNA 3 band."""
    e = estimate_setup(MODELS.get("llama-3.3-70b"), GPUS.get("mi300x"), 1, "fp8", 1000, 1000, concurrency=32)
    assert e.estimator == "roofline" and e.other is None
    assert "leave one source out" in e.error_band.provenance
    assert e.error_band.low <= e.output_tokens_per_s <= e.error_band.high


@needs_profiled
def test_the_published_tensorrt_llm_figure_lies_in_the_profiled_band() -> None:
    """TensorRT-LLM's perf overview (NVIDIA/TensorRT-LLM at 03e27c7, docs/source/performance/perf-overview.md):
    Llama 3.3 70B FP8 on 2x H100 SXM, 1,000 in / 1,000 out, 4,418 output tokens/s. Dense Hopper TensorRT-LLM is a
    family where the profiled tables beat the roofline, so auto answers with them."""
    case = {c.id: c for c in load_cases()}["trtllm2-llama-3.3-70b-h100-sxm-tp2-fp8-1000-1000"]
    assert case.measured == 4418
    e = estimate_setup(MODELS.get("llama-3.3-70b"), GPUS.get("h100-sxm"), 2, "fp8", 1000, 1000, kv_dtype="fp8",
                       engine="tensorrt-llm", offline=True)  # fmt: skip
    assert e.estimator == "profiled" and "dense/hopper/tensorrt-llm" in e.estimator_reason
    assert e.error_band.low <= case.measured <= e.error_band.high
    assert e.output_tokens_per_s == pytest.approx(case.measured, rel=0.10)
    # the roofline's figure stands beside it, with its own band
    assert e.other is not None and e.other.estimator == "roofline"
    assert "roofline on" in e.other.error_band.provenance


@needs_profiled
def test_latency_targets_under_the_profiled_tables_are_met_at_the_percentile() -> None:
    e = estimate_setup(MODELS.get("llama-3.3-70b"), GPUS.get("h100-sxm"), 2, "fp8", 1000, 1000, kv_dtype="fp8",
                       engine="tensorrt-llm", ttft_ms=500, tpot_ms=30, percentile="p99")  # fmt: skip
    assert e.estimator == "profiled"
    assert e.ttft_ms.p99 <= 500 * (1 + 1e-9) and e.tpot_ms.p99 <= 30 * (1 + 1e-9)
    assert e.ttft_ms.p50 <= e.ttft_ms.p90 <= e.ttft_ms.p99


@needs_profiled
def test_the_command_line_names_both_estimators(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["estimate", "--model", "llama-3.3-70b", "--gpu", "h100-sxm", "--gpus", "2", "--precision", "fp8",
            "--kv-dtype", "fp8", "--engine", "tensorrt-llm", "--input-tokens", "1000", "--output-tokens", "1000",
            "--offline"]  # fmt: skip
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["estimator"] == "profiled" and data["other"]["estimator"] == "roofline"
    assert {"low", "high", "provenance"} <= set(data["error_band"]) and data["estimator_reason"].startswith("auto")
    assert main([*argv, "--estimator", "roofline", "--json"]) == 0
    roofline = json.loads(capsys.readouterr().out)
    assert roofline["estimator"] == "roofline" and roofline["other"] is None
    assert roofline["output_tokens_per_s"] == pytest.approx(data["other"]["output_tokens_per_s"])
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "Estimator: profiled" in text and "The roofline estimator says" in text
