"""The continuous-batching simulation: queueing theory's limits, determinism, order and monotonicity of its
percentiles, the rate search, deploy's percentile sizing, and bad or hostile input."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from calculator.capacity.roofline import decode
from calculator.capacity.simulation import (
    StepCosts,
    check_percentile,
    max_rate_under_target,
    poisson_arrivals,
    profile_arrivals,
    simulate,
    simulate_closed,
    simulate_poisson,
    step_costs,
)
from calculator.capacity.ttft import PercentileCase, load_length_histogram, load_percentile_cases
from calculator.catalog.catalogs import load_catalogs
from calculator.catalog.datafile import DATA_DIR
from calculator.catalog.gpus import load_gpu_specs
from calculator.catalog.models import load_model_specs
from calculator.cli import main
from calculator.errors import InputError
from calculator.pricing.deployments import find_deployments
from calculator.scenario.inputs import LatencyTarget
from calculator.scenario.model import load_preset

# one request at a time, a fixed service: 100 prompt tokens at 10,000 tokens/s (10 ms) and 10 more tokens at
# 10 ms a step, S = 110 ms whatever the load; the queue in front of it is M/D/1
DECODE_S, PREFILL_TPS, PROMPT, OUTPUT = 0.010, 10_000.0, 100, 11
SERVICE_S = PROMPT / PREFILL_TPS + (OUTPUT - 1) * DECODE_S


def _one_server() -> StepCosts:
    return StepCosts.constant(DECODE_S, PREFILL_TPS, max_batch=1)


def _l40s_costs(max_batch: int = 256) -> StepCosts:
    model, gpu = load_model_specs().get("llama-3.2-3b"), load_gpu_specs().get("l40s")
    return step_costs(model, gpu, "bf16", 1, max_batch=max_batch, max_context=1300)


@pytest.mark.parametrize("rho", [0.3, 0.6, 0.8])
def test_one_server_with_a_fixed_service_waits_as_md1_says(rho: float) -> None:
    # M/D/1 (Pollaczek-Khinchine with no service variance): mean wait = rho x S / (2 (1 - rho)); a request's
    # TTFT is that wait plus its own 10 ms prefill. Three seeds of 40,000 requests average out the queue's noise.
    rate = rho / SERVICE_S
    runs = [simulate_poisson(_one_server(), rate, PROMPT, OUTPUT, requests=40_000, seed=s) for s in (1, 2, 3)]
    waited_ms = statistics.mean(r.ttft_ms.mean for r in runs) - PROMPT / PREFILL_TPS * 1000
    theory_ms = rho * SERVICE_S / (2 * (1 - rho)) * 1000
    assert waited_ms == pytest.approx(theory_ms, rel=0.06)
    # and the server is busy rho of the time, decoding 10 of every 11 steps' worth of it
    assert statistics.mean(r.mean_batch for r in runs) == pytest.approx(rho * 0.1 / SERVICE_S, rel=0.03)


def test_a_batch_that_never_fills_decodes_every_token_at_one_step() -> None:
    # M/D/infinity: no request ever waits for a slot, and a decode step costs 10 ms whatever the batch, so every
    # request's time per output token is the step; its TTFT is the rest of the step in progress when it arrives
    # (half a step on average) and the step its prefill rides: 1.5 steps on average, 2 at most (as ttft.py has it)
    costs = StepCosts.constant(DECODE_S, 1e9, max_batch=512)
    r = simulate_poisson(costs, 20.0, 50, 101)
    # (new prompts ride some steps: 50 tokens at a billion tokens/s add 50 ns to a 10 ms step)
    assert r.tpot_ms.p50 == pytest.approx(10.0, rel=1e-4) and r.tpot_ms.p99 == pytest.approx(10.0, rel=1e-4)
    assert r.ttft_ms.p99 <= 20.0 + 1e-3
    assert r.ttft_ms.mean == pytest.approx(15.0, rel=0.05)
    # Little's law: 20 req/s x 1 s in flight (100 steps of 10 ms) = 20 sequences decoding on average
    assert r.mean_batch == pytest.approx(20.0, rel=0.1)
    assert r.output_tokens_per_s == pytest.approx(20.0 * 100, rel=0.1)


def test_a_closed_loop_keeps_its_clients_in_flight() -> None:
    # the interactive response-time law (Little's law for a closed loop with no think time): throughput x mean
    # latency = clients. 16 clients on a replica of 8 slots: half of them always wait for a slot
    costs = _l40s_costs(max_batch=8)
    r = simulate_closed(costs, 16, 999, 270, requests=1500)
    assert r.offered_rate * r.e2e_ms.mean / 1000 == pytest.approx(16, rel=0.05)
    assert r.mean_batch == pytest.approx(8, rel=0.05)  # the 8 slots never empty
    assert r.output_tokens_per_s == pytest.approx(r.offered_rate * 270, rel=0.05)
    # fewer clients than slots: nobody waits for one, so the TTFT is the prefill and the steps it rides
    few = simulate_closed(costs, 4, 999, 270, requests=1500)
    assert few.ttft_ms.p99 < r.ttft_ms.p50 and few.tpot_ms.p50 < r.tpot_ms.p50
    with pytest.raises(InputError) as err:
        simulate_closed(costs, 0, 999, 270)
    assert err.value.problem.field == "concurrency"


def test_the_cost_table_is_the_roofline_between_its_points() -> None:
    # the table holds decode() on a grid; between the points it interpolates, within 5% of decode() itself
    models, gpus = load_model_specs(), load_gpu_specs()
    model, gpu = models.get("llama-3.3-70b"), gpus.get("h100-sxm")
    costs = step_costs(model, gpu, "fp8", 2, max_batch=1024, max_context=1300, min_context=200)
    rng = np.random.default_rng(0)
    for _ in range(100):
        b, c = int(rng.integers(1, 1025)), float(rng.uniform(200, 1300))
        direct = decode(model, gpu, "fp8", b, c, 2, "bf16").step_ms / 1000
        assert costs.decode_step_s(b, c) == pytest.approx(direct, rel=0.05)
    assert costs.decode_step_s(0, 500.0) == 0.0  # nothing decoding costs nothing


def test_steps_twice_as_long_double_a_lone_requests_latencies() -> None:
    costs = StepCosts.constant(DECODE_S, PREFILL_TPS, max_batch=4)
    one, two = simulate(costs, [0.0], PROMPT, OUTPUT), simulate(costs.scaled(2.0), [0.0], PROMPT, OUTPUT)
    assert two.ttft_ms.p50 == pytest.approx(2 * one.ttft_ms.p50) and two.tpot_ms.p50 == pytest.approx(20.0)


def test_the_same_seed_gives_the_same_run() -> None:
    costs = _l40s_costs()
    a = simulate_poisson(costs, 5.0, 999, 270, seed=7)
    assert simulate_poisson(costs, 5.0, 999, 270, seed=7) == a
    assert simulate_poisson(costs, 5.0, 999, 270, seed=8) != a
    assert np.array_equal(poisson_arrivals(3.0, 50, seed=1), poisson_arrivals(3.0, 50, seed=1))


def test_percentiles_are_in_order() -> None:
    r = simulate_poisson(_l40s_costs(), 7.5, 999, 270)
    for p in (r.ttft_ms, r.tpot_ms, r.e2e_ms):
        assert p.p50 <= p.p90 <= p.p95 <= p.p99


def test_latency_and_batch_grow_with_load() -> None:
    costs = _l40s_costs()
    runs = [simulate_poisson(costs, rate, 999, 270) for rate in (1.0, 3.0, 6.0, 9.0, 12.0)]
    for lo, hi in zip(runs, runs[1:], strict=False):
        assert hi.ttft_ms.p99 >= lo.ttft_ms.p99
        assert hi.tpot_ms.p50 >= lo.tpot_ms.p50
        assert hi.mean_batch >= lo.mean_batch
        assert hi.output_tokens_per_s >= lo.output_tokens_per_s


def test_cached_prefix_tokens_skip_prefill() -> None:
    # 90% of a 20,000-token prompt served from the prefix cache: a lone request's TTFT is its 2,000 uncached tokens
    costs = StepCosts.constant(DECODE_S, PREFILL_TPS, max_batch=8, chunk_tokens=100_000)
    lone = simulate(costs, [0.0], 20_000, 2, cached_share=0.9)
    assert lone.ttft_ms.p50 == pytest.approx(2000 / PREFILL_TPS * 1000)
    assert simulate(costs, [0.0], 20_000, 2).ttft_ms.p50 == pytest.approx(20_000 / PREFILL_TPS * 1000)


def test_a_long_prompt_is_prefilled_in_chunks_beside_the_decoding_batch() -> None:
    # a 5,000-token prompt arriving beside a long-running sequence: each of its steps prefills up to the chunk
    # (2,048 less the one decoding sequence's token) and decodes the other: ceil(5,000 / 2,047) = 3 steps of
    # 10 ms decode plus its 500 ms of prefill in all
    costs = StepCosts.constant(DECODE_S, PREFILL_TPS, max_batch=8, chunk_tokens=2048)
    r = simulate(costs, [0.0, 0.0001], [1, 5000], [2000, 2])
    # the first request prefills its one token in a 0.1 ms step; the second arrives as it ends, then 3 chunks
    assert r.ttft_ms.mean == pytest.approx((0.1 + (3 * 10 + 500)) / 2, rel=1e-3)


def test_arrivals_in_any_order_keep_their_own_lengths() -> None:
    costs = StepCosts.constant(DECODE_S, PREFILL_TPS, max_batch=1, chunk_tokens=100_000)
    # a 10,000-token prompt at 0.5 s and a 100-token one at 0 s, given in that order: the short one is served
    # first (10 ms of prefill, a 10 ms step), the long one at 0.5 s on an idle replica (1 s); had the lengths
    # been swapped, the short prompt would wait behind the long one's second
    r = simulate(costs, [0.5, 0.0], [10_000, 100], [2, 2], trim=False)
    assert r.ttft_ms.mean == pytest.approx((10.0 + 1000.0) / 2)


def test_arrivals_may_come_from_a_log_or_a_load_profile() -> None:
    costs = _l40s_costs()
    log = [0.0, 0.05, 0.05, 0.4, 1.2, 1.25, 3.0]  # a prompt log's own timestamps, in seconds
    r = simulate(costs, log, [900, 1100, 999, 500, 2000, 30, 999], [100, 300, 50, 10, 400, 20, 1])
    assert r.ttft_ms.p50 > 0
    times = profile_arrivals([0.5, 2.0, 0.0, 1.0], n=700, seed=3)
    assert times.size == 700 and np.all(np.diff(times) >= 0)
    # each hour keeps its share of the requests: 2.0 of 3.5 requests/s in all
    hours = np.diff(times) > 1800
    assert int(hours.sum()) == 2  # three busy hours laid end to end, the empty one left out


def test_a_prompt_logs_own_timestamps_and_lengths_are_simulated_as_logged() -> None:
    # the bundled Mooncake conversation trace (kvcache-ai/Mooncake, FAST'25): the first 2,000 requests, their
    # own arrival times (ms) and lengths, on Llama-3.1-8B FP8 over 2x H100, against Poisson at the same mean rate
    path = DATA_DIR / "samples" / "mooncake" / "conversation_trace.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()[:2000]]
    times = np.asarray([r["timestamp"] for r in rows], dtype=np.float64) / 1000
    prompts = np.asarray([r["input_length"] for r in rows], dtype=np.float64)
    answers = np.asarray([r["output_length"] for r in rows], dtype=np.float64)
    model, gpu = load_model_specs().get("llama-3.1-8b"), load_gpu_specs().get("h100-sxm")
    costs = step_costs(model, gpu, "fp8", 2, max_batch=256, max_context=float((prompts + answers).max()))
    logged = simulate(costs, times, prompts, answers, cached_share=0.4)
    assert logged.offered_rate == pytest.approx(1999 / (times[-1] - times[0]))
    poisson = simulate_poisson(costs, logged.offered_rate, prompts, float(answers.mean()), cached_share=0.4)
    fixed = simulate_poisson(costs, logged.offered_rate, float(prompts.mean()), float(answers.mean()), cached_share=0.4)
    assert logged.keeps_up and poisson.keeps_up and fixed.keeps_up
    # the log's requests come in clumps (several in the same millisecond): its median TTFT is longer than Poisson
    # arrivals of the same prompts give
    assert logged.ttft_ms.p50 > poisson.ttft_ms.p50
    # its prompts run from 891 to 123,192 tokens: the long ones make a p99 many times one mean-sized prompt's
    assert poisson.ttft_ms.p99 > 5 * fixed.ttft_ms.p99


def test_the_rate_search_finds_the_highest_load_meeting_the_target() -> None:
    costs = _l40s_costs()
    found = max_rate_under_target(costs, 999, 270, percentile="p99", ttft_ms=150, tpot_ms=30)
    assert found.meets and 0 < found.rate <= found.saturation_rate * 1.05
    assert found.result.ttft_ms.p99 <= 150 and found.result.tpot_ms.p99 <= 30
    above = simulate_poisson(costs, found.rate * 1.05, 999, 270)
    assert above.ttft_ms.p99 > 150 or above.tpot_ms.p99 > 30 or not above.keeps_up
    # a median target is easier to meet than the same target at p99
    median = max_rate_under_target(costs, 999, 270, percentile="p50", ttft_ms=150, tpot_ms=30)
    assert median.rate >= found.rate
    # a target an idle replica misses: no rate, and the idle latencies say what is achievable
    never = max_rate_under_target(costs, 999, 270, percentile="p99", ttft_ms=1.0)
    assert not never.meets and never.rate == 0 and never.result.ttft_ms.p99 > 1.0


def test_deploy_sizes_an_estimate_to_the_targets_percentile() -> None:
    scenario = load_preset("coding-agent")
    cat = load_catalogs()
    p50 = find_deployments(
        scenario, cat, target=LatencyTarget(percentile="p50", ttft_ms=3000, tokens_per_s_per_user=20)
    )
    p99 = find_deployments(
        scenario, cat, target=LatencyTarget(percentile="p99", ttft_ms=3000, tokens_per_s_per_user=20)
    )
    best = p99.cheapest
    assert best is not None and best.evidence_kind == "estimate" and best.latency_percentile == "p99"
    assert best.ttft_percentiles_ms is not None and best.tpot_percentiles_ms is not None
    assert best.ttft_percentiles_ms.p99 <= 3000 and 1000 / best.tpot_percentiles_ms.p99 >= 20
    assert best.ttft_ms == best.ttft_percentiles_ms.p99
    assert best.requests_per_s_at_target is not None and best.requests_per_s_at_target > 0
    # a p99 target is at least as hard as the same at p50: the same setup needs at least as many replicas
    cheap = p50.cheapest
    assert cheap is not None and p99.cheapest is not None
    same = {(d.provider, d.offer, d.gpus_per_replica, d.precision, d.attention): d.replicas for d in p50.meeting}
    for d in p99.meeting:
        key = (d.provider, d.offer, d.gpus_per_replica, d.precision, d.attention)
        if key in same:
            assert d.replicas >= same[key]
    assert best.monthly >= cheap.monthly


def test_deploy_json_adds_the_simulated_percentiles_and_keeps_its_keys(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["deploy", "--preset", "coding-agent", "--ttft-ms", "3000", "--tokens-per-s-per-user", "20"]
    assert main([*argv, "--latency-percentile", "p99", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    kept = {"provider", "offer", "gpu", "gpus_per_replica", "precision", "replicas", "monthly", "ttft_ms"}
    estimated = [r for r in rows if r["evidence_kind"] == "estimate"]
    assert estimated and all(set(r) >= kept for r in rows)
    for r in estimated:
        assert r["latency_percentile"] == "p99"
        ttft, tpot = r["ttft_ms_percentiles"], r["tpot_ms_percentiles"]
        assert ttft["p50"] <= ttft["p90"] <= ttft["p95"] <= ttft["p99"] == r["ttft_ms"]
        assert r["tokens_per_s_per_user"] == pytest.approx(1000 / tpot["p99"])
        if r["meets_target"]:
            assert ttft["p99"] <= 3000 and tpot["p99"] <= 50
    # a measured row keeps what it measured and has no simulation
    assert all(r["ttft_ms_percentiles"] is None for r in rows if r["evidence_kind"] == "measurement")


def test_the_published_percentiles_are_enough_and_each_names_its_source() -> None:
    # calculator/data/ttft_cases.yaml: MLPerf v4.1 Server logs, GPUStack's Qwen3-32B page, nerdalert's vLLM runs
    cases = load_percentile_cases()
    tails = [
        (c.id, metric, pct)
        for c in cases
        for metric, given in (("ttft", c.ttft_ms), ("tpot", c.tpot_ms))
        for pct in (given.given() if given is not None else {})
        if pct != "p50"
    ]
    assert len(tails) >= 20
    assert all(c.source.url and c.source.read for c in cases)
    assert {c.split for c in cases} == {"fit", "holdout"}
    mlperf = next(c for c in cases if c.id == "mlperf41-h100x8-llama2-70b-server")
    assert mlperf.ttft_ms is not None and mlperf.ttft_ms.p99 == pytest.approx(461.28)  # 461,278,089 ns
    assert mlperf.limits is not None and mlperf.limits.ttft_ms == 2000 and mlperf.limits.tpot_ms == 200


def test_mlperfs_prompts_are_drawn_from_the_datasets_own_lengths() -> None:
    # 24,576 OpenOrca prompts, mean 222.3 tokens, longest 1,021 (openshift-psap/performance-dashboard's summary)
    lengths, counts = load_length_histogram("samples/mlperf/llama2-70b-openorca-input-lengths.csv")
    assert sum(counts) == 24_576 and max(lengths) == 1021
    assert sum(n * c for n, c in zip(lengths, counts, strict=True)) / sum(counts) == pytest.approx(222.33, abs=0.01)


def test_a_bad_length_histogram_names_its_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import calculator.capacity.ttft as ttft

    (tmp_path / "h.csv").write_text("input_length,count\n10,3\n12,x\n")
    monkeypatch.setattr(ttft, "DATA_DIR", tmp_path)
    with pytest.raises(InputError) as err:
        ttft.load_length_histogram("h.csv")
    assert err.value.problem.field == "input_lengths" and "line 3" in err.value.problem.message


def test_a_percentile_case_gives_one_load() -> None:
    row = {
        "id": "x", "model": "llama-3.2-3b", "gpu": "l40s", "gpus": 1, "precision": "bf16", "engine": "vllm",
        "input_tokens": 100, "output_tokens": 10, "max_batch": 8,
        "source": {"url": "https://example.org", "read": "2026-12-02"},
    }  # fmt: skip
    with pytest.raises(ValidationError):
        PercentileCase.model_validate(row)
    with pytest.raises(ValidationError):
        PercentileCase.model_validate({**row, "request_rate": 1.0, "burst": 10})
    assert PercentileCase.model_validate({**row, "burst": 10}).burst == 10
    assert PercentileCase.model_validate({**row, "concurrency": 4, "requests": 100}).concurrency == 4
    with pytest.raises(ValidationError):
        PercentileCase.model_validate({**row, "concurrency": 4, "burst": 10})


# --- bad and hostile input -------------------------------------------------------------------------------


def test_a_negative_rate_is_an_input_error_naming_the_rate() -> None:
    with pytest.raises(InputError) as err:
        simulate_poisson(_one_server(), -1.0, PROMPT, OUTPUT)
    assert err.value.problem.field == "rate"


def test_an_unknown_percentile_is_an_input_error_naming_the_field() -> None:
    with pytest.raises(InputError) as err:
        check_percentile("p42")
    assert err.value.problem.field == "latency_percentile" and "p99" in err.value.problem.message
    with pytest.raises(InputError) as err:
        max_rate_under_target(_one_server(), PROMPT, OUTPUT, percentile="p42", ttft_ms=100)
    assert err.value.problem.field == "latency_percentile"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"arrivals": [-1.0, 2.0]}, "arrivals"),
        ({"arrivals": [0.0, math.inf]}, "arrivals"),
        ({"input_tokens": [1.0, 2.0, 3.0]}, "input_tokens"),
        ({"output_tokens": -5.0}, "output_tokens"),
        ({"cached_share": 1.5}, "cached_share"),
        ({"max_batch": 0}, "max_batch"),
        ({"kv_budget_tokens": 0.0}, "kv_budget_tokens"),
        ({"arrivals": []}, "requests"),
    ],
)
def test_bad_simulation_input_is_an_input_error_naming_the_field(kwargs: dict[str, object], field: str) -> None:
    args: dict[str, object] = {"arrivals": [0.0, 1.0], "input_tokens": 100.0, "output_tokens": 10.0}
    args.update(kwargs)
    with pytest.raises(InputError) as err:
        simulate(_one_server(), **args)  # type: ignore[arg-type]
    assert err.value.problem.field == field


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rate=st.floats(min_value=1e-6, max_value=1e6),
    prompt=st.floats(min_value=1, max_value=1e7),
    output=st.floats(min_value=1, max_value=1e7),
    cached=st.floats(min_value=0, max_value=1),
    batch=st.integers(min_value=1, max_value=64),
    budget=st.one_of(st.none(), st.floats(min_value=1, max_value=1e9)),
    requests=st.integers(min_value=1, max_value=300),
)
def test_hostile_sizes_finish_in_a_few_turns_per_request(
    rate: float, prompt: float, output: float, cached: float, batch: int, budget: float | None, requests: int
) -> None:
    # the run's work is bounded by its events, not by its token counts: ten million tokens in or out cost the
    # same few turns of the loop per request as ten
    costs = StepCosts.constant(0.01, 5_000.0, max_batch=64)
    r = simulate_poisson(
        costs, rate, prompt, output, cached_share=cached, max_batch=batch, kv_budget_tokens=budget, requests=requests
    )
    assert r.events <= 6 * requests + 2
    assert r.ttft_ms.p50 <= r.ttft_ms.p99 and math.isfinite(r.e2e_ms.p99)
    closed = simulate_closed(
        costs, batch, prompt, output, cached_share=cached, kv_budget_tokens=budget, requests=requests
    )
    assert closed.events <= 6 * requests + 2
