"""Load over the day: profiles, trace-derived shapes, and GPU hours billed per hour of the day."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calculator.catalog.gpus import load_gpu_specs
from calculator.catalog.measurements import RecordCatalog, ThroughputRecord
from calculator.catalog.models import load_model_specs
from calculator.catalog.prices import GpuVmOffer, PriceCatalog, PriceSheet
from calculator.errors import InputError
from calculator.planning.load_profile import (
    LoadProfile,
    hourly_replicas,
    load_profile,
    preset_profile,
    profile_costs,
    profile_from_trace,
    profile_from_traffic,
    profile_schedule,
    ramp_shape,
    trace_shape,
)
from calculator.pricing.billing import engine_replicas, vm_counts
from calculator.pricing.compare import Catalogs, compare
from calculator.pricing.turn import TurnShape
from calculator.scenario.inputs import DAYS_PER_MONTH, SelfHosting, Traffic
from calculator.scenario.model import DedicatedChoice, GpuVmChoice, Scenario, ServerlessChoice, load_preset

from .conftest import SEED_DATE
from .offers import SOURCE, serverless

FIXTURES = Path(__file__).resolve().parent / "fixtures"
AZURE = FIXTURES / "traces" / "azure"
AS_OF = dt.date(2026, 6, 1)
D = Decimal

# --- a small hand-made world: $0.0012 a turn serverless, 1 req/s per replica at 50% of 2 req/s ---------


def _record() -> ThroughputRecord:
    return ThroughputRecord.model_validate(
        {
            "id": "test-record",
            "model": "llama-3.3-70b",
            "params_total_b": 70.6,
            "params_active_b": 70.6,
            "precision": "fp8",
            "gpu": "h100-sxm",
            "gpu_count": 1,
            "engine": "vllm",
            "engine_version": "0",
            "input_tokens": 1000,
            "output_tokens": 200,
            "concurrency": 32,
            "requests_per_s": 2.0,
            "source": SOURCE,
        }
    )


def vm_offer(billing: str = "second", gpus_per_instance: int = 1, **kw: Any) -> dict[str, Any]:
    return {
        "kind": "gpu_vm",
        "id": "vm",
        "gpu": "h100-sxm",
        "billing": billing,
        "gpus_per_instance": gpus_per_instance,
        "versions": [{"effective": "2026-01-01", "source": SOURCE, "per_gpu_hour": 2}],
        **kw,
    }


def synthetic_catalogs(billing: str = "second") -> Catalogs:
    offers = [
        serverless({"input": 1, "output": 1}, id="api", model="llama-3.3-70b").model_dump(),
        vm_offer(billing),
        {
            "kind": "dedicated",
            "id": "endpoint",
            "gpu": "h100-sxm",
            "min_replicas": 1,
            "versions": [{"effective": "2026-01-01", "source": SOURCE, "per_gpu_hour": 3}],
        },
    ]
    sheet = PriceSheet.model_validate(
        {"schema_version": 1, "provider": "acme", "name": "Acme", "currency": "USD", "offers": offers}
    )
    return Catalogs(
        PriceCatalog(sheets=(sheet,)), load_gpu_specs(), RecordCatalog(records=(_record(),)), load_model_specs()
    )


def synthetic_scenario(turns: int, **hosting: Any) -> Scenario:
    """Serverless at $0.0012 a turn (1,000 in + 200 out at $1/M); GPUs at $2 per GPU-hour, 1 req/s per replica."""
    return Scenario(
        name="synthetic",
        as_of=AS_OF,
        workload=TurnShape(input_tokens=1000, prefix_share=0, output_tokens=200),
        traffic=Traffic(turns_per_month=turns, peak_to_average=1, active_hours_per_day=24),
        serverless=ServerlessChoice(provider="acme", model="llama-3.3-70b"),
        dedicated=DedicatedChoice(provider="acme", offer="endpoint"),
        gpu_vm=GpuVmChoice(provider="acme", offer="vm"),
        self_hosting=SelfHosting(
            record="test-record",
            target_utilisation=0.5,
            **{"spare_replicas": 0, "engineer_share": 0, "min_replicas": 0, "startup_minutes": 6, **hosting},
        ),
    )


def office(hours: range = range(9, 17), days: float = 7, burst: float = 1.0) -> LoadProfile:
    weights = tuple(1.0 if h in hours else 0.0 for h in range(24))
    return LoadProfile(name="office", weights=weights, days_per_week=days, burst=burst)


# --- the profile and its peak-to-average ---------------------------------------------------------------


def test_flat_profile_gives_the_replicas_of_peak_to_average_one() -> None:
    flat = preset_profile("flat")
    # 2,628,000 turns a month round the clock is exactly 1 req/s; at 1 req/s per replica that is 1 replica
    for turns, expected in ((2_628_000, 1), (2_628_001, 2), (5_256_000, 2), (1, 1)):
        reps = hourly_replicas(flat, turns, 2.0, 0.5)
        core = engine_replicas(Traffic(turns_per_month=turns, peak_to_average=1), float(turns), 2.0, 0.5)
        assert set(reps.tolist()) == {expected} and float(core) == expected


@settings(max_examples=200, deadline=None)
@given(
    turns=st.integers(min_value=0, max_value=10**10),
    cap=st.floats(min_value=0.05, max_value=50),
    util=st.floats(min_value=0.1, max_value=1),
    burst=st.floats(min_value=1, max_value=5),
)
def test_busiest_hour_needs_the_replicas_of_the_equivalent_peak_to_average(
    turns: int, cap: float, util: float, burst: float
) -> None:
    for profile in (preset_profile("flat", burst), preset_profile("business_hours", burst)):
        reps = hourly_replicas(profile, turns, cap, util)
        core = engine_replicas(profile.equivalent_traffic(turns), float(turns), cap, util)
        assert reps.max() == float(core)


def test_peak_to_average_is_the_busiest_hour_over_the_mean_times_the_burst() -> None:
    # 8 busy hours of 24: the busiest hour runs at 3x the day's mean; burst 1.5 -> 4.5; 5 days a week -> x 7/5
    assert office(burst=1.5).daily_peak_to_average == pytest.approx(4.5)
    assert office(days=5, burst=1.5).peak_to_average == pytest.approx(4.5 * 7 / 5)
    assert preset_profile("flat", 1.3).peak_to_average == pytest.approx(1.3)


def test_profile_rejects_a_wrong_number_of_hours_and_a_burst_below_one() -> None:
    with pytest.raises(ValueError, match="24 hourly weights"):
        LoadProfile(name="x", weights=(1.0,) * 23)
    with pytest.raises(InputError, match="load_profile.burst"):
        preset_profile("flat").with_burst(0.9)
    with pytest.raises(InputError, match="load_profile"):
        load_profile("weekends")


def test_ramp_shape_has_mean_one_and_peaks_at_the_burst() -> None:
    for burst in (1.0, 1.5, 2.0, 3.0, 6.0):
        x = np.asarray(ramp_shape(burst))
        assert x.mean() == pytest.approx(1, rel=1e-6) and x.max() == pytest.approx(burst, rel=1e-3)


# --- billing per hour of the day ------------------------------------------------------------------------


def billed_gpu_hours(
    offer: GpuVmOffer, replica_gpus: int, hosting: SelfHosting, reps: npt.NDArray[np.float64], always_on: bool,
    profile: LoadProfile,
) -> tuple[npt.NDArray[np.float64], float]:  # fmt: skip
    """(instances up each hour, billed GPU hours a month) from the one billing module."""
    counts = vm_counts(offer, replica_gpus, hosting, profile_schedule(profile, reps, always_on))
    return counts.instances[0], float(counts.gpu_hours()[0])


def test_office_hours_at_per_second_billing_cost_less_than_always_on_with_the_same_peak() -> None:
    # 1 req/s in each of 8 office hours: 876,000 turns a month; 1 replica each office hour, none at night
    profile = office()
    turns = round(8 * 3600 * DAYS_PER_MONTH)
    reps = hourly_replicas(profile, turns, 2.0, 0.5)
    assert reps.tolist() == [0] * 9 + [1] * 8 + [0] * 7
    hosting = SelfHosting(spare_replicas=0, min_replicas=0, startup_minutes=6)
    offer = GpuVmOffer.model_validate(vm_offer("second"))
    inst, auto = billed_gpu_hours(offer, 1, hosting, reps, False, profile)
    _, always = billed_gpu_hours(offer, 1, hosting, reps, True, profile)
    assert inst.max() == 1  # the same peak
    assert auto == pytest.approx(8.1 * DAYS_PER_MONTH)  # 8 h + 6 min start-up, per second
    assert always == 730
    # hourly billing rounds the 8.1 h run up to 9 h
    _, hourly = billed_gpu_hours(GpuVmOffer.model_validate(vm_offer("hour")), 1, hosting, reps, False, profile)
    assert hourly == pytest.approx(9 * DAYS_PER_MONTH)


def test_quiet_days_keep_only_the_floor() -> None:
    # 5 days a week: the office hours run on 5/7 of the month's days; the 1-replica floor runs always
    profile = office(days=5)
    hosting = SelfHosting(spare_replicas=0, min_replicas=1, startup_minutes=0)
    reps = np.array([0.0] * 9 + [2.0] * 8 + [0.0] * 7)
    offer = GpuVmOffer.model_validate(vm_offer("second"))
    _, hours = billed_gpu_hours(offer, 1, hosting, reps, False, profile)
    assert hours == pytest.approx(24 * DAYS_PER_MONTH + 8 * DAYS_PER_MONTH * 5 / 7)


def test_a_run_over_midnight_is_billed_once() -> None:
    # up 22:00-02:00: one run of 4 h (+ start-up), not two runs each rounded up
    weights = tuple(1.0 if h in (22, 23, 0, 1) else 0.0 for h in range(24))
    profile = LoadProfile(name="night", weights=weights)
    reps = np.array([1.0 if h in (22, 23, 0, 1) else 0.0 for h in range(24)])
    hosting = SelfHosting(spare_replicas=0, min_replicas=0, startup_minutes=30)
    offer = GpuVmOffer.model_validate(vm_offer("hour"))
    _, hours = billed_gpu_hours(offer, 1, hosting, reps, False, profile)
    assert hours == pytest.approx(5 * DAYS_PER_MONTH)  # 4.5 h rounded up to 5, once a day


def test_business_hours_preset_autoscaled_costs_less_than_always_on() -> None:
    scenario = synthetic_scenario(5_000_000)
    costs = profile_costs(scenario, synthetic_catalogs("second"), preset_profile("business_hours", 1.2))
    assert costs.self_hosted_always_on is not None and costs.self_hosted_autoscaled is not None
    assert costs.self_hosted_autoscaled.gpus == costs.self_hosted_always_on.gpus  # same peak
    assert costs.self_hosted_autoscaled.monthly < costs.self_hosted_always_on.monthly


def test_the_scenarios_own_traffic_as_a_profile_reproduces_compare(catalogs: Catalogs) -> None:
    # always on (coding agent, 10 active hours) and autoscaled (batch, 8 active hours, floor 0)
    for name in ("coding-agent", "batch-summarisation"):
        scenario = load_preset(name).model_copy(update={"as_of": SEED_DATE})
        costs = profile_costs(scenario, catalogs, profile_from_traffic(scenario.traffic))
        expected = compare(scenario, catalogs).option("self_hosted")
        assert expected is not None and costs.self_hosted is not None
        assert costs.self_hosted.monthly == expected.monthly
        assert costs.self_hosted.gpu_hours == pytest.approx(expected.gpu_hours)


def test_always_on_under_a_flat_profile_is_compares_round_the_clock_cost() -> None:
    scenario = synthetic_scenario(3_000_000)
    cat = synthetic_catalogs()
    costs = profile_costs(scenario, cat, preset_profile("flat"))
    base = compare(scenario, cat)
    for option in ("serverless", "dedicated", "self_hosted"):
        got, want = costs.options()[option], base.option(option)
        assert want is not None and got.monthly == want.monthly
    # by hand: 3,000,000 turns = 1.14 req/s -> 2 replicas of 1 GPU x 730 h x $2
    assert costs.self_hosted_always_on is not None and costs.self_hosted_always_on.monthly == D("2920.00")


# --- traces ------------------------------------------------------------------------------------------


def test_azure_trace_gives_a_burst_of_at_least_one_and_says_it_covers_one_hour() -> None:
    for path in sorted(AZURE.glob("*.csv")):
        shape = trace_shape(path)
        assert not shape.covers_a_day and shape.hourly_weights is None
        assert 0.9 < shape.span_hours < 1.0
        assert shape.burst >= 1
        assert any("less than a day" in n and "not a daily shape" in n for n in shape.notes)
        profile = profile_from_trace(path)
        assert profile.peak_to_average >= 1 and profile.burst == shape.burst
        assert profile.weights == (1.0,) * 24  # the daily shape is not invented from one hour
        assert any("covers 0.9" in n for n in profile.notes)


def test_azure_burst_matches_an_independent_one_minute_resample() -> None:
    path = AZURE / "AzureLLMInferenceTrace_conv.csv"
    times = pd.to_datetime(pd.read_csv(path)["TIMESTAMP"])
    counts = times.to_frame().set_index("TIMESTAMP").resample("60s", origin="start").size()
    whole = counts.iloc[: int((times.max() - times.min()).total_seconds() // 60)]  # drop the partial last minute
    assert trace_shape(path).burst == pytest.approx(whole.max() / whole.mean())


def test_a_short_trace_keeps_the_daily_shape_chosen() -> None:
    profile = load_profile(str(AZURE / "AzureLLMInferenceTrace_code.csv"), daily="business_hours")
    assert profile.weights == preset_profile("business_hours").weights and profile.days_per_week == 5
    assert profile.within_hour is not None
    assert load_profile(str(AZURE / "AzureLLMInferenceTrace_code.csv"), burst=1.5).burst == 1.5


def test_a_log_of_two_days_gives_the_daily_shape(tmp_path: Path) -> None:
    # 2 days from midnight: 10 requests in each hour, 40 in hour 10 (one every 90 s)
    start = pd.Timestamp("2026-03-02 00:00:00")
    stamps = []
    for day in range(2):
        for hour in range(24):
            n = 40 if hour == 10 else 10
            base = start + pd.Timedelta(days=day, hours=hour)
            stamps += [base + pd.Timedelta(seconds=i * 3600 / n) for i in range(n)]
    stamps.append(start + pd.Timedelta(days=2))
    path = tmp_path / "log.csv"
    pd.DataFrame({"timestamp": stamps, "tokens": 1}).to_csv(path, index=False)
    shape = trace_shape(path)
    assert shape.covers_a_day and shape.hourly_weights is not None
    assert shape.hourly_weights[10] == 40 and shape.hourly_weights[3] == 10
    profile = profile_from_trace(path)
    assert profile.hourly_factors.max() == pytest.approx(40 / ((23 * 10 + 40) / 24))


def test_json_lines_timestamps_in_milliseconds(tmp_path: Path) -> None:
    # Mooncake style: ms since the start; 10 per minute for 4 minutes, then 30 in the fifth -> burst 30/14
    rows = [i * 6000 for i in range(40)] + [240_000 + i * 2000 for i in range(30)] + [300_000]
    path = tmp_path / "trace.jsonl"
    path.write_text("\n".join(json.dumps({"timestamp": t, "input_length": 1}) for t in rows) + "\n")
    shape = trace_shape(path)
    assert shape.span_hours == pytest.approx(300 / 3600)
    assert shape.burst == pytest.approx(30 / 14)


def test_a_file_without_timestamps_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match="TIMESTAMP"):
        trace_shape(path)
