"""One roofline, one set of efficiencies: the estimate, the split of a measured record, the calibration and
the Capacity page all read the same :class:`RooflineAssumptions`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calculator.capacity.calibration import check_cases, load_cases
from calculator.capacity.memory import WEIGHT_BYTES
from calculator.capacity.roofline import RooflineAssumptions, decode, prefill_tokens_per_s
from calculator.capacity.sizing import (
    BYTES_PER_PARAM,
    Efficiency,
    converted_rate,
    prefill_decode_ratio,
    record_speed,
    replica_capacity,
    split_record,
)
from calculator.catalog.gpus import load_gpu_specs
from calculator.catalog.measurements import load_records
from calculator.catalog.models import load_model_specs
from calculator.present import capacity_charts as cc

from .apptest import open_page

ROOT = Path(__file__).resolve().parents[1]
MODELS = load_model_specs()
GPUS = load_gpu_specs()
RECORDS = load_records()
LLAMA, H200 = MODELS.get("llama-3.3-70b"), GPUS.get("h200-sxm")
RATE4 = RECORDS.get("sglang-llama-3.3-70b-bf16-4xh200-rate4")
"""SGLang, Llama 3.3 70B BF16 on 4x H200: 513.2 in / 506.6 out, 4.042 req/s, 12.53 s median latency."""


def _by_hand(bandwidth: float, decode_flops: float, prefill_flops: float, i: float, u: float, o: float) -> float:
    """Requests/s of RATE4 converted to ``i`` in (``u`` uncached) / ``o`` out, worked from the datasheets.

    4x H200: 989.5 dense BF16 TFLOP/s and 4.8 TB/s each. Llama 3.3 70B: 70.6B parameters, 80 layers,
    hidden 8,192, 8 KV heads of 128: 327,680 B of BF16 KV per token, split 4 ways. Batch: 4.042 req/s x
    12.535 s = 51 in flight. Tensor-parallel overhead multiplies every speed alike, so it cancels. Decode
    moves to the scenario's context; prefill keeps the record's speed.
    """
    flops, bw, params, kv = 989.5e12 * 4, 4.8e12, 70.6e9, 2 * 80 * 8 * 128 * 2

    def prefill(prompt: float) -> float:
        return flops * prefill_flops / (2 * params + 4 * 80 * 8192 * prompt / 2)

    def decode_total(batch: int, context: float) -> float:
        memory = (params * 2 / 4 + batch * context * kv / 4) / (bw * bandwidth)
        compute = (2 * params + 4 * 80 * 8192 * context) * batch / (flops * decode_flops)
        return batch / max(memory, compute)

    rec_i, rec_o, rps, batch = 513.2, 506.6, 4.042, 51
    p, d = prefill(rec_i), decode_total(batch, rec_i + rec_o / 2)
    scale = rps * (rec_i / p + rec_o / d)  # the record's own request takes 1 / rps
    return scale / (u / p + o / decode_total(batch, i + o / 2))


# --- one default set -----------------------------------------------------------------------------------


def test_a_record_is_converted_with_the_roofline_defaults_when_no_assumptions_are_given() -> None:
    # the coding agent's turn: 20,000 in, 90% repeated (2,000 uncached), 500 out; roofline defaults
    # 65% of bandwidth, 35% of FLOP/s in decode, 50% in prefill. By hand: 1.23847 req/s (the old separate
    # sizing efficiencies, 70% / 50% / 50% on weights alone, gave 1.22990)
    cap = replica_capacity(RATE4, H200, 20_000, 0.9, 1, 500, model=LLAMA)
    assert cap.method == "converted"
    assert cap.requests_per_s == pytest.approx(_by_hand(0.65, 0.35, 0.5, 20_000, 2_000, 500), rel=1e-9)
    assert cap.requests_per_s == pytest.approx(1.23847, abs=1e-5)
    explicit = replica_capacity(RATE4, H200, 20_000, 0.9, 1, 500, assumptions=RooflineAssumptions(), model=LLAMA)
    assert explicit == cap


def test_other_efficiencies_move_the_conversion_as_the_roofline_moves() -> None:
    # slower prefill beside faster decode: the scenario's uncached prompt is four times the record's at about
    # the same output, so it leans on prefill more than the record did: 1.13800 req/s by hand, not 1.23847
    prefill_bound = RooflineAssumptions(bandwidth_efficiency=0.9, prefill_flops_efficiency=0.15)
    cap = replica_capacity(RATE4, H200, 20_000, 0.9, 1, 500, assumptions=prefill_bound, model=LLAMA)
    assert cap.requests_per_s == pytest.approx(_by_hand(0.9, 0.35, 0.15, 20_000, 2_000, 500), rel=1e-9)
    assert cap.requests_per_s == pytest.approx(1.13800, abs=1e-5)


def test_the_split_ratio_is_the_roofline_s_own_prefill_over_decode() -> None:
    a = RooflineAssumptions(bandwidth_efficiency=0.8, prefill_flops_efficiency=0.4)
    context = RATE4.input_tokens + RATE4.output_tokens / 2
    prefill = prefill_tokens_per_s(LLAMA, H200, "bf16", RATE4.input_tokens, 4, a)
    step = decode(LLAMA, H200, "bf16", 51, context, 4, "bf16", a)
    ratio = prefill_decode_ratio(RATE4, H200, a, LLAMA)
    assert ratio == pytest.approx(prefill / step.tokens_per_s_total, rel=1e-12)
    assert ratio != pytest.approx(prefill_decode_ratio(RATE4, H200, model=LLAMA), rel=1e-3)


def test_old_names_point_at_the_one_table_and_the_one_set_of_efficiencies() -> None:
    assert BYTES_PER_PARAM is WEIGHT_BYTES
    assert Efficiency is RooflineAssumptions
    # positional callers of the old (record, gpu, efficiencies) signature still work
    assert prefill_decode_ratio(RATE4, H200, RooflineAssumptions()) == prefill_decode_ratio(RATE4, H200)


def test_a_speculative_decoding_what_if_moves_the_estimate_but_not_a_measured_record() -> None:
    what_if = RooflineAssumptions(speculative_speedup=2)
    base = replica_capacity(RATE4, H200, 20_000, 0.9, 1, 500, model=LLAMA)
    assert replica_capacity(RATE4, H200, 20_000, 0.9, 1, 500, assumptions=what_if, model=LLAMA) == base
    context = 8192.0
    assert decode(LLAMA, H200, "bf16", 8, context, 4, "bf16", what_if).tokens_per_s_total == pytest.approx(
        2 * decode(LLAMA, H200, "bf16", 8, context, 4, "bf16").tokens_per_s_total
    )


# --- the split is consistent --------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    bandwidth=st.floats(0.05, 1.0),
    decode_flops=st.floats(0.05, 1.0),
    prefill_flops=st.floats(0.05, 1.0),
    with_model=st.booleans(),
)
def test_a_record_converted_to_its_own_shape_gives_back_its_measured_rate(
    bandwidth: float, decode_flops: float, prefill_flops: float, with_model: bool
) -> None:
    a = RooflineAssumptions(
        bandwidth_efficiency=bandwidth, decode_flops_efficiency=decode_flops, prefill_flops_efficiency=prefill_flops
    )
    for record_id, model in [
        ("sglang-llama-3.3-70b-bf16-4xh200-rate4", LLAMA),
        ("vllm-llama-3.3-70b-fp8-1xh100-c50", LLAMA),
        ("vllm-llama-3.1-8b-bf16-1xh100-c50-long", MODELS.get("llama-3.1-8b")),
    ]:
        record = RECORDS.get(record_id)
        gpu = GPUS.get(record.gpu or "")
        speed = record_speed(record, gpu, model if with_model else None, a)
        prefill, decode_rate = split_record(record, speed)
        uncached = record.input_tokens * (1 - record.prefix_share)
        # the record's own request takes exactly its measured time, and the conversion (without the
        # 25% shortcut) hands back the measured rate
        assert uncached / prefill + record.output_tokens / decode_rate == pytest.approx(1 / record.requests_per_s)
        rate = converted_rate(record, speed, speed, uncached, record.output_tokens)
        assert rate == pytest.approx(record.requests_per_s, rel=1e-12)


def test_at_its_own_shape_a_record_applies_as_measured_whatever_the_efficiencies() -> None:
    for a in (RooflineAssumptions(), RooflineAssumptions(bandwidth_efficiency=0.3, prefill_flops_efficiency=0.9)):
        cap = replica_capacity(RATE4, H200, RATE4.input_tokens, 0, 1, RATE4.output_tokens, assumptions=a, model=LLAMA)
        assert cap.method == "direct" and cap.requests_per_s == RATE4.requests_per_s


# --- calibration and the Capacity page read the same object --------------------------------------------


def test_roofline_check_prints_every_published_case() -> None:
    run = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "roofline_check.py")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=True,
    )
    lines = run.stdout.splitlines()
    assert lines[0].startswith("assumptions: decode reaches 65% of peak bandwidth and 35% of peak FLOP/s")
    cases = load_cases()
    for case in cases:
        row = next(line for line in lines if line.startswith(case.id + " "))
        assert f"{case.measured:10.1f}" in row
    # five cases are consistent with their stated conditions; three beat the 100% ceiling
    assert f"5 of {len(cases)} cases consistent with their stated conditions" in run.stdout
    assert "set aside: vllm-70b-fp8-h100-c1: measured 120 > ceiling 47" in run.stdout


def test_calibration_moves_with_the_assumptions_passed() -> None:
    default = {r.case.id: r.estimate for r in check_cases(MODELS, GPUS)}
    half = RooflineAssumptions(bandwidth_efficiency=0.325)
    # single stream of an 8B model is memory bound: half the bandwidth efficiency, half the tokens/s
    moved = {r.case.id: r.estimate for r in check_cases(MODELS, GPUS, half)}
    case = "vllm-8b-a100-40gb-single-stream"
    assert moved[case] == pytest.approx(default[case] / 2, rel=1e-9)


def test_the_capacity_table_moves_estimate_and_conversion_together() -> None:
    slower = RooflineAssumptions(bandwidth_efficiency=0.4)
    column = cc.CONVERTED.format(context=8192)
    base, _ = cc.estimate_vs_measured(RECORDS.records, LLAMA.id, H200.id, MODELS, GPUS, None, 8192)
    moved, _ = cc.estimate_vs_measured(RECORDS.records, LLAMA.id, H200.id, MODELS, GPUS, slower, 8192)
    row, moved_row = base.set_index("Record").loc[RATE4.id], moved.set_index("Record").loc[RATE4.id]
    assert moved_row["Estimate output tok/s"] < row["Estimate output tok/s"]
    assert moved_row[column] != row[column]
    # the page's figure is sizing's conversion: the record's 506.6 out, the prompt filling the rest of 8,192
    expected = replica_capacity(RATE4, H200, 8192 - 506.6, 0, 1, 506.6, assumptions=slower, model=LLAMA)
    assert moved_row[column] == round(expected.requests_per_s, 3)


def test_an_efficiency_set_on_the_capacity_page_moves_the_converted_measurement() -> None:
    at = open_page("capacity", c_model=LLAMA.id, c_gpu=H200.id, c_prec="bf16", c_n="4", c_ctx="8192")
    column = cc.CONVERTED.format(context=8192)
    before = at.dataframe[0].value.set_index("Record")[column][RATE4.id]
    at.number_input(key="c_bw").set_value(0.4).run()
    assert not at.exception
    after = at.dataframe[0].value.set_index("Record")[column][RATE4.id]
    a = RooflineAssumptions(bandwidth_efficiency=0.4)
    expected = replica_capacity(RATE4, H200, 8192 - 506.6, 0, 1, 506.6, assumptions=a, model=LLAMA)
    assert after == round(expected.requests_per_s, 3) and after != before
