"""One bill for owned GPUs: every path that prices them gets the same replicas and the same cents.

Compare's exact figure, the break-even sweep, the load profile, the hybrid plan and growth all bill
owned capacity through :mod:`calculator.pricing.billing`; these tests price one scenario through each
of them and pin that they agree, and that no option gets cheaper as the volume rises.
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calculator.catalog.catalogs import Catalogs
from calculator.catalog.prices import GpuVmOffer
from calculator.planning.growth import grow
from calculator.planning.hybrid import hybrid_plan
from calculator.planning.load_profile import profile_costs
from calculator.pricing.billing import Schedule, billed_seconds, vm_counts
from calculator.pricing.compare import compare, curves
from calculator.pricing.option import cents
from calculator.pricing.resolve import resolve
from calculator.scenario.inputs import DAYS_PER_MONTH_EXACT, SelfHosting
from calculator.scenario.load import profile_from_traffic
from calculator.scenario.model import Scenario, load_preset

from .conftest import SEED_DATE
from .test_load_profile import vm_offer


def _coding_agent(autoscale: bool = False, **hosting: object) -> Scenario:
    scenario = load_preset("coding-agent").model_copy(update={"as_of": SEED_DATE})
    return scenario.model_copy(
        update={"self_hosting": scenario.self_hosting.model_copy(update={"autoscale": autoscale, **hosting})}
    )


@pytest.mark.parametrize("autoscale", [False, True])
def test_one_scenario_bills_the_same_replicas_and_cents_on_every_path(catalogs: Catalogs, autoscale: bool) -> None:
    scenario = _coding_agent(autoscale)
    result = compare(scenario, catalogs)
    turns = scenario.traffic.turns_per_month
    sweep = curves(resolve(scenario, catalogs))
    profile = profile_from_traffic(scenario.traffic)
    under_profile = profile_costs(scenario, catalogs, profile)
    growth = grow(scenario, catalogs, months=12, growth_per_month=0.0)
    for option in ("dedicated", "self_hosted"):
        exact = result.option(option)
        assert exact is not None
        # the sweep prices the same counts in float
        assert cents(Decimal(repr(float(sweep[option](np.array([float(turns)]))[0])))) == exact.monthly
        # the load profile that is the scenario's own traffic model
        profiled = under_profile.options()[option]
        assert (profiled.monthly, profiled.replicas, profiled.gpus) == (exact.monthly, exact.replicas, exact.gpus)
        # growth at 0% is Compare every month
        assert {row.monthly[option] for row in growth.rows} == {exact.monthly}
        # the hybrid plan with no overflow is Compare's owned option
        plan = hybrid_plan(scenario, catalogs, profile, percentile=100, owned=option).plan
        assert plan.overflow_turns == 0 and plan.owned is not None
        assert (plan.owned.monthly, plan.owned.replicas, plan.owned.gpus) == (exact.monthly, exact.replicas, exact.gpus)
        assert plan.monthly == exact.monthly


def test_a_dedicated_endpoint_reports_engine_replicas_and_billing_units_alike_everywhere(catalogs: Catalogs) -> None:
    # Fireworks bills its H200 endpoint per GPU replica; the sizing setup runs 4 GPUs per engine replica.
    scenario = _coding_agent()
    exact = compare(scenario, catalogs).option("dedicated")
    plan = hybrid_plan(scenario, catalogs, profile_from_traffic(scenario.traffic), percentile=100, owned="dedicated")
    owned = plan.plan.owned
    assert exact is not None and owned is not None
    assert exact.replica_gpus == 4 and exact.billing_units is not None and exact.replicas is not None
    assert exact.billing_units * 1 == exact.gpus == exact.replicas * 4  # 1 GPU per billing unit, 4 per engine
    assert (owned.replicas, owned.billing_units) == (exact.replicas, exact.billing_units)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    volumes=st.lists(st.floats(1e3, 1e9), min_size=2, max_size=6),
    autoscale=st.booleans(),
    spare=st.integers(0, 3),
    floor=st.integers(0, 3),
    active=st.floats(1, 24),
    share=st.floats(0, 0.99),
)
def test_no_option_gets_cheaper_as_volume_rises_and_exact_equals_the_sweep(
    catalogs: Catalogs, volumes: list[float], autoscale: bool, spare: int, floor: int, active: float, share: float
) -> None:
    base = _coding_agent(autoscale, spare_replicas=spare, min_replicas=floor)
    scenario = base.model_copy(
        update={
            "traffic": base.traffic.model_copy(update={"active_hours_per_day": active}),
            "workload": base.workload.model_copy(update={"prefix_share": Decimal(str(round(share, 4)))}),
        }
    )
    res = resolve(scenario, catalogs)
    grid = np.sort(np.asarray(volumes, dtype=np.float64))
    for name, fn in curves(res).items():
        values = fn(grid)
        assert np.all(np.diff(values) >= -1e-9), name
    turns = int(grid[0])
    at = compare(res.with_scenario(scenario.model_copy(update={"traffic": scenario.traffic.model_copy(
        update={"turns_per_month": turns})})))  # fmt: skip
    for option in at.options:
        swept = float(curves(at.resolution)[option.option](np.array([float(turns)]))[0])
        assert abs(Decimal(repr(swept)) - option.monthly) <= Decimal("0.01"), option.option


def test_autoscaled_slots_are_billed_per_run_not_per_slot() -> None:
    # 1,000 replicas in office hours, 1 at night: the bill loops over the two levels, not 1,000 slots,
    # and equals 1 instance all day + 999 instances for the 10 h run (+2 min start-up, per second).
    offer = GpuVmOffer.model_validate(vm_offer("second"))
    hosting = SelfHosting(spare_replicas=0, min_replicas=1, startup_minutes=2)
    schedule = Schedule(np.array([[1000.0, 0.0]]), (10.0, 14.0), always_on=False)
    counts = vm_counts(offer, 1, hosting, schedule)
    run = billed_seconds(10 + 2 / 60, offer)
    assert int(counts.active_day_seconds[0]) == 86400 + 999 * run
    assert counts.gpu_hours_exact() == (Decimal(86400 + 999 * run) * DAYS_PER_MONTH_EXACT) / 3600


def test_the_utilisation_chart_prices_the_setup_each_option_was_sized_from(catalogs: Catalogs) -> None:
    # A 1-GPU roofline estimate: the chart's cost per million tokens must use 1 GPU per replica, not
    # the default record's 4 (which showed self-hosting 4x too dear).
    from calculator.present.charts import utilisation_frame
    from calculator.scenario.inputs import EstimateSetup

    base = _coding_agent()
    scenario = base.model_copy(
        update={
            "self_hosting": base.self_hosting.model_copy(
                # Llama-3.1-8B: under the engine memory rule (BF16 KV cache, vLLM's overhead) Llama-3.3-70B
                # FP8 no longer fits one H100 at this scenario's 20,500-token turns, as vLLM itself reports
                update={"estimate": EstimateSetup(model="llama-3.1-8b", precision="bf16", gpus_per_replica=1)}
            ),
            "gpu_vm": base.gpu_vm.model_copy(update={"offer": "h100-sxm-1x"}) if base.gpu_vm else None,
        }
    )
    scenario = scenario.model_copy(update={"gpu_vm": scenario.gpu_vm, "dedicated": None})
    result = compare(scenario, catalogs)
    option = result.option("self_hosted")
    assert option is not None and option.replica_gpus == 1 and option.capacity is not None
    frame = utilisation_frame(result)
    row = frame[(frame["option"] == "Self-hosted GPUs") & (frame["utilisation"] == 1.0)].iloc[0]
    side = result.resolution.self_hosted
    assert side is not None and isinstance(side.offer, GpuVmOffer)
    offer_price = float(side.offer.version_at(SEED_DATE).per_gpu_hour)
    tokens = scenario.workload.input_tokens + scenario.workload.output_tokens
    expected = offer_price * 1 / (option.capacity.requests_per_s * 3600 * tokens) * 1e6
    assert row["per_million"] == pytest.approx(expected)
