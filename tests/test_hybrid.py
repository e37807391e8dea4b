"""Hybrid plans: owned capacity for a percentile hour, the overflow to a serverless API."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calculator.cli import main
from calculator.errors import InputError
from calculator.planning.hybrid import hybrid_plan, owned_replicas_at
from calculator.planning.load_profile import LoadProfile, preset_profile, profile_from_trace, profile_from_traffic
from calculator.pricing.compare import Catalogs, compare
from calculator.scenario.inputs import DAYS_PER_MONTH
from calculator.scenario.model import load_preset

from .conftest import SEED_DATE
from .test_load_profile import AZURE, synthetic_catalogs, synthetic_scenario

D = Decimal
CAT = synthetic_catalogs()

# 12 hours at 1 req/s and 12 at 2 req/s (1 req/s per replica): 129,600 turns a day
TWO_LEVEL = LoadProfile(name="two-level", weights=(1.0,) * 12 + (2.0,) * 12)
TWO_LEVEL_TURNS = round(129_600 * DAYS_PER_MONTH)  # 3,942,000


def test_percentile_picks_the_hour_that_covers_that_share_of_the_day() -> None:
    needed = np.array([1.0] * 12 + [2.0] * 12)
    assert owned_replicas_at(needed, 0) == 0
    assert owned_replicas_at(needed, 1) == 1
    assert owned_replicas_at(needed, 50) == 1  # 12 of 24 hours
    assert owned_replicas_at(needed, 51) == 2
    assert owned_replicas_at(needed, 100) == 2
    with pytest.raises(InputError, match="hybrid.percentile"):
        owned_replicas_at(needed, 101)


def test_p50_owns_the_quiet_hours_and_sends_half_the_busy_hours_away() -> None:
    result = hybrid_plan(synthetic_scenario(TWO_LEVEL_TURNS), CAT, TWO_LEVEL, percentile=50)
    plan = result.plan
    assert plan.owned_replicas == 1
    # busy hours: 2 req/s against 1 req/s owned, no burst: half of 12 x 3,600 x 2 a day overflows
    assert plan.overflow_turns == round(43_200 * DAYS_PER_MONTH) == 1_314_000
    assert plan.overflow_monthly == D("1576.80")  # x $0.0012
    assert plan.owned_monthly == D("1460.00")  # 1 GPU x 730 h x $2, always on
    assert plan.monthly == D("3036.80")
    rows = plan.frame()
    assert list(rows.columns[:3]) == ["hour", "load_rps", "peak_rps"]
    assert rows["overflow_rps"].tolist() == pytest.approx([0.0] * 12 + [1.0] * 12)
    assert rows["owned_capacity_rps"].tolist() == pytest.approx([1.0] * 24)
    # the pure options beside it, by hand: serverless 3,942,000 x $0.0012; 2 GPUs always on
    assert result.pure_monthly()["serverless"] == D("4730.40")
    assert result.pure_monthly()["self_hosted"] == D("2920.00")
    assert result.best.monthly == D("2920.00") and result.best_percentiles == (51.0, 100.0)


def test_a_ramp_within_the_hour_sends_its_top_to_serverless() -> None:
    # flat day, burst 2: the rate ramps 0 -> 2x the mean; owning the mean rate leaves the top quarter over
    profile = preset_profile("flat", burst=2.0)
    turns = round(2 * 24 * 3600 * DAYS_PER_MONTH)  # 2 req/s mean, 4 req/s peak: 4 replicas
    plan = hybrid_plan(synthetic_scenario(turns), CAT, profile, percentile=100).plan
    assert plan.overflow_turns == 0 and plan.owned_replicas == 4
    half = profile.overflow_share(2.0, 2.0)
    assert half == pytest.approx(0.25, abs=1e-3)  # integral of max(0, x - 1) for x uniform on 0..2, over 2


def test_hybrid_at_100_is_pure_self_hosting_and_at_0_pure_serverless() -> None:
    for autoscale in (False, True):
        for profile in (preset_profile("business_hours", 1.3), preset_profile("consumer_evenings"), TWO_LEVEL):
            result = hybrid_plan(synthetic_scenario(7_000_000), CAT, profile, autoscale=autoscale)
            curve = dict(result.curve)
            pure = result.pure
            assert pure.self_hosted is not None and pure.serverless is not None
            assert curve[100.0] == pure.self_hosted.monthly
            assert curve[0.0] == pure.serverless.monthly
            top = hybrid_plan(synthetic_scenario(7_000_000), CAT, profile, percentile=100, autoscale=autoscale).plan
            assert top.overflow_turns == 0 and top.overflow_monthly == 0
            zero = hybrid_plan(synthetic_scenario(7_000_000), CAT, profile, percentile=0, autoscale=autoscale).plan
            assert zero.owned is None and zero.owned_monthly == 0 and zero.owned_replicas == 0
            assert zero.overflow_share == 1


def test_hybrid_of_a_dedicated_endpoint_at_100_is_the_pure_endpoint() -> None:
    result = hybrid_plan(synthetic_scenario(7_000_000), CAT, preset_profile("business_hours"), owned="dedicated")
    assert result.pure.dedicated is not None
    assert dict(result.curve)[100.0] == result.pure.dedicated.monthly


def test_hybrid_at_100_under_the_scenarios_own_traffic_is_compares_self_hosting(catalogs: Catalogs) -> None:
    for name in ("coding-agent", "batch-summarisation"):
        scenario = load_preset(name).model_copy(update={"as_of": SEED_DATE})
        result = hybrid_plan(scenario, catalogs, profile_from_traffic(scenario.traffic), percentile=100)
        expected = compare(scenario, catalogs).option("self_hosted")
        assert expected is not None and result.plan.monthly == expected.monthly


@settings(max_examples=40, deadline=None)
@given(
    turns=st.integers(min_value=10_000, max_value=200_000_000),
    burst=st.floats(min_value=1, max_value=4),
    preset=st.sampled_from(["flat", "business_hours", "consumer_evenings"]),
    autoscale=st.booleans(),
)
def test_best_percentile_is_never_worse_than_either_pure_option(
    turns: int, burst: float, preset: str, autoscale: bool
) -> None:
    result = hybrid_plan(synthetic_scenario(turns), CAT, preset_profile(preset, burst), autoscale=autoscale)
    pure = result.pure
    assert pure.serverless is not None and pure.self_hosted is not None
    assert result.best.monthly <= pure.serverless.monthly
    assert result.best.monthly <= pure.self_hosted.monthly
    assert result.best.monthly == min(m for _, m in result.curve)


def test_measured_within_hour_shape_from_a_trace_drives_the_overflow() -> None:
    profile = profile_from_trace(AZURE / "AzureLLMInferenceTrace_conv.csv")
    result = hybrid_plan(synthetic_scenario(20_000_000), CAT, profile, percentile=100)
    assert result.plan.overflow_turns == 0
    assert any("measured" in n for n in result.notes)


def test_a_hybrid_needs_a_serverless_offer_and_an_owned_one() -> None:
    scenario = synthetic_scenario(1_000_000)
    with pytest.raises(InputError, match="serverless"):
        hybrid_plan(scenario.model_copy(update={"serverless": None}), CAT, TWO_LEVEL)
    with pytest.raises(InputError, match="gpu_vm"):
        hybrid_plan(scenario.model_copy(update={"gpu_vm": None}), CAT, TWO_LEVEL)


# --- command line --------------------------------------------------------------------------------


def test_cli_hybrid_json_has_numbers_and_the_chart_rows(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["hybrid", "--preset", "coding-agent", "--as-of", "2026-10-30", "--profile", "business_hours"]
    assert main([*argv, "--percentile", "80", "--burst", "1.2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["plan"]["percentile"] == 80
    assert isinstance(data["plan"]["monthly"], float) and isinstance(data["pure"]["serverless"], float)
    assert len(data["plan"]["hours"]) == 24 and {"load_rps", "owned_capacity_rps", "overflow_rps"} <= set(
        data["plan"]["hours"][0]
    )
    assert len(data["curve"]) == 101 and data["best"]["monthly"] <= data["pure"]["serverless"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "Hybrid at the p" in out and "Cheapest:" in out


def test_cli_hybrid_with_a_trace_and_the_profile_command(capsys: pytest.CaptureFixture[str]) -> None:
    trace = str(AZURE / "AzureLLMInferenceTrace_code.csv")
    assert main(["hybrid", "--preset", "coding-agent", "--as-of", "2026-10-30", "--profile", trace]) == 0
    assert "less than a day" in capsys.readouterr().out
    assert main(["profile", "--preset", "coding-agent", "--as-of", "2026-10-30", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["profile"]["name"] == "scenario" and len(data["hours"]) == 24


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["hybrid", "--preset", "coding-agent", "--percentile", "120"], "--percentile"),
        (["hybrid", "--preset", "coding-agent", "--burst", "0.5"], "--burst"),
        (["hybrid", "--preset", "coding-agent", "--profile", "weekends"], "--profile"),
        (["hybrid"], "--preset"),
        (["profile", "--preset", "coding-agent", "--autoscale", "--always-on"], "--always-on"),
    ],
)
def test_cli_hybrid_bad_input_is_one_line_and_exit_2(
    argv: list[str], flag: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and flag in err and "\n" not in err
