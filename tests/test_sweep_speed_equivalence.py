"""The sweeps price each point from the scenario resolved once (``ResolvedScenario.with_scenario``): every
figure must be the one the point gets when it is resolved and compared on its own."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from typing import Any

import altair as alt
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calculator.errors import InputError
from calculator.present import charts
from calculator.pricing.cheapest import with_cheapest_offers
from calculator.pricing.compare import Catalogs, compare, cost_curves
from calculator.pricing.resolve import resolve
from calculator.scenario.inputs import EstimateSetup, LatencyTarget
from calculator.scenario.model import GpuVmChoice, Scenario, load_preset

AS_OF = dt.date(2026, 10, 30)


def _seed() -> Scenario:
    return Scenario.model_validate(
        {
            "name": "seed",
            "as_of": AS_OF,
            "workload": {"input_tokens": 20000, "prefix_share": "0.9", "hit_rate": "1", "output_tokens": 500},
            "traffic": {"turns_per_month": 1_000_000},
            "serverless": {"provider": "lyceum", "model": "GLM-5.3"},
            "gpu_vm": {"provider": "runpod", "offer": "h200-community"},
            "self_hosting": {"record": "sglang-llama-3.3-70b-bf16-4xh200-rate8"},
        }
    )


def _estimated() -> Scenario:
    """GPU options sized from a roofline estimate: the record itself depends on the turn."""
    base = load_preset("coding-agent")
    hosting = base.self_hosting.model_copy(
        update={"estimate": EstimateSetup(model="llama-3.3-70b", precision="fp8", gpus_per_replica=1)}
    )
    # one H200 VM: 70B at FP8 leaves one H100 room for about 2,500 tokens under the engine memory rule, not
    # this 20,500-token turn (the preset itself now runs GLM-5 on an 8x B200 node)
    gpu_vm = GpuVmChoice(provider="nebius", offer="h200-sxm-1x")
    return base.model_copy(update={"self_hosting": hosting, "gpu_vm": gpu_vm})


def _latency_bound() -> Scenario:
    """The busiest load level meeting a latency target: the capacity note names it."""
    base = load_preset("coding-agent")
    target = LatencyTarget(percentile="p50", tokens_per_s_per_user=30)
    # a named record: its measured levels are what the target picks from (the preset's auto estimate has none)
    update = {"latency_target": target, "record": "sglang-llama-3.3-70b-bf16-4xh200-rate4"}
    return base.model_copy(update={"self_hosting": base.self_hosting.model_copy(update=update)})


def _scaled_tokens() -> Scenario:
    """A tokenizer factor for the serverless model: its shape is scaled, the GPU options' is not."""
    base = _seed()
    return base.model_copy(update={"token_factors": {"GLM-5.3": Decimal("1.15")}})


SCENARIOS = {
    "seed": _seed,
    "coding-agent": lambda: load_preset("coding-agent"),
    "rag-chatbot": lambda: load_preset("rag-chatbot"),
    "estimated": _estimated,
    "latency-bound": _latency_bound,
    "scaled-tokens": _scaled_tokens,
}


@pytest.fixture(params=list(SCENARIOS))
def scenario(request: pytest.FixtureRequest, catalogs: Catalogs) -> Scenario:
    """Each scenario with its 'cheapest' GPU options picked: a sweep keeps the configuration the search chose
    (the invariant here is that the fast path prices a configuration as resolving it alone does)."""
    made: Scenario = SCENARIOS[request.param]()
    return with_cheapest_offers(made, catalogs)[0]


