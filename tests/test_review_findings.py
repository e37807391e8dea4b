"""Review findings on the pure-Python core, with hand-computed expectations.

Tests marked ``xfail(strict=True)`` demonstrate a suspected bug: each passes once the bug is fixed
(and then the strict marker turns it red, so the marker must be removed with the fix). The other
tests pin tricky cases that were checked and found correct.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
import pytest

from calculator.capacity.memory import fit
from calculator.capacity.roofline import RooflineAssumptions, decode, weights_read_bytes
from calculator.capacity.sizing import ReplicaCapacity, replica_capacity
from calculator.catalog.gpus import load_gpu_specs
from calculator.catalog.measurements import ThroughputRecord
from calculator.catalog.models import load_model_specs
from calculator.catalog.prices import DedicatedOffer, GpuVmOffer, PriceCatalog, PriceSheet
from calculator.errors import InputError
from calculator.planning.growth import grow
from calculator.planning.hybrid import hybrid_plan
from calculator.planning.load_profile import preset_profile, profile_costs, profile_from_traffic
from calculator.pricing.billing import dedicated_option, self_hosted_monthly_array, self_hosted_option
from calculator.pricing.compare import Catalogs, compare, cost_curves, crossings
from calculator.pricing.pinning import pin_prices, reprice
from calculator.pricing.serverless import serverless_option, storage_monthly
from calculator.pricing.ttl import EmpiricalGaps, advise_ttl
from calculator.pricing.turn import TurnShape, compare_turn, price_turn, turn_cost_array
from calculator.scenario.inputs import DAYS_PER_MONTH, Fx, SelfHosting, Traffic
from calculator.scenario.model import GpuVmChoice, load_preset

from .offers import SOURCE, serverless

D = Decimal
AS_OF = dt.date(2026, 6, 1)


def _sheet(offers: list[dict[str, object]], currency: str = "USD") -> PriceSheet:
    return PriceSheet.model_validate(
        {"schema_version": 1, "provider": "acme", "name": "Acme", "currency": currency, "offers": offers}
    )


def _record(rate: float = 2.0, gpus: int = 1, total_b: float = 70.6, precision: str = "fp8") -> ThroughputRecord:
    return ThroughputRecord.model_validate(
        {
            "id": "review",
            "model": "llama-3.3-70b",
            "params_total_b": total_b,
            "params_active_b": total_b,
            "precision": precision,
            "gpu": "h100-sxm",
            "gpu_count": gpus,
            "engine": "vllm",
            "engine_version": "0",
            "input_tokens": 1000,
            "output_tokens": 200,
            "prefix_share": 0,
            "concurrency": 32,
            "requests_per_s": rate,
            "source": SOURCE,
        }
    )


def _vm(**kw: object) -> GpuVmOffer:
    data: dict[str, object] = {
        "kind": "gpu_vm",
        "id": "vm",
        "gpu": "h100-sxm",
        "billing": "hour",
        "versions": [{"effective": "2026-01-01", "source": SOURCE, "per_gpu_hour": 2}],
    }
    data.update(kw)
    return GpuVmOffer.model_validate(data)


def _dedicated(**kw: object) -> DedicatedOffer:
    data: dict[str, object] = {
        "kind": "dedicated",
        "id": "ep",
        "gpu": "h100-sxm",
        "versions": [{"effective": "2026-01-01", "source": SOURCE, "per_gpu_hour": 2}],
    }
    data.update(kw)
    return DedicatedOffer.model_validate(data)


def _cap(rps: float) -> ReplicaCapacity:
    return ReplicaCapacity(record_id="review", requests_per_s=rps, method="direct", prefill_decode_ratio=1.0, note="")


# =====================================================================================================
# Findings (xfail until fixed)
# =====================================================================================================


def test_batch_turn_without_a_cache_discount_bills_cached_tokens_at_the_batch_input_price() -> None:
    # $2 input, $4 output, no cached-input price, batch 50% off input and output (the default parts).
    offer = serverless({"input": 2, "output": 4}, version={"batch_discount": 0.5})
    version = offer.versions[0]
    shape = TurnShape(input_tokens=10_000, prefix_share=D("0.9"), hit_rate=1, output_tokens=0, batch=True)
    # No cache discount: every input token is billed at the batch input price $1/M -> 10,000 x $1 / 1e6 = $0.01,
    # with or without reuse. The code bills the 9,000 "cached" tokens at the full $2: $0.019.
    assert price_turn(offer, version, shape.without_reuse()).cost_per_turn == D("0.01")
    assert price_turn(offer, version, shape).cost_per_turn == D("0.01")


def test_bundled_groq_batch_turn_is_not_dearer_with_reuse(catalogs: Catalogs) -> None:
    sheet, offer = catalogs.prices.serverless("groq", "llama-3.3-70b-versatile")
    shape = TurnShape(input_tokens=10_000, prefix_share=D("0.9"), hit_rate=1, output_tokens=0, batch=True)
    turn = compare_turn(sheet, offer, dt.date(2026, 1, 1), shape)
    # input 0.59 halved: 10,000 x 0.295 / 1e6 = 0.00295 either way (code: reused 0.005605)
    assert turn.no_reuse.cost_per_turn == D("0.00295")
    assert turn.reused.cost_per_turn == turn.no_reuse.cost_per_turn


def test_measured_record_on_a_gpu_too_small_for_the_weights_is_flagged(catalogs: Catalogs) -> None:
    preset = load_preset("coding-agent")
    hosting = preset.self_hosting.model_copy(update={"record": "sglang-llama-3.3-70b-bf16-4xh200-rate4"})
    scenario = preset.model_copy(
        update={"gpu_vm": GpuVmChoice(provider="lambda", offer="a10-1x"), "self_hosting": hosting}
    )
    # The default record: Llama 3.3 70B BF16 on 4 GPUs -> 70.6e9 x 2 B = 141.2 GB; 4 x A10 24 GB = 96 GB.
    # A setup that cannot load is not priced: the comparison stops with what would fit instead.
    with pytest.raises(InputError, match=r"offer: llama-3.3-70b at BF16 on 4x a10 .* does not fit"):
        compare(scenario, catalogs)


def test_a_ten_times_longer_prompt_is_not_the_records_own_shape() -> None:
    gpus = load_gpu_specs()
    record = _record()  # 1,000 in / 200 out / prefix share 0
    cap = replica_capacity(record, gpus.get("h100-sxm"), 10_000, 0.9, 1, 200)  # U = 1,000, but I = 10,000
    assert cap.method == "converted"


def test_longer_context_lowers_capacity_at_the_same_uncached_tokens() -> None:
    gpus = load_gpu_specs()
    record = _record()
    short = replica_capacity(record, gpus.get("h100-sxm"), 2_000, 0.5, 1, 200)  # U = 1,000, context ~2,100
    long = replica_capacity(record, gpus.get("h100-sxm"), 20_000, 0.95, 1, 200)  # U = 1,000, context ~20,100
    assert long.requests_per_s < short.requests_per_s


def test_autoscaled_self_hosting_is_exact_to_the_cent_and_agrees_with_the_sweep() -> None:
    # 1 replica of 4 GPUs for the peak + 1 spare = 8 one-GPU instances for the 16 active hours (+2 min start-up,
    # per-second billing); 1 replica (4 instances) overnight.
    # per day: 4 x 24 + 4 x (16 + 2/60) = 160.1333... GPU-h; per month x 365/12 = 4,870.7222... GPU-h
    # x $4.59 = $22,356.615 exactly -> $22,356.62 (half up)
    offer = _vm(billing="second", versions=[{"effective": "2026-01-01", "source": SOURCE, "per_gpu_hour": "4.59"}])
    record = _record(gpus=4)
    hosting = SelfHosting(
        autoscale=True, min_replicas=1, spare_replicas=1, startup_minutes=2, engineer_share=0, target_utilisation=0.7
    )
    traffic = Traffic(turns_per_month=1000, peak_to_average=2, active_hours_per_day=16)
    sheet = _sheet([serverless({"input": 1, "output": 1}).model_dump()])
    cost = self_hosted_option(sheet, offer, AS_OF, record, hosting, traffic, _cap(1.0), "USD", Fx())
    sweep = self_hosted_monthly_array(
        offer, AS_OF, record.replica_gpus, hosting, traffic, 1.0, np.array([1000.0]), 1.0, 0.0
    )
    assert cost.instances == 8
    assert cost.breakdown["gpu_hours"] == D("22356.62")
    assert D(repr(float(sweep[0]))).quantize(D("0.01")) == cost.monthly


def test_growth_at_zero_reproduces_compare_for_autoscaled_self_hosting(catalogs: Catalogs) -> None:
    preset = load_preset("multi-turn-chat")
    scenario = preset.model_copy(
        update={
            "self_hosting": preset.self_hosting.model_copy(update={"autoscale": True}),
            "traffic": preset.traffic.model_copy(update={"turns_per_month": 999}),
        }
    )
    exact = compare(scenario, catalogs).option("self_hosted")
    assert exact is not None
    plan = grow(scenario, catalogs, months=12, growth_per_month=0.0)
    assert plan.rows[0].monthly["self_hosted"] == exact.monthly


def test_serverless_breakdown_adds_up_to_the_monthly_total() -> None:
    # 1 turn of 5,000 input and 5,000 output tokens at $1/M: $0.005 + $0.005 = $0.01 exactly.
    offer = serverless({"input": 1, "output": 1})
    sheet = _sheet([offer.model_dump()])
    shape = TurnShape(input_tokens=5000, prefix_share=0, output_tokens=5000)
    cost = serverless_option(sheet, offer, AS_OF, shape, Traffic(turns_per_month=1), "USD", Fx())
    assert cost.monthly == D("0.01")
    assert sum(cost.breakdown.values()) == cost.monthly  # code: 0.01 + 0.01 = 0.02


def test_mla_latent_is_read_in_full_by_every_tensor_parallel_gpu() -> None:
    model = load_model_specs().get("deepseek-v3")
    gpu = load_gpu_specs().get("h200-sxm")
    # the roof alone: no tensor-parallel, MoE or per-step overheads (those are fitted separately)
    a = RooflineAssumptions(tp_overhead=0, moe_efficiency=1, layer_overhead_us=0, sequence_overhead_us=0)
    batch, context, gpus = 64, 32_768, 8
    kv = model.kv_bytes_per_token(1.0, context)  # 61 x (512 + 64) x 1 B = 35,136 B per token
    assert kv == 35_136
    per_gpu_bw = gpu.memory_bandwidth_tbs * 1e12 * a.bandwidth_efficiency
    # per GPU: its 1/8 of the weights read, plus the whole replicated latent cache of the batch
    hand_ms = (weights_read_bytes(model, "fp8", batch) / gpus + batch * context * kv) / per_gpu_bw * 1000
    point = decode(model, gpu, "fp8", batch, context, gpus, "fp8", a)
    assert point.bound == "memory"
    assert point.step_ms == pytest.approx(hand_ms, rel=1e-6)  # hand ~47.1 ms, code ~26.4 ms


def test_an_80_gb_h100_holds_80_gib_so_70b_fp8_fits_at_short_context() -> None:
    model = load_model_specs().get("llama-3.3-70b")
    gpu = load_gpu_specs().get("h100-sxm")
    result = fit(model, gpu, "fp8", 768)
    # Engine memory: 0.9 x 79.19 GiB = 76.53e9 B usable (what CUDA reports of the 80 GiB, vLLM 0.19 logs)
    # - 70.6e9 B weights - vLLM's 4.92 GiB reserve (0.28 + 1,024 x 128,256 x 37.7 B + a 0.03 GiB RoPE table) =
    # ~0.64 GB of KV cache: 768 tokens x 320 KiB (BF16) fit
    # (old code: 0.9 x 80e9 = 72e9 -> budget -0.6 GB, "does not fit", while measurements/published.yaml has a run)
    assert result.fits
    reserve_gib = 0.28 + 1024 * 128_256 * 37.7 / 2**30 + 131_072 * 128 * 2 / 2**30
    assert result.kv_budget_per_gpu_gb == pytest.approx(
        (0.9 * 79.19 * 2**30 - 70.6e9 - reserve_gib * 2**30) / 1e9, rel=0.05
    )


def test_no_cache_storage_for_a_prefix_too_short_to_cache() -> None:
    offer = serverless(
        {"input": D("1.25"), "cached_input": D("0.125"), "output": 10, "cache_storage_per_hour": D("4.50")},
        min_cacheable_tokens=2048,
    )
    version = offer.versions[0]
    shape = TurnShape(input_tokens=2000, prefix_share=D("0.5"), output_tokens=100)  # prefix 1,000 < 2,048
    assert price_turn(offer, version, shape).cached_tokens == 0
    storage = storage_monthly(offer, version, shape, distinct_prefixes=1, hold_hours=730)
    assert storage in (None, D(0))  # code: 1,000 x 4.50 / 1e6 x 730 = $3.285


def test_per_gpu_hour_endpoint_bills_the_providers_whole_replica() -> None:
    offer = _dedicated(gpus_per_replica=8, min_replicas=1)  # $2 per GPU-hour, replicas of 8 GPUs
    record = _record(gpus=4)
    sheet = _sheet([offer.model_dump()])
    traffic = Traffic(turns_per_month=1000, peak_to_average=1, active_hours_per_day=24)
    cost = dedicated_option(sheet, offer, AS_OF, record, SelfHosting(), traffic, _cap(10.0), "USD", Fx())
    # 1 engine replica of 4 GPUs fits one provider replica of 8 GPUs: 8 x 730 h x $2 = $11,680 (code: 4 GPUs, $5,840)
    assert cost.gpus == 8
    assert cost.monthly == D("11680.00")


# =====================================================================================================
# Checked and found correct
# =====================================================================================================


def test_seed_example_exact_and_array_agree(catalogs: Catalogs) -> None:
    sheet, offer = catalogs.prices.serverless("lyceum", "GLM-5.3")
    shape = TurnShape(input_tokens=20_000, prefix_share=D("0.9"), hit_rate=1, output_tokens=500)
    turn = compare_turn(sheet, offer, dt.date(2026, 10, 30), shape)
    assert turn.no_reuse.cost_per_turn == D("0.0302")
    assert turn.reused.cost_per_turn == D("0.00968")
    version = offer.version_at(dt.date(2026, 10, 30))
    sweep = turn_cost_array(offer, version, shape, hit_rate=np.array([0.0, 1.0]))
    assert sweep == pytest.approx([0.0302, 0.00968], abs=1e-15)


def test_price_change_on_its_effective_day(catalogs: Catalogs) -> None:
    _, offer = catalogs.prices.serverless("lyceum", "GLM-5.3")
    assert offer.version_at(dt.date(2026, 10, 4)).prices.cached_input == D("0.44")
    assert offer.version_at(dt.date(2026, 10, 5)).prices.cached_input == D("0.26")


def test_long_context_cliff_is_strictly_above_the_threshold_and_prices_the_output_too() -> None:
    offer = serverless(
        {"input": 3, "cached_input": D("0.3"), "output": 15},
        version={
            "long_context": [{"above_tokens": 200_000, "input": 6, "cached_input": D("0.6"), "output": D("22.5")}]
        },
    )
    v = offer.versions[0]
    at = price_turn(offer, v, TurnShape(input_tokens=200_000, prefix_share=0, output_tokens=1000))
    over = price_turn(offer, v, TurnShape(input_tokens=200_001, prefix_share=0, output_tokens=1000))
    assert at.tier is None and at.cost_per_turn == D("0.615")  # 200,000 x 3 + 1,000 x 15
    assert over.tier == 0 and over.cost_per_turn == D("1.2225060")  # 200,001 x 6 + 1,000 x 22.5
    # counted on the whole prompt, cached tokens included
    cached = price_turn(offer, v, TurnShape(input_tokens=200_001, prefix_share=D("0.99"), output_tokens=0))
    assert cached.tier == 0
    arr = turn_cost_array(
        offer, v, TurnShape(input_tokens=1, prefix_share=0, output_tokens=1000), input_tokens=np.array([2e5, 200_001.0])
    )
    assert arr == pytest.approx([0.615, 1.222506])


def test_expected_cache_writes_with_a_partial_hit_rate() -> None:
    # I = 20,000, s = 0.9, h = 0.5: a miss writes the whole 20,000, a hit the 2,000 tail -> E[W] = 11,000
    offer = serverless({"input": 3, "cached_input": D("0.3"), "cache_write": {"5m": D("3.75")}, "output": 15})
    turn = price_turn(
        offer,
        offer.versions[0],
        TurnShape(input_tokens=20_000, prefix_share=D("0.9"), hit_rate=D("0.5"), output_tokens=0),
    )
    assert (turn.cached_tokens, turn.uncached_tokens, turn.written_tokens) == (D(9000), D(11000), D(11000))
    assert turn.cost_per_turn == D("0.04395")  # 11,000 x 3.75 + 9,000 x 0.3, per 1e6


@pytest.mark.parametrize("share,hit", [(D(0), D(1)), (D(1), D(1)), (D("0.9"), D(0))])
def test_edge_shares_and_hit_rates(share: Decimal, hit: Decimal) -> None:
    offer = serverless({"input": 3, "cached_input": D("0.3"), "cache_write": {"5m": D("3.75")}, "output": 15})
    v = offer.versions[0]
    shape = TurnShape(input_tokens=10_000, prefix_share=share, hit_rate=hit, output_tokens=100)
    turn = price_turn(offer, v, shape)
    if share == 1 and hit == 1:
        assert turn.cost_per_turn == D("0.0045")  # 10,000 x 0.3 + 100 x 15, nothing new to write
    elif share == 0:
        assert turn.cost_per_turn == price_turn(offer, v, shape.without_reuse()).cost_per_turn == D("0.0315")
    else:  # hit rate 0: 9,000 written at 3.75, 1,000 input at 3, output
        assert turn.cost_per_turn == D("0.03825")  # 0.03375 + 0.003 + 100 x 15 = 0.0015


def test_min_cacheable_and_cache_increment_agree_on_both_paths() -> None:
    offer = serverless(
        {"input": 1, "cached_input": D("0.1"), "output": 1}, min_cacheable_tokens=1024, cache_increment_tokens=128
    )
    v = offer.versions[0]
    # 0.5 x 2,000 = 1,000 < 1,024: nothing cached; 0.5 x 3,000 = 1,500 -> 11 blocks of 128 = 1,408
    for tokens, expected in [(2000, 0), (3000, 1408)]:
        shape = TurnShape(input_tokens=tokens, prefix_share=D("0.5"), output_tokens=0)
        turn = price_turn(offer, v, shape)
        assert turn.cached_tokens == expected
        assert float(turn.cost_per_turn) == pytest.approx(
            turn_cost_array(offer, v, shape, input_tokens=np.array([float(tokens)]))[0], abs=1e-15
        )


def test_eur_sheet_converted_once_and_engineer_in_scenario_currency() -> None:
    offer = serverless({"input": 1, "output": 1})
    sheet = _sheet([offer.model_dump()], currency="EUR")
    shape = TurnShape(input_tokens=1_000_000, prefix_share=0, output_tokens=0)
    fx = Fx(usd_per_eur=D("1.10"))
    cost = serverless_option(sheet, offer, AS_OF, shape, Traffic(turns_per_month=10), "USD", fx)
    assert cost.monthly == D("11.00")  # 10 turns x EUR 1 x 1.10
    vm = _vm(versions=[{"effective": "2026-01-01", "source": SOURCE, "per_gpu_hour": 1}])
    hosting = SelfHosting(spare_replicas=0, engineer_monthly_cost=D(1000), engineer_share=1)
    traffic = Traffic(turns_per_month=1, peak_to_average=1, active_hours_per_day=24)
    sh = self_hosted_option(sheet, vm, AS_OF, _record(), hosting, traffic, _cap(1.0), "USD", fx)
    assert sh.breakdown["gpu_hours"] == D("803.00")  # 730 h x EUR 1 x 1.10
    assert sh.breakdown["engineer"] == D("1000.00")  # already in USD, not converted


def test_one_gpu_instances_carry_a_four_gpu_replica() -> None:
    # 1 replica + 1 spare of 4 GPUs on 1-GPU instances: 8 instances always on = 5,840 GPU-h at $2
    sheet = _sheet([serverless({"input": 1, "output": 1}).model_dump()])
    hosting = SelfHosting(spare_replicas=1, engineer_share=0)
    traffic = Traffic(turns_per_month=1000, peak_to_average=2, active_hours_per_day=24)
    cost = self_hosted_option(sheet, _vm(), AS_OF, _record(gpus=4), hosting, traffic, _cap(1.0), "USD", Fx())
    assert (cost.instances, cost.gpus, cost.monthly) == (8, 8, D("11680.00"))


def test_dedicated_with_min_replicas_zero_costs_nothing_at_zero_turns() -> None:
    offer = _dedicated(min_replicas=0)
    sheet = _sheet([offer.model_dump()])
    cost = dedicated_option(
        sheet, offer, AS_OF, _record(), SelfHosting(), Traffic(turns_per_month=0), _cap(1.0), "USD", Fx()
    )
    assert cost.monthly == D("0.00") and cost.replicas == 0 and cost.cost_per_1000_turns is None


def test_step_function_crossings_are_each_reported_once() -> None:
    def steps(v: np.ndarray) -> np.ndarray:
        v = np.asarray(v, dtype=float)
        return np.where(v <= 2e5, 1500.0, np.where(v <= 4e5, 3500.0, 5000.0))

    found, stays = crossings({"line": lambda v: 0.01 * np.asarray(v, dtype=float), "steps": steps})
    assert [round(c.turns_per_month, -2) for c in found] == [150_000, 200_000, 350_000, 400_000, 500_000]
    assert [c.cheaper_above for c in found] == ["steps", "line", "steps", "line", "steps"]
    assert stays is not None and stays[0] == "steps" and stays[1] == pytest.approx(500_000, rel=1e-6)


def test_profile_and_hybrid_agree_with_compare(catalogs: Catalogs) -> None:
    preset = load_preset("coding-agent")
    for autoscale in (False, True):
        scenario = preset.model_copy(
            update={
                "self_hosting": preset.self_hosting.model_copy(update={"autoscale": autoscale}),
                "traffic": preset.traffic.model_copy(update={"turns_per_month": 5_000_000}),
            }
        )
        result = compare(scenario, catalogs)
        own, api = result.option("self_hosted"), result.option("serverless")
        assert own is not None and api is not None
        profile = profile_from_traffic(scenario.traffic)
        costs = profile_costs(scenario, catalogs, profile)
        assert costs.self_hosted is not None and costs.self_hosted.monthly == own.monthly
        assert hybrid_plan(scenario, catalogs, profile, percentile=100).plan.monthly == own.monthly
        assert hybrid_plan(scenario, catalogs, profile, percentile=0).plan.monthly == api.monthly
        best = hybrid_plan(scenario, catalogs, preset_profile("business_hours", 1.5)).best.monthly
        pure = profile_costs(scenario, catalogs, preset_profile("business_hours", 1.5))
        assert pure.self_hosted is not None and pure.serverless is not None
        assert best <= min(pure.self_hosted.monthly, pure.serverless.monthly)


def test_sweep_matches_exact_for_always_on_and_eur(catalogs: Catalogs) -> None:
    preset = load_preset("rag-chatbot")
    for volume in (0, 1, 777_777, 12_345_678):
        scenario = preset.model_copy(
            update={
                "currency": "EUR",
                "fx": Fx(usd_per_eur=D("1.0837")),
                "traffic": preset.traffic.model_copy(update={"turns_per_month": volume}),
            }
        )
        result = compare(scenario, catalogs)
        curves = cost_curves(scenario, catalogs)
        for option in result.options:
            swept = D(repr(float(curves[option.option](np.array([float(volume)]))[0]))).quantize(D("0.01"))
            assert swept == option.monthly, option.option


def test_ttl_advisor_hand_case(catalogs: Catalogs) -> None:
    sheet, offer = catalogs.prices.serverless("anthropic", "claude-sonnet-4-5")
    advice = advise_ttl(
        sheet,
        offer,
        offer.version_at(dt.date(2026, 1, 1)),
        prefix_tokens=10_000,
        gaps=EmpiricalGaps((60.0, 600.0, 7200.0)),
        turns_per_session=4,
        sessions_per_month=1000,
    )
    five, hour = advice.outcomes
    # 5 min: 1 of 3 gaps hits -> W = 1 + 3 x 2/3 = 3, R = 1: 0.01 x (3 x 3.75 + 0.3) = 0.1155
    assert (five.writes_per_session, five.reads_per_session) == pytest.approx((3, 1))
    assert five.cost_per_session == pytest.approx(0.1155)
    # 1 h: 2 of 3 hit -> W = 2, R = 2: 0.01 x (2 x 6 + 2 x 0.3) = 0.126
    assert hour.cost_per_session == pytest.approx(0.126)
    assert advice.no_cache_cost_per_session == pytest.approx(0.12)
    assert advice.cheapest.ttl == "5m"
    assert advice.break_even[0].reads_per_write is not None
    assert float(advice.break_even[0].reads_per_write) == pytest.approx(2.25 / 3.45)


def test_repricing_the_seed_turn_across_the_price_change(catalogs: Catalogs) -> None:
    preset = load_preset("coding-agent")
    scenario = preset.model_copy(
        update={
            "dedicated": None,
            "gpu_vm": None,
            "as_of": dt.date(2026, 10, 1),
            "traffic": preset.traffic.model_copy(update={"turns_per_month": 1000}),
        }
    )
    pinned = pin_prices(scenario, catalogs)
    # before: 2,000 x 1.75 + 18,000 x 0.44 + 500 x 4.50 = 13,670 per 1e6 -> $13.67 for 1,000 turns
    assert pinned.prices_used[0].monthly == D("13.67")
    result = reprice(pinned, catalogs, dt.date(2026, 10, 30))
    assert result.monthly_now == {"serverless": D("9.68")}
    assert {c.field for c in result.changes} == {"input", "cached_input", "output"}


def test_autoscale_day_bill_with_startup_and_hourly_granularity() -> None:
    # 10 active hours + 3 min start-up billed per hour -> 11 h; 2 instances by day, 1 floor all day
    sheet = _sheet([serverless({"input": 1, "output": 1}).model_dump()])
    hosting = SelfHosting(
        autoscale=True, min_replicas=1, spare_replicas=1, startup_minutes=3, engineer_share=0, target_utilisation=1
    )
    traffic = Traffic(turns_per_month=1000, peak_to_average=1, active_hours_per_day=10)
    cost = self_hosted_option(sheet, _vm(), AS_OF, _record(), hosting, traffic, _cap(1.0), "USD", Fx())
    hours = (1 * 24 + 1 * 11) * DAYS_PER_MONTH  # 35 x 365/12 = 1,064.5833...
    assert cost.gpu_hours == pytest.approx(hours)
    assert cost.monthly == D("2129.17")  # x $2 = 2,129.1666...


def test_price_catalog_rejects_a_date_before_the_first_version(catalog: PriceCatalog) -> None:
    from calculator.errors import InputError

    _, offer = catalog.serverless("lyceum", "GLM-5.3")
    with pytest.raises(InputError, match="no price before"):
        offer.version_at(dt.date(2000, 1, 1))
