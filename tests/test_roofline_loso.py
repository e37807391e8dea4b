"""Leave one source out: every publisher's cases estimated by efficiencies fitted on the other publishers'
cases only, and the labels the error is reported by (``benchmarks/roofline_check.py --loso``)."""

from __future__ import annotations

import pytest

from calculator.capacity.calibration import (
    FIT_GRID,
    Case,
    LosoResiduals,
    Residual,
    family_error,
    gpu_architecture,
    load_cases,
    loso_residuals,
    prepare_case,
    run_kind,
    source_of,
)
from calculator.capacity.roofline import DEFAULT_ASSUMPTIONS, prefill_point, step_seconds
from calculator.catalog.gpus import load_gpu_specs
from calculator.catalog.models import load_model_specs
from calculator.errors import InputError

MODELS = load_model_specs()
GPUS = load_gpu_specs()
SMALL_GRID = {"bandwidth_efficiency": FIT_GRID["bandwidth_efficiency"]}
"""One efficiency over its grid: enough to see what each fold learns from, and quick."""


def _case(case_id: str) -> Case:
    return next(c for c in load_cases() if c.id == case_id)


def test_a_source_is_its_publisher_whatever_the_page() -> None:
    # TensorRT-LLM's perf overview at two commits is one publisher; so are GPUStack's pages
    trtllm = {source_of(c) for c in load_cases() if c.id.startswith(("trtllm-", "trtllm2-"))}
    assert trtllm == {"NVIDIA/TensorRT-LLM"}
    assert {source_of(c) for c in load_cases() if c.id.startswith("gpustack-")} == {"gpustack/gpustack"}
    assert source_of(_case("vllm-70b-fp8-h100-c1")) == "spheron.network"
    assert source_of(_case("gist-glm-5-8xb200-fp8-c1")) == "gist:BenHamm"


def test_the_bundled_cases_meet_the_issue_s_breadth() -> None:
    # at least 150 points from at least 8 publishers, 60 of them mixture-of-experts, on Hopper, Blackwell and CDNA 3
    cases = load_cases()
    assert len(cases) >= 150
    assert len({source_of(c) for c in cases}) >= 8
    assert sum(MODELS.get(c.model).is_moe for c in cases) >= 60
    assert {"hopper", "blackwell", "cdna3"} <= {gpu_architecture(c.gpu) for c in cases}
    # every case states its KV dtype (TensorRT-LLM's ran FP8 where the page or checkpoint says so) and its source
    assert all(c.kv_dtype is not None for c in cases)
    assert all(c.source.url and c.source.read for c in cases)
    assert {c.kv_dtype for c in cases if c.id.startswith("trtllm-")} == {"fp8"}
    assert {run_kind(c) for c in cases} == {"offline", "concurrency", "latency"}


@pytest.mark.parametrize(
    ("gpu", "architecture"),
    [("h100-sxm", "hopper"), ("h200-nvl", "hopper"), ("gh200", "hopper"), ("b200", "blackwell"), ("mi300x", "cdna3"),
     ("mi325x", "cdna3"), ("a100-80gb-sxm", "ampere"), ("a10g", "ampere"), ("l40s", "ada"), ("l4", "ada")],
)  # fmt: skip
def test_every_catalogue_gpu_has_its_architecture(gpu: str, architecture: str) -> None:
    assert gpu in GPUS.ids
    assert gpu_architecture(gpu) == architecture


def test_run_kinds_read_from_how_the_load_was_offered() -> None:
    assert run_kind(_case("trtllm-l3.3-70b-b200-tp1-fp4-128-128")) == "offline"  # 30,000 queued at once
    assert run_kind(_case("dstack-r1-mi300x-vllm-offline-n32-3200-800")) == "offline"  # stated
    assert run_kind(_case("dstack-r1-mi300x-vllm-online-c32-3200-800")) == "concurrency"
    assert run_kind(_case("sglang-70b-4xh200-rate1")) == "concurrency"


def test_a_fold_never_reads_the_source_it_predicts() -> None:
    # two publishers; making one's measurements absurd moves its own errors but not the efficiencies it is
    # predicted with, which come from the other publisher alone
    single = _case("vllm-8b-a100-40gb-single-stream")
    datacrunch = [c for c in load_cases() if source_of(c) == "datacrunch-research/h200-benchmarks"]
    plain = loso_residuals(MODELS, GPUS, [single, *datacrunch], rounds=1, grid=SMALL_GRID)
    absurd = single.model_copy(update={"measured": single.measured / 3})
    moved = loso_residuals(MODELS, GPUS, [absurd, *datacrunch], rounds=1, grid=SMALL_GRID)
    assert moved.folds["johnmusgrave.com"] == plain.folds["johnmusgrave.com"]
    assert moved.folds["datacrunch-research/h200-benchmarks"] != plain.folds["datacrunch-research/h200-benchmarks"]
    before = next(r for r in plain.residuals if r.case_id == single.id)
    after = next(r for r in moved.residuals if r.case_id == single.id)
    assert after.estimate == pytest.approx(before.estimate)
    assert after.error == pytest.approx((before.error + 1) * 3 - 1)


