"""The Plan page through AppTest, and its tables, sentences and charts in calculator.present.plan_charts."""

from __future__ import annotations

import pandas as pd
from streamlit.testing.v1 import AppTest

from calculator.planning.growth import grow
from calculator.planning.hybrid import hybrid_plan
from calculator.planning.load_profile import preset_profile, profile_from_traffic
from calculator.present import plan_charts as pc
from calculator.present.money import format_money
from calculator.pricing.cheapest import with_cheapest_offers
from calculator.pricing.compare import Catalogs
from calculator.scenario.model import load_preset

from .apptest import open_page, table_with, text_of


def _page(**params: str) -> AppTest:
    return open_page("plan", 60, **params)


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_the_hybrid_percentile_shown_is_hybrid_plans_best(catalogs: Catalogs) -> None:
    # multi-turn chat at 30M turns: owning replicas for the evening base and renting the peaks pays (the
    # coding agent's GLM-5 on GPUs never undercuts its API, so its best hybrid owns nothing)
    at = _page(pl_sc="multi-turn-chat", pl_vol="30000000", pl_prof="consumer evenings")
    assert not at.error, [e.value for e in at.error]
    result = hybrid_plan(
        load_preset("multi-turn-chat"), catalogs, preset_profile("consumer_evenings"), turns_per_month=30_000_000
    )
    best = result.best
    assert 0 < best.percentile < 100 and best.overflow_turns > 0  # a real hybrid: owned + overflow
    metrics = _metrics(at)
    assert metrics["Cheapest hybrid"] == f"{best.owned_replicas} replicas owned"  # words, not a percentile code
    assert metrics["Hybrid per month"] == format_money(best.monthly, "USD")
    answer = text_of(at.success)
    assert f"owns {best.owned_replicas} replica(s)" in answer
    assert f"enough for {best.percentile:g}% of the day's hours" in answer
    assert f"{best.overflow_share:.1%}" in answer
    table = table_with(at, "Option")
    hybrid_row = table[table["Option"].str.startswith("Hybrid")]
    assert list(hybrid_row["Per month"]) == [format_money(best.monthly, "USD")]
    pure = result.pure
    assert pure.self_hosted_always_on is not None and pure.self_hosted_autoscaled is not None
    assert set(table["Option"]) >= {"Serverless API", "Self-hosted GPUs, always on", "Self-hosted GPUs, autoscaled"}
    assert len(at.get("vega_lite_chart")) == 5  # profile, hybrid hours, cost curve, growth, cumulative


def test_owning_nothing_is_said_in_words_on_the_default_preset(catalogs: Catalogs) -> None:
    at = _page()
    scenario = load_preset("coding-agent")
    result = hybrid_plan(scenario, catalogs, profile_from_traffic(scenario.traffic))
    assert result.best.owned_replicas == 0
    assert _metrics(at)["Cheapest hybrid"] == "Nothing owned"
    assert "Owning nothing is the cheapest hybrid" in text_of(at.success)


def test_growth_month_in_words_matches_grow(catalogs: Catalogs) -> None:
    params = {"pl_sc": "multi-turn-chat", "pl_vol": "100000", "pl_prof": "flat", "pl_m": "36", "pl_g": "25"}
    at = _page(**params)
    assert not at.error, [e.value for e in at.error]
    # the page prices the configurations 'cheapest' picks for the scenario as given, then plans with them
    scenario = with_cheapest_offers(load_preset("multi-turn-chat"), catalogs)[0]
    profile = preset_profile("flat")
    plan = grow(pc.growth_scenario(scenario, profile, 100_000), catalogs, 36, 0.25, 100_000)
    month = plan.becomes_cheapest["self_hosted"]
    assert month is not None and month > 1
    words = text_of(at.info)
    assert f"Self-hosted GPUs becomes the cheapest in month {month}." in words
    assert plan.stays_cheapest is not None
    assert f"from month {plan.stays_cheapest[1]} to the end (month 36)" in words