def _compared(comparison: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = comparison.model_dump()
    return dumped


def _with_workload(scenario: Scenario, **update: Any) -> Scenario:
    return scenario.model_copy(update={"workload": scenario.workload.model_copy(update=update)})


@pytest.mark.parametrize("variable", ["prefix_share", "hit_rate"])
def test_each_sweep_point_is_what_the_point_costs_priced_alone_to_the_cent(
    scenario: Scenario, catalogs: Catalogs, variable: str
) -> None:
    frame = charts.share_sweep_frame(scenario, catalogs, variable, points=11)
    assert not frame.empty
    values = sorted(set(frame["value"]))
    for value in (values[0], values[3], values[5], values[9], values[10]):
        point = _with_workload(scenario, **{variable: Decimal(f"{value:.4f}")})
        alone = compare(point, catalogs)
        curves = cost_curves(point, catalogs)
        rows = frame[frame["value"] == value]
        assert set(rows["key"]) == {o.option for o in alone.options}
        for _, row in rows.iterrows():
            option = alone.option(row["key"])
            assert option is not None
            # the very float the point's own curve gives, and the exact bill to the cent
            assert row["monthly"] == float(curves[row["key"]](np.array([float(point.traffic.turns_per_month)]))[0])
            assert Decimal(f"{row['monthly']:.2f}") == option.monthly


def test_a_changed_workload_resolves_to_what_resolving_it_alone_gives(scenario: Scenario, catalogs: Catalogs) -> None:
    base = resolve(scenario, catalogs)
    w = scenario.workload
    for variant in (
        _with_workload(scenario, prefix_share=Decimal("0.25")),
        _with_workload(scenario, hit_rate=Decimal("0.5")),
        _with_workload(scenario, input_tokens=w.input_tokens * 2),
        _with_workload(scenario, output_tokens=w.output_tokens // 2),
        _with_workload(scenario, prefix_share=Decimal(0)),
    ):
        try:
            alone = resolve(variant, catalogs)
        except InputError as exc:  # e.g. twice the tokens no longer fit: the same refusal either way
            with pytest.raises(InputError, match=re.escape(exc.message)):
                base.with_scenario(variant)
            continue
        fast = base.with_scenario(variant)
        assert (fast.serverless, fast.dedicated, fast.self_hosted, fast.warnings) == (
            alone.serverless,
            alone.dedicated,
            alone.self_hosted,
            alone.warnings,
        )
        assert _compared(compare(fast)) == _compared(compare(alone))


def test_traffic_and_hosting_terms_keep_the_sides_and_price_as_resolved_alone(
    scenario: Scenario, catalogs: Catalogs
) -> None:
    base = resolve(scenario, catalogs)
    t, h = scenario.traffic, scenario.self_hosting
    for variant in (
        scenario.model_copy(update={"traffic": t.model_copy(update={"peak_to_average": t.peak_to_average * 2})}),
        scenario.model_copy(update={"self_hosting": h.model_copy(update={"target_utilisation": 0.5})}),
        scenario.model_copy(update={"self_hosting": h.model_copy(update={"engineer_share": 1.0})}),
    ):
        assert _compared(compare(base.with_scenario(variant))) == _compared(compare(variant, catalogs))


def test_another_offer_or_record_is_looked_up_again(catalogs: Catalogs) -> None:
    scenario = _seed()
    base = resolve(scenario, catalogs)
    record = "sglang-llama-3.3-70b-bf16-4xh200-rate4"
    other_record = scenario.model_copy(
        update={"self_hosting": scenario.self_hosting.model_copy(update={"record": record})}
    )
    no_gpu = scenario.model_copy(update={"gpu_vm": None})
    for variant in (other_record, no_gpu):
        assert _compared(compare(base.with_scenario(variant))) == _compared(compare(variant, catalogs))
    assert base.with_scenario(no_gpu).self_hosted is None


def test_the_sensitivity_rows_are_the_variants_priced_alone(scenario: Scenario, catalogs: Catalogs) -> None:
    cheapest = compare(scenario, catalogs).cheapest
    assert cheapest is not None
    frame, base = charts.sensitivity_frame(scenario, catalogs, cheapest)
    volume = float(scenario.traffic.turns_per_month)
    assert base == float(cost_curves(scenario, catalogs)[cheapest](np.array([volume]))[0])
    w = scenario.workload
    lo = w.input_tokens // 2
    row = frame[frame["input"] == "Input tokens"].iloc[0]
    alone = cost_curves(_with_workload(scenario, input_tokens=lo), catalogs)[cheapest](np.array([volume]))[0]
    assert row["low"] == float(alone)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    share=st.decimals(min_value=0, max_value=1, places=2),
    hit=st.decimals(min_value=0, max_value=1, places=2),
    tokens=st.integers(min_value=1, max_value=120_000),
)
def test_any_turn_shape_resolves_as_it_would_alone(
    catalogs: Catalogs, share: Decimal, hit: Decimal, tokens: int
) -> None:
    scenario = _seed()
    variant = _with_workload(scenario, prefix_share=share, hit_rate=hit, input_tokens=tokens)
    try:
        alone = compare(variant, catalogs)
    except InputError as exc:  # a shape the GPU cannot hold is refused the same way either path
        with pytest.raises(InputError, match=re.escape(exc.message)):
            compare(resolve(scenario, catalogs).with_scenario(variant))
        return
    assert _compared(compare(resolve(scenario, catalogs).with_scenario(variant))) == _compared(alone)


def test_the_cheapest_switch_is_read_from_the_cheapest_row_at_each_value() -> None:
    frame = pd.DataFrame(
        {
            "value": [1.0, 0.0, 0.0, 0.5, 0.5, 1.0],
            "key": ["b", "a", "b", "a", "b", "a"],
            "monthly": [2.0, 1.0, 1.0, 2.0, float("nan"), 3.0],
        }
    )
    # a tie (at 0) keeps the first row's option; a missing cost (b at 0.5) is not a cheaper one
    assert charts.cheapest_switch(frame) == [(0.75, "a", "b")]
    assert charts.cheapest_switch(frame[frame["value"] < 1]) == []


def _charts(scenario: Scenario, catalogs: Catalogs) -> dict[str, Any]:
    result = compare(scenario, catalogs)
    assert result.cheapest is not None
    now: dict[str, float] = {o.option: o.utilisation for o in result.options if o.utilisation is not None}
    sweep = charts.share_sweep_frame(scenario, catalogs, "prefix_share", points=11)
    return {
        "volume": charts.volume_chart(
            cost_curves(scenario, catalogs), float(scenario.traffic.turns_per_month), result
        ).to_dict(),
        "sweep": charts.share_sweep_chart(sweep, "prefix_share", float(scenario.workload.prefix_share)).to_dict(),
        "utilisation": charts.utilisation_chart(charts.utilisation_frame(result), "USD", now).to_dict(),
        "sensitivity": charts.sensitivity_chart(
            *charts.sensitivity_frame(scenario, catalogs, result.cheapest)
        ).to_dict(),
    }


def test_a_layered_chart_is_the_one_altair_layers(
    scenario: Scenario, catalogs: Catalogs, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = _charts(scenario, catalogs)  # to_dict checks each against the Vega-Lite schema
    monkeypatch.setattr(charts, "_layered", lambda *layers, **props: alt.layer(*layers, **props))
    assert fast == _charts(scenario, catalogs)


def test_layers_sharing_their_data_are_left_to_altair() -> None:
    frame = pd.DataFrame({"x": [1, 2], "y": [3, 4]})
    base = alt.Chart(frame).encode(x="x:Q", y="y:Q")
    shared = charts._layered(base.mark_line(), base.mark_point(), title="t")
    assert shared.to_dict() == alt.layer(base.mark_line(), base.mark_point(), title="t").to_dict()
    assert "data" in shared.to_dict()  # hoisted to the top, as alt.layer does
