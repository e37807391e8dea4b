"""One setup estimated (``calculator.capacity.estimate`` and the ``estimate`` command): the same roofline the
calibration checks against published measurements, a batch the user can see, percentiles in order, and a
sentence for every load it cannot answer."""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calculator.capacity.batch import MEMORY_ENGINE
from calculator.capacity.calibration import check_cases, estimate_case, estimate_error, load_cases
from calculator.capacity.estimate import PERCENTILES, estimate_setup
from calculator.capacity.memory import ENGINES, fit
from calculator.catalog.gpus import load_gpu_specs
from calculator.catalog.models import load_model_specs
from calculator.cli import main
from calculator.errors import InputError

MODELS = load_model_specs()
GPUS = load_gpu_specs()
LLAMA70, H100 = MODELS.get("llama-3.3-70b"), GPUS.get("h100-sxm")
CASES = {c.id: c for c in load_cases()}


def _engine(name: str) -> Literal["vllm", "sglang", "tensorrt-llm"]:
    low = name.lower()
    return "sglang" if low.startswith("sglang") else "tensorrt-llm" if low.startswith("tensorrt") else "vllm"


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(["estimate", *argv, "--json"]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def test_a_single_stream_is_the_calibrations_estimate_of_the_published_case() -> None:
    """johnmusgrave.com: Llama-3.1-8B BF16 on one A100-40GB, vLLM 0.23.0, 1,024 in / 128 out, ~75 tok/s."""
    case = CASES["vllm-8b-a100-40gb-single-stream"]
    e = estimate_setup(MODELS.get(case.model), GPUS.get(case.gpu), 1, "bf16", 1024, 128, concurrency=1)
    assert e.batch == 1 and e.estimator == "roofline"
    # the simulation's step table is within 5% of the roofline called at each batch and context
    assert e.tokens_per_s_per_user == pytest.approx(estimate_case(case, MODELS, GPUS).estimate, rel=0.05)


def test_a_throughput_case_is_the_calibrations_estimate_and_the_band_holds_eight_in_ten() -> None:
    results = [r for r in check_cases(MODELS, GPUS) if r.case.split == "holdout" and r.plausible]
    # at a fixed concurrency (an offline or latency-limited run is estimated at a batch of its own)
    throughput = [
        r
        for r in results
        if r.case.kind == "throughput" and r.case.output_lengths == "fixed" and r.case.run in (None, "concurrency")
    ]
    compared = 0
    for r in throughput:
        c = r.case
        room = fit(MODELS.get(c.model), GPUS.get(c.gpu), c.precision, int(c.input_tokens + c.output_tokens), c.gpus,
                   c.kv_dtype, engine=MEMORY_ENGINE[_engine(c.engine)],
                   attention=c.attention)  # fmt: skip
        if not room.fits:
            continue  # the engine ran what our memory model says does not fit: the fit's error, not the speed's
        compared += 1
        e = estimate_setup(
            MODELS.get(c.model), GPUS.get(c.gpu), c.gpus, c.precision, c.input_tokens, c.output_tokens,
            kv_dtype=c.kv_dtype, attention=c.attention, concurrency=round(c.concurrency),
            engine=_engine(c.engine), estimator="roofline",
        )  # fmt: skip
        assert e.output_tokens_per_s == pytest.approx(r.estimate, rel=1e-6), c.id
    assert compared >= 5
    # the band is the hold-out's 10th to 90th percentile of signed error: it holds the measurement 8 in 10 times
    error = estimate_error()
    inside = [error.low_factor <= 1 + r.error <= error.high_factor for r in results]
    assert len(inside) >= 40 and 0.75 <= sum(inside) / len(inside) <= 0.9


def test_offline_runs_as_many_as_the_kv_cache_and_the_engine_hold() -> None:
    room = fit(LLAMA70, H100, "fp8", 2000, 2)
    e = estimate_setup(LLAMA70, H100, 2, "fp8", 1000, 1000, offline=True)
    scheduler = ENGINES["vllm"].default_max_num_seqs(H100)
    assert e.batch == e.batch_limit == min(room.max_sequences, scheduler)
    assert "KV cache holds" in e.batch_limit_reason
    capped = estimate_setup(LLAMA70, H100, 2, "fp8", 1000, 1000, offline=True, max_batch=16)
    assert capped.batch == 16 and capped.batch_limit_reason == "max batch 16 (set by you)"
    assert capped.output_tokens_per_s < e.output_tokens_per_s


def test_more_in_flight_than_fit_queue_for_a_slot() -> None:
    e = estimate_setup(LLAMA70, H100, 2, "fp8", 1000, 1000, concurrency=1_000)
    full = estimate_setup(LLAMA70, H100, 2, "fp8", 1000, 1000, offline=True)
    assert e.batch == full.batch and e.output_tokens_per_s == pytest.approx(full.output_tokens_per_s)
    assert any("run at once; the rest queue" in n for n in e.notes)
    # Little's law on the closed loop: 1,000 clients over `batch` slots wait (1,000 - batch) / rate for one
    waited = (1_000 - full.batch) / full.requests_per_s * 1000
    assert e.ttft_ms.p50 == pytest.approx(full.ttft_ms.p50 + waited, rel=0.15)


def test_latency_targets_answer_the_highest_load_that_meets_them() -> None:
    tight = estimate_setup(LLAMA70, H100, 2, "fp8", 1000, 1000, ttft_ms=500, tpot_ms=40, percentile="p99")
    loose = estimate_setup(LLAMA70, H100, 2, "fp8", 1000, 1000, ttft_ms=5000, tpot_ms=40, percentile="p99")
    assert tight.ttft_ms.p99 <= 500 * (1 + 1e-9) and tight.tpot_ms.p99 <= 40
    assert 0 < tight.requests_per_s < loose.requests_per_s
    values = [tight.ttft_ms.at(p) for p in PERCENTILES]
    assert values == sorted(values)
    # the same load at the median percentile is never slower than at p99
    median = estimate_setup(LLAMA70, H100, 2, "fp8", 1000, 1000, ttft_ms=500, tpot_ms=40, percentile="p50")
    assert median.requests_per_s >= tight.requests_per_s


def test_a_target_no_load_meets_says_what_one_request_alone_gets() -> None:
    with pytest.raises(InputError, match=r"no load meets TTFT p95 <= 1 ms.*at a trickle of requests the TTFT is"):
        estimate_setup(LLAMA70, H100, 2, "fp8", 1000, 1000, ttft_ms=1)


def test_a_setup_that_does_not_fit_says_what_would() -> None:
    with pytest.raises(InputError, match=r"does not fit on 1x h100-sxm.*would fit: .*GPUs"):
        estimate_setup(LLAMA70, H100, 1, "bf16", 1000, 1000, concurrency=1)


def test_the_json_keys_are_the_public_ones(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(
        capsys, "--model", "llama-3.3-70b", "--gpu", "h100-sxm", "--gpus", "2", "--replicas", "3",
        "--precision", "fp8", "--input-tokens", "1000", "--output-tokens", "500", "--concurrency", "32",
    )  # fmt: skip
    for key in ("output_tokens_per_s", "tokens_per_s_per_user", "batch", "estimator", "bound"):
        assert key in data
    for key in ("ttft_ms", "tpot_ms"):
        assert set(data[key]) >= set(PERCENTILES)  # and the mean
    assert set(data["error_band"]) >= {"low", "high"}
    one = estimate_setup(LLAMA70, H100, 2, "fp8", 1000, 500, concurrency=32)
    assert data["output_tokens_per_s"] == pytest.approx(3 * one.output_tokens_per_s)  # all replicas together
    assert data["tokens_per_s_per_user"] == pytest.approx(one.tokens_per_s_per_user)


def test_a_config_json_describes_a_model_that_is_not_bundled(capsys: pytest.CaptureFixture[str]) -> None:
    from pathlib import Path

    config = next(Path(__file__).parent.joinpath("fixtures", "model_configs").rglob("*.json"))
    code = main(["estimate", "--model", str(config), "--gpu", "h200-sxm", "--gpus", "8", "--precision", "fp8",
                 "--input-tokens", "1000", "--output-tokens", "100", "--offline", "--json"])  # fmt: skip
    out, err = capsys.readouterr()
    assert (code == 0 and json.loads(out)["batch"] >= 1) or (code == 2 and err.count("\n") == 1)


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        ([], "give one load"),
        (["--concurrency", "4", "--offline"], "give one load"),
        (["--latency-percentile", "p99", "--offline"], "--latency-percentile goes with"),
        (["--concurrency", "0"], "--concurrency"),
        (["--concurrency", "4", "--gpu", "mi300x", "--estimator", "profiled"], "NVIDIA GPUs only"),
        (["--offline", "--gpu", "h900"], "h900"),
    ],
)
def test_a_bad_command_line_is_one_sentence(argv: list[str], said: str, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["estimate", "--model", "llama-3.3-70b", "--gpu", "h100-sxm", "--gpus", "2", "--precision", "fp8"]
    base += ["--input-tokens", "1000", "--output-tokens", "100"]
    assert main([*base, *argv]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err and err.count("\n") == 1


@settings(max_examples=40, deadline=None)
@given(
    gpus=st.sampled_from(["1", "2", "8", "0", "-1", "3.5", "1e9"]),
    tokens=st.sampled_from(["1", "1000", "128k", "0", "-5", "1e30", "nan", "x"]),
    load=st.sampled_from([["--offline"], ["--concurrency", "3"], ["--ttft-ms", "800"], ["--tpot-ms", "0"]]),
    precision=st.sampled_from(["fp8", "bf16", "int4", "fp3"]),
)
def test_hostile_flags_end_in_an_answer_or_one_line(gpus: str, tokens: str, load: list[str], precision: str) -> None:
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    argv = ["estimate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--gpus", gpus, "--precision", precision]
    argv += ["--input-tokens", tokens, "--output-tokens", "64", *load]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    assert code in (0, 2), err.getvalue()
    assert "Traceback" not in err.getvalue()
    if code == 2:
        assert err.getvalue().count("\n") == 1, err.getvalue()
