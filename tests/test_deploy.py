"""The three ways to buy, priced for a month on hand-computed cases; break-even crossings."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
import pytest

from calculator.capacity.sizing import ReplicaCapacity, replica_capacity
from calculator.catalog.gpus import load_gpu_specs
from calculator.catalog.measurements import ThroughputRecord
from calculator.catalog.prices import DedicatedOffer, GpuVmOffer, PriceSheet
from calculator.pricing.billing import dedicated_option, self_hosted_option
from calculator.pricing.compare import Catalogs, Crossing, compare, cost_curves, crossing_runs, crossings
from calculator.pricing.serverless import serverless_option
from calculator.pricing.turn import TurnShape
from calculator.scenario.inputs import DAYS_PER_MONTH, Fx, SelfHosting, Traffic
from calculator.scenario.model import GpuVmChoice, Scenario, ServerlessChoice

from .offers import SOURCE, serverless

D = Decimal
AS_OF = dt.date(2026, 6, 1)
SHEET = PriceSheet.model_validate(
    {
        "schema_version": 1,
        "provider": "acme",
        "name": "Acme",
        "currency": "USD",
        "offers": [serverless({"input": 1, "output": 1}).model_dump()],
    }
)


def _record(rate: float = 2.0, gpus: int = 1) -> ThroughputRecord:
    return ThroughputRecord.model_validate(
        {
            "id": "test",
            "model": "llama-3.3-70b",
            "params_total_b": 70.6,
            "params_active_b": 70.6,
            "precision": "fp8",
            "gpu": "h100-sxm",
            "gpu_count": gpus,
            "engine": "vllm",
            "engine_version": "0",
            "input_tokens": 1000,
            "output_tokens": 200,
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


SHAPE = TurnShape(input_tokens=1000, prefix_share=0, output_tokens=200)


def _capacity(record: ThroughputRecord) -> ReplicaCapacity:
    gpus = load_gpu_specs()
    return replica_capacity(record, gpus.get("h100-sxm"), 1000, 0, 1, 200)


def test_record_applies_directly_at_its_own_shape() -> None:
    cap = _capacity(_record(rate=2.0))
    assert cap.method == "direct" and cap.requests_per_s == 2.0


def test_prefix_caching_raises_capacity_by_shrinking_prefill_only() -> None:
    gpus = load_gpu_specs()
    record = _record()
    base = replica_capacity(record, gpus.get("h100-sxm"), 10_000, 0, 1, 200)
    cached = replica_capacity(record, gpus.get("h100-sxm"), 10_000, 0.9, 1, 200)
    k = base.prefill_decode_ratio
    # t = U/(k d) + O/d: the ratio of rates is the inverse ratio of request times
    expected = (10_000 / k + 200) / (1_000 / k + 200)
    assert cached.requests_per_s / base.requests_per_s == pytest.approx(expected)
    assert base.method == cached.method == "converted"  # 10,000 in is not the record's 1,000, cached or not


def test_always_on_self_hosting_is_sized_for_the_peak_in_whole_instances() -> None:
    # 2,628,000 turns a month over 24 h = 1 req/s; peak 3 req/s; 2 req/s per replica at 75% -> 2 replicas + 1 spare
    traffic = Traffic(turns_per_month=2_628_000, peak_to_average=3, active_hours_per_day=24)
    hosting = SelfHosting(target_utilisation=0.75, spare_replicas=1, engineer_share=0.5, engineer_monthly_cost=D(10000))
    record = _record(rate=2.0)
    cost = self_hosted_option(
        SHEET, _vm(gpus_per_instance=2), AS_OF, record, hosting, traffic, _capacity(record), "USD", Fx()
    )
    assert cost.replicas == 3 and cost.instances == 2 and cost.gpus == 4  # 3 GPUs round up to 2 instances of 2
    assert cost.breakdown["gpu_hours"] == D("5840.00")  # 4 GPUs x 730 h x $2
    assert cost.breakdown["engineer"] == D("5000.00")
    assert cost.monthly == D("10840.00")


def test_autoscaled_self_hosting_bills_the_active_window_rounded_to_the_billing_unit() -> None:
    # 10 active hours a day; at 1 req/s average in those hours and peak 2x: 2 req/s -> 2 replicas (cap 2, util .5)
    turns = round(1 * 10 * 3600 * DAYS_PER_MONTH)
    traffic = Traffic(turns_per_month=turns, peak_to_average=2, active_hours_per_day=10)
    hosting = SelfHosting(
        target_utilisation=0.5, spare_replicas=0, autoscale=True, min_replicas=1, startup_minutes=3, engineer_share=0
    )
    record = _record(rate=2.0)
    cost = self_hosted_option(
        SHEET, _vm(billing="hour"), AS_OF, record, hosting, traffic, _capacity(record), "USD", Fx()
    )
    # 1 GPU always up (24 h) + 1 more for 10 h 3 min, billed as 11 whole hours
    expected_hours = (24 + 11) * DAYS_PER_MONTH
    assert cost.gpu_hours == pytest.approx(expected_hours)
    per_second = self_hosted_option(
        SHEET, _vm(billing="second"), AS_OF, record, hosting, traffic, _capacity(record), "USD", Fx()
    )
    assert per_second.gpu_hours == pytest.approx((24 + 10.05) * DAYS_PER_MONTH)
    assert per_second.monthly < cost.monthly


def test_engine_builds_are_billed_per_model_change() -> None:
    traffic = Traffic(turns_per_month=1000)
    hosting = SelfHosting(spare_replicas=0, engineer_share=0, model_changes_per_month=2, build_minutes_per_change=30)
    record = _record(gpus=4)
    cost = self_hosted_option(SHEET, _vm(), AS_OF, record, hosting, traffic, _capacity(record), "USD", Fx())
    assert cost.breakdown["engine_builds"] == D("8.00")  # 2 builds x 0.5 h x 4 GPUs x $2


def test_dedicated_endpoint_respects_the_providers_minimum() -> None:
    offer = DedicatedOffer.model_validate(
        {
            "kind": "dedicated",
            "id": "d",
            "gpu": "h100-sxm",
            "min_replicas": 2,
            "versions": [{"effective": "2026-01-01", "source": SOURCE, "per_gpu_hour": 3}],
        }
    )
    record = _record()
    cost = dedicated_option(
        SHEET, offer, AS_OF, record, SelfHosting(), Traffic(turns_per_month=1000), _capacity(record), "USD", Fx()
    )
    assert cost.replicas == 2 and cost.monthly == D("4380.00")  # 2 x 730 h x $3
    assert any("minimum" in n for n in cost.notes)


def test_currency_conversion_uses_the_users_rate() -> None:
    offer = serverless({"input": 1, "output": 1})
    shape = TurnShape(input_tokens=1_000_000, prefix_share=0, output_tokens=0)
    usd = serverless_option(SHEET, offer, AS_OF, shape, Traffic(turns_per_month=100), "USD", Fx())
    eur = serverless_option(SHEET, offer, AS_OF, shape, Traffic(turns_per_month=100), "EUR", Fx(usd_per_eur=D("1.25")))
    assert usd.monthly == D("100.00") and eur.monthly == D("80.00")


def test_cache_storage_is_a_monthly_cost_of_distinct_prefixes() -> None:
    offer = serverless(
        {"input": D("1.25"), "cached_input": D("0.125"), "output": 10, "cache_storage_per_hour": D("4.5")}
    )
    shape = TurnShape(input_tokens=100_000, prefix_share=1, output_tokens=0)
    cost = serverless_option(SHEET, offer, AS_OF, shape, Traffic(turns_per_month=0), "USD", Fx(), 2, 730)
    assert cost.breakdown["cache_storage"] == D("657.00")  # 2 prefixes x 0.1 M tokens x 730 h x $4.50


def test_crossings_finds_a_single_crossing_and_who_stays_cheapest() -> None:
    curves = {
        "serverless": lambda v: v * 0.01,
        "self_hosted": lambda v: 500.0 + 500.0 * np.ceil(v / 200_000),  # $1,000 up to 200,000 turns, then $1,500
    }
    found, stays = crossings(curves, 1e3, 1e7)
    assert [round(c.turns_per_month) for c in found] == [100_000]  # 0.01 x 100,000 = 1,000
    assert found[0].cheaper_above == "self_hosted"
    assert stays is not None and stays[0] == "self_hosted" and round(stays[1]) == 100_000


def test_a_step_and_a_line_can_cross_more_than_once() -> None:
    curves = {"serverless": lambda v: v * 0.01, "self_hosted": lambda v: 1000.0 * np.ceil(v / 150_000)}
    found, stays = crossings(curves, 1e3, 1e7)
    # line meets the first step at 100,000; the step jumps to 2,000 at 150,000 (line 1,500: serverless
    # cheaper again); line reaches 2,000 at 200,000; from there each step stays at or below the line
    assert [round(c.turns_per_month) for c in found] == [100_000, 150_000, 200_000]
    # each to the relative 1e-9 the refinement promises, at a slope's crossing and at a step's jump alike
    assert [c.turns_per_month for c in found] == pytest.approx([100_000, 150_000, 200_000], rel=1e-9)
    assert [c.cheaper_above for c in found] == ["self_hosted", "serverless", "self_hosted"]
    assert stays is not None and round(stays[1]) == 200_000


def test_seed_scenario_compares_serverless_and_self_hosting(catalogs: Catalogs) -> None:
    scenario = Scenario(
        as_of=dt.date(2026, 10, 30),
        workload=TurnShape(input_tokens=20_000, prefix_share=D("0.9"), hit_rate=1, output_tokens=500),
        traffic=Traffic(turns_per_month=1_000_000),
        serverless=ServerlessChoice(provider="lyceum", model="GLM-5.3"),
        gpu_vm=GpuVmChoice(provider="lambda", offer="h100-sxm-8x"),
    )
    result = compare(scenario, catalogs)
    server = result.option("serverless")
    assert server is not None and server.monthly == D("9680.00")  # 1,000,000 x $0.00968
    assert result.turn is not None and result.turn.no_reuse.cost_per_turn == D("0.0302")
    # record: auto (the default): the GPU options run GLM-5, the nearest spec to GLM-5.3, and say so
    assert not any("different models" in w.message for w in result.warnings)
    assert any(w.code == "nearest_model_spec" and "GLM-5 (glm-5)" in w.message for w in result.warnings)
    curves = cost_curves(scenario, catalogs)
    assert curves["serverless"](np.array([1_000_000.0]))[0] == pytest.approx(9680.0)
    hosted = result.option("self_hosted")
    assert hosted is not None
    assert curves["self_hosted"](np.array([1_000_000.0]))[0] == pytest.approx(float(hosted.monthly), abs=0.01)


def test_latency_target_picks_the_busiest_level_that_meets_it(catalogs: Catalogs) -> None:
    from calculator.scenario.inputs import LatencyTarget
    from calculator.scenario.model import load_preset

    preset = load_preset("coding-agent")
    # the SGLang 4x H200 levels: median TTFT 86, 88, 106, 191, 614 ms at rates 1, 2, 4, 8, 16
    hosting = preset.self_hosting.model_copy(
        update={
            "record": "sglang-llama-3.3-70b-bf16-4xh200-rate8",
            "latency_target": LatencyTarget(percentile="p50", ttft_ms=150),
        }
    )
    result = compare(preset.model_copy(update={"self_hosting": hosting}), catalogs)
    hosted = result.option("self_hosted")
    assert hosted is not None and hosted.capacity is not None
    assert hosted.capacity.record_id == "sglang-llama-3.3-70b-bf16-4xh200-rate4"


def test_latency_target_no_level_meets_is_a_named_error(catalogs: Catalogs) -> None:
    from calculator.errors import InputError
    from calculator.scenario.inputs import LatencyTarget
    from calculator.scenario.model import load_preset

    preset = load_preset("coding-agent")
    # a named record: the measured levels are what a latency target picks from (an estimate has none)
    hosting = preset.self_hosting.model_copy(
        update={
            "record": "sglang-llama-3.3-70b-bf16-4xh200-rate4",
            "latency_target": LatencyTarget(percentile="p50", ttft_ms=10),
        }
    )
    with pytest.raises(InputError, match="self_hosting.latency_target: no load level .* meets it"):
        compare(preset.model_copy(update={"self_hosting": hosting}), catalogs)


def test_estimate_sizes_gpus_without_a_measurement_and_says_so(catalogs: Catalogs) -> None:
    from calculator.scenario.inputs import EstimateSetup
    from calculator.scenario.model import load_preset

    preset = load_preset("coding-agent")
    hosting = preset.self_hosting.model_copy(
        update={"estimate": EstimateSetup(model="llama-3.3-70b", precision="fp8", gpus_per_replica=2)}
    )
    result = compare(preset.model_copy(update={"self_hosting": hosting}), catalogs)
    hosted = result.option("self_hosted")
    assert hosted is not None and hosted.capacity is not None
    assert "ESTIMATE" in hosted.capacity.note and "not a measurement" in hosted.capacity.note
    assert hosted.gpus is not None and hosted.gpus % 2 == 0  # whole 2-GPU replicas on 1-GPU instances


def test_an_option_that_cannot_hold_the_model_is_left_out_with_the_reason(catalogs: Catalogs) -> None:
    from calculator.pricing.compare import without_unpriceable
    from calculator.scenario.model import load_preset

    preset = load_preset("coding-agent").model_copy(update={"gpu_vm": GpuVmChoice(provider="lambda", offer="a10-1x")})
    kept, dropped = without_unpriceable(preset, catalogs)
    assert kept.gpu_vm is None and kept.serverless is not None and kept.dedicated is not None
    ((option, error),) = dropped
    assert option == "gpu_vm" and "does not fit" in error.message and "would fit" in error.message


def test_an_api_without_a_cache_discount_is_named_in_the_warnings(catalogs: Catalogs) -> None:
    from calculator.scenario.model import load_preset

    result = compare(load_preset("rag-chatbot"), catalogs)  # Together's Llama 3.3 70B has no cached price
    assert any("bills cached input at the full input price" in w.message for w in result.warnings)
    assert result.turn is not None and result.turn.reused.cost_per_turn == result.turn.no_reuse.cost_per_turn


def test_crossing_runs_keep_each_pairs_swaps_together_at_its_first() -> None:
    def at(v: float, a: str, b: str, w: str) -> Crossing:
        return Crossing(a=a, b=b, turns_per_month=v, cheaper_above=w)

    found = [
        at(1e5, "dedicated", "self_hosted", "self_hosted"),
        at(2e5, "serverless", "self_hosted", "self_hosted"),
        at(3e5, "dedicated", "self_hosted", "dedicated"),
        at(4e5, "dedicated", "self_hosted", "self_hosted"),
    ]
    runs = crossing_runs(found)
    assert [[c.turns_per_month for c in run] for run in runs] == [[1e5, 3e5, 4e5], [2e5]]
    assert crossing_runs([]) == []