def test_residuals_carry_the_labels_the_error_is_reported_by() -> None:
    cases = [_case("vllm-8b-a100-40gb-single-stream"), _case("dstack-r1-mi300x-vllm-online-c32-3200-800")]
    result = loso_residuals(MODELS, GPUS, cases, rounds=1, grid=SMALL_GRID)
    by_id = {r.case_id: r for r in result.residuals}
    dense, moe = by_id["vllm-8b-a100-40gb-single-stream"], by_id["dstack-r1-mi300x-vllm-online-c32-3200-800"]
    assert (dense.label("moe"), dense.label("architecture"), dense.label("engine")) == ("dense", "ampere", "vllm")
    assert (moe.label("moe"), moe.label("architecture"), moe.label("run")) == ("moe", "cdna3", "concurrency")
    assert {r.label("estimator") for r in result.residuals} == {"roofline"}
    summary = result.summary()
    assert summary["all"]["all"].points == 2 and summary["all"]["all"].sources == 2
    assert set(summary["moe"]) == {"dense", "moe"}
    assert "fit on the other sources' plausible cases" in result.fit_set


def test_family_errors_are_the_median_p90_and_worst_of_the_residuals() -> None:
    def residual(estimate: float) -> Residual:
        return Residual(
            case_id=f"c{estimate}", source="s", estimator="roofline", measured=100.0, estimate=estimate, moe=True,
            architecture="hopper", run="offline", engine="vllm",
        )  # fmt: skip

    # errors -50%, -10%, 0%, +20%, +100%: median |e| 20%, worst 100%, median signed 0%
    e = family_error([residual(x) for x in (50.0, 90.0, 100.0, 120.0, 200.0)])
    assert (e.points, e.sources) == (5, 1)
    assert e.median_abs == pytest.approx(0.2)
    assert e.worst_abs == pytest.approx(1.0)
    assert e.median == pytest.approx(0.0)
    # p90 of |e| over 0, 0.1, 0.2, 0.5, 1.0 (inclusive quantiles): 0.5 + 0.6 x 0.5 = 0.8
    assert e.p90_abs == pytest.approx(0.8)


def test_a_family_s_band_is_the_central_80_percent_of_its_residuals_in_the_estimate_error_shape() -> None:
    def residual(i: int, estimate: float, moe: bool) -> Residual:
        return Residual(
            case_id=f"c{i}", source=f"s{i % 2}", estimator="roofline", measured=100.0, estimate=estimate, moe=moe,
            architecture="cdna3" if moe else "hopper", run="offline", engine="vllm",
        )  # fmt: skip

    # MoE errors +10% .. +100% (all too fast): the band runs from no error up to the 90th percentile, +91%
    moe = [residual(i, 110.0 + 10 * i, True) for i in range(10)]
    dense = [residual(10 + i, 80.0, False) for i in range(3)]
    result = LosoResiduals(fit_set="test", residuals=(*moe, *dense), set_aside=(), folds={})
    band = result.error_band("moe", "moe")
    assert band.low_factor == 1.0
    assert band.high_factor == pytest.approx(1.91)
    assert (band.points, band.moe_points) == (10, 10)
    assert band.median_abs == pytest.approx(0.55) and band.worst_abs == pytest.approx(1.0)
    assert "leave one source out (moe moe): 10 published measurements from 2 sources" in band.provenance
    # every dense error is -20%: the band is 0.8x to no error
    assert result.error_band("moe", "dense").low_factor == pytest.approx(0.8)
    assert result.error_band("moe", "dense").high_factor == 1.0
    with pytest.raises(InputError, match="no leave-one-source-out residual for architecture 'blackwell'"):
        result.error_band("architecture", "blackwell")


def test_a_latency_limited_case_runs_the_largest_batch_whose_time_per_token_meets_its_limit() -> None:
    # MLPerf v5.1's Llama-2-70B Interactive run on one H200 of eight (p99 TPOT 40 ms, batch up to 512)
    case = _case("mlperf51-llama2-70b-99-h200-sxm-interactive")
    assert run_kind(case) == "latency" and case.tpot_ms == 40
    prepared = prepare_case(case, MODELS, GPUS)
    estimate, batch, _ = prepared.estimate(DEFAULT_ASSUMPTIONS)
    prefill = prefill_point(prepared.prefill, DEFAULT_ASSUMPTIONS)

    def tpot(b: int) -> float:
        step = step_seconds(prepared.step_terms(b), DEFAULT_ASSUMPTIONS)[0]
        return step + b * case.input_tokens / (case.output_tokens * prefill)

    assert 1 < batch < prepared.batch
    assert tpot(batch) <= 0.040 < tpot(batch + 1)
    assert estimate == pytest.approx(batch / tpot(batch))
    # without the limit the same case runs the whole batch that fits, faster than the limit allows
    unlimited = case.model_copy(update={"run": "concurrency", "tpot_ms": None, "ttft_ms": None})
    assert prepare_case(unlimited, MODELS, GPUS).estimate(DEFAULT_ASSUMPTIONS)[0] > estimate
