"""An estimated option's monthly cost and the break-evens as a range over the roofline's hold-out error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from calculator.capacity.calibration import EstimateError
from calculator.cli import main
from calculator.present.estimate_range import estimate_range_caption
from calculator.pricing.compare import Catalogs, Comparison, compare
from calculator.scenario.inputs import EstimateSetup
from calculator.scenario.model import GpuVmChoice, Scenario, dump_scenario

from .named import named_preset


def _estimated() -> Scenario:
    preset = named_preset("coding-agent")
    hosting = preset.self_hosting.model_copy(
        update={"estimate": EstimateSetup(model="llama-3.3-70b", precision="fp8", gpus_per_replica=2)}
    )
    # one GPU per instance, so replicas move the bill: on the preset's 8-GPU node, 1 to 4 replicas of 2 GPUs
    # cost the same node and a range would be a point
    vm = GpuVmChoice(provider="nebius", offer="h200-sxm-1x")
    return preset.model_copy(update={"self_hosting": hosting, "gpu_vm": vm})


BAND = EstimateError(
    low_factor=0.8, high_factor=1.5, median_abs=0.2, worst_abs=0.6, points=40, moe_points=10, provenance="test band"
)
"""An estimate 20% low to 50% high: the real capacity is 1.25x to 0.67x the estimate."""


def _range(result: Comparison, option: str) -> tuple[float, float]:
    assert result.estimate_range is not None
    cost = next(c for c in result.estimate_range.costs if c.option == option)
    return float(cost.low), float(cost.high)


def test_an_estimated_option_s_cost_range_contains_its_point_estimate(catalogs: Catalogs) -> None:
    result = compare(_estimated(), catalogs, error=BAND)
    for option in ("dedicated", "self_hosted"):
        point = result.option(option)
        assert point is not None
        low, high = _range(result, option)
        assert low <= float(point.monthly) <= high and low < high


def test_the_cost_range_widens_with_the_error(catalogs: Catalogs) -> None:
    narrow = compare(_estimated(), catalogs, error=BAND)
    wide = compare(_estimated(), catalogs, error=BAND.widened(2))
    assert BAND.widened(2).low_factor == pytest.approx(0.64) and BAND.widened(2).high_factor == pytest.approx(2.25)
    n_low, n_high = _range(narrow, "self_hosted")
    w_low, w_high = _range(wide, "self_hosted")
    assert w_low <= n_low and w_high >= n_high and (w_low, w_high) != (n_low, n_high)


def test_the_high_end_is_the_cost_of_the_capacity_the_error_leaves(catalogs: Catalogs) -> None:
    # an estimate 50% high means each replica serves 1/1.5 of it: the self-hosted bill at the high end is
    # the bill of the same scenario sized with that capacity (whole replicas, spares and instances included)
    result = compare(_estimated(), catalogs, error=BAND)
    point = result.option("self_hosted")
    assert point is not None and point.capacity is not None and point.replicas is not None
    _, high = _range(result, "self_hosted")
    # replicas grow as 1 / capacity (rounded up), so the high end is at least the point and at most 1.5x it
    # plus one replica's share of the bill
    per_replica = float(point.monthly) / point.replicas
    assert float(point.monthly) <= high <= float(point.monthly) * 1.5 + per_replica


def test_a_comparison_sized_from_measurements_has_no_estimate_range(catalogs: Catalogs) -> None:
    # the coding agent's named 8x B200 node is sized from the published GLM-5 run on it
    assert compare(named_preset("coding-agent"), catalogs).estimate_range is None


def test_the_page_caption_gives_the_range_and_says_when_the_cheapest_option_changes(catalogs: Catalogs) -> None:
    result = compare(_estimated(), catalogs, error=BAND)
    band = result.estimate_range
    assert band is not None
    low, high = _range(result, "self_hosted")
    caption = estimate_range_caption(band, "USD")
    assert f"Self-hosted GPUs estimate: ${low:,.2f}–${high:,.2f} a month" in caption
    assert "Range from the test band." in caption
    changes = band.model_copy(update={"cheapest": ("serverless", "self_hosted")})
    stays = band.model_copy(update={"cheapest": ("serverless",)})
    assert "; the cheapest option changes within this range (Serverless API or Self-hosted GPUs)" in (
        estimate_range_caption(changes, "USD")
    )
    assert "the cheapest option stays the same within this range" in estimate_range_caption(stays, "USD")


def test_the_cheapest_option_is_listed_when_it_changes_within_the_band(catalogs: Catalogs) -> None:
    # at 4M turns a month the serverless API is cheapest at the point estimate; with the estimate up to
    # 3.8x too low (factor 0.8^6 = 0.26), the self-hosted GPUs at the band's low end undercut it
    scenario = _estimated()
    scenario = scenario.model_copy(
        update={"traffic": scenario.traffic.model_copy(update={"turns_per_month": 4_000_000})}
    )
    result = compare(scenario, catalogs, error=BAND.widened(6))
    band = result.estimate_range
    assert band is not None and result.cheapest == "serverless"
    serverless = result.option("serverless")
    assert serverless is not None
    low, _ = _range(result, "self_hosted")
    assert low < float(serverless.monthly)
    assert band.cheapest == ("serverless", "self_hosted") and band.cheapest_changes
    assert "the cheapest option changes within this range" in estimate_range_caption(band, "USD")
    # the narrower band keeps the serverless API cheapest throughout
    assert compare(scenario, catalogs, error=BAND).estimate_range.cheapest == ("serverless",)  # type: ignore[union-attr]


def test_the_command_line_prints_and_returns_the_range_for_an_estimated_option(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "estimated.yaml"
    path.write_text(dump_scenario(_estimated()), encoding="utf-8")
    assert main(["compare", "--scenario", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    band = data["estimate_range"]
    monthly = {o["option"]: o["monthly"] for o in data["options"]}
    for row in band["options"]:
        assert row["monthly_low"] <= monthly[row["option"]] <= row["monthly_high"]
    assert band["cheapest"][0] == data["cheapest"] and "leave one source out" in band["provenance"]
    # existing keys are kept
    assert {"options", "cheapest", "break_even", "stays_cheapest_above"} <= set(data)
    assert main(["compare", "--scenario", str(path)]) == 0
    text = capsys.readouterr().out
    assert "Estimated options as a range (roofline on " in text
    assert "Self-hosted GPUs: $" in text.split("Estimated options as a range")[1]