def test_growth_month_one_matches_the_always_on_options_under_the_profile(catalogs: Catalogs) -> None:
    scenario = with_cheapest_offers(load_preset("multi-turn-chat"), catalogs)[0]  # one pick for both plans
    profile = preset_profile("business_hours", burst=1.5)
    result = hybrid_plan(scenario, catalogs, profile, autoscale=False)
    plan = grow(pc.growth_scenario(scenario, profile, result.turns_per_month), catalogs, 12, 0.0)
    first = plan.rows[0].monthly
    pure = result.pure
    assert pure.serverless and pure.dedicated and pure.self_hosted_always_on
    assert first["serverless"] == pure.serverless.monthly
    assert first["dedicated"] == pure.dedicated.monthly
    assert first["self_hosted"] == pure.self_hosted_always_on.monthly


def test_a_trace_upload_sets_the_burst_and_a_bad_one_names_the_field() -> None:
    at = _page(pl_prof="from a request log")
    assert "Upload a request log" in text_of(at.info)
    stamps = [f"2026-01-01T10:{m:02d}:{s:02d}" for m in range(10) for s in range(0, 60, 2 if m == 3 else 20)]
    csv = ("TIMESTAMP\n" + "\n".join(stamps) + "\n").encode()
    at.file_uploader(key="pl_trace").set_value(("azure.csv", csv, "text/csv")).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "trace azure.csv" in text_of(at.caption)
    assert float(_metrics(at)["Peak-to-average"]) > 2  # minute 3 holds ten times the others' requests

    at.file_uploader(key="pl_trace").set_value(("bad.csv", b"when\n1\n2\n", "text/csv")).run()
    assert not at.exception
    assert "Request log" in text_of(at.error) and "no TIMESTAMP column" in text_of(at.error)


def test_bad_url_values_are_named() -> None:
    at = _page(pl_m="99", pl_prof="weekends", pl_burst="abc")
    errors = text_of(at.error)
    assert "`pl_m` (Months)" in errors and "`pl_prof`" in errors and "`pl_burst`" in errors


def test_a_burst_below_one_is_an_error_naming_the_field() -> None:
    at = _page()
    at.number_input(key="pl_burst").set_value(0.5).run()
    assert not at.exception
    assert "Within-hour burst" in text_of(at.error)


def test_plan_charts_carry_the_data(catalogs: Catalogs) -> None:
    scenario, profile = load_preset("coding-agent"), preset_profile("consumer_evenings", burst=1.4)
    result = hybrid_plan(scenario, catalogs, profile, turns_per_month=30_000_000)
    hours = pc.hybrid_frame(result.best)
    assert len(hours) == 48 and set(hours["part"]) == {pc.SERVED, pc.OVERFLOW}
    served = hours[hours["part"] == pc.SERVED]["rps"].to_numpy()
    overflow = hours[hours["part"] == pc.OVERFLOW]["rps"].to_numpy()
    load = result.best.frame()["load_rps"].to_numpy()
    assert pd.Series(served + overflow).round(9).tolist() == pd.Series(load).round(9).tolist()
    spec = pc.hybrid_chart(hours, "p50").to_dict()
    assert spec["layer"][0]["mark"]["type"] == "bar" and spec["layer"][1]["mark"]["type"] == "line"
    curve = pc.curve_frame(result)
    assert len(curve) == 101 and curve["best"].any()
    assert pc.curve_chart(curve, result).to_dict()["layer"][1]["mark"]["type"] == "rule"
    profile_df = pc.profile_frame(result.pure)
    assert len(profile_df) == 24 and profile_df["label"].iloc[19] == "19:00"
    assert len(pc.profile_chart(profile_df, profile).to_dict()["layer"]) == 2  # bars + burst ticks
    plan = grow(pc.growth_scenario(scenario, profile, 1_000_000), catalogs, 24, 0.1, 1_000_000)
    growth = pc.growth_chart(plan).to_dict()
    steps = [layer["mark"].get("interpolate") for layer in growth["layer"] if layer["mark"]["type"] == "line"]
    assert steps == ["linear", "step-after", "step-after"]
    assert pc.cumulative_chart(plan).to_dict()["mark"]["type"] == "line"
