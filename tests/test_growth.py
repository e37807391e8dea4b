"""Growth: monthly cost of each option as traffic compounds; when each becomes cheapest."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from calculator.cli import main
from calculator.errors import InputError
from calculator.planning.growth import grow, month_volumes
from calculator.pricing.compare import Catalogs, compare
from calculator.scenario.model import load_preset

from .conftest import SEED_DATE
from .test_load_profile import synthetic_catalogs, synthetic_scenario

D = Decimal


def test_volumes_compound_from_month_one() -> None:
    v = month_volumes(1_000_000, 0.1, 12)
    assert v[0] == 1_000_000 and v[1] == 1_100_000 and v[2] == 1_210_000 and v[11] == round(1e6 * 1.1**11)
    with pytest.raises(InputError, match="growth.months"):
        month_volumes(1, 0.1, 11)
    with pytest.raises(InputError, match="growth.months"):
        month_volumes(1, 0.1, 37)
    with pytest.raises(InputError, match="growth.growth_per_month"):
        month_volumes(1, 2, 12)


@pytest.mark.parametrize("name", ["coding-agent", "multi-turn-chat", "batch-summarisation"])
def test_no_growth_reproduces_compare_every_month(name: str, catalogs: Catalogs) -> None:
    scenario = load_preset(name).model_copy(update={"as_of": SEED_DATE})
    expected = {o.option: o.monthly for o in compare(scenario, catalogs).options}
    plan = grow(scenario, catalogs, months=12, growth_per_month=0.0)
    assert len(plan.rows) == 12
    for row in plan.rows:
        assert row.turns_per_month == scenario.traffic.turns_per_month
        assert row.monthly == expected
    assert plan.totals == {k: v * 12 for k, v in expected.items()}
    cheapest = compare(scenario, catalogs).cheapest
    assert plan.stays_cheapest == (cheapest, 1) and plan.becomes_cheapest[cheapest or ""] == 1


def test_serverless_crosses_the_gpu_step_where_compare_says() -> None:
    # $0.0012 a turn vs 1 GPU at $1,460 a month (up to 2,628,000 turns): equal at 1,216,667 turns.
    # From 500,000 at 10% a month: month 10 has 1,178,974 turns, month 11 has 1,296,871.
    cat = synthetic_catalogs()
    scenario = synthetic_scenario(500_000).model_copy(update={"dedicated": None})
    found = compare(scenario, cat).crossings
    assert len(found) == 1 and found[0].cheaper_above == "self_hosted"
    assert found[0].turns_per_month == pytest.approx(1460 / 0.0012, rel=1e-6)
    plan = grow(scenario, cat, months=24, growth_per_month=0.10)
    assert [r.cheapest for r in plan.rows[:10]] == ["serverless"] * 10
    assert {r.cheapest for r in plan.rows[10:]} == {"self_hosted"}
    assert plan.becomes_cheapest == {"serverless": 1, "self_hosted": 11}
    assert plan.stays_cheapest == ("self_hosted", 11)
    (crossing,) = plan.crossings
    assert crossing.month == 11 and crossing.cheaper_after == "self_hosted"
    assert crossing.turns_per_month == found[0].turns_per_month
    assert plan.rows[9].turns_per_month < crossing.turns_per_month <= plan.rows[10].turns_per_month
    # the next step: 2 GPUs once the peak passes 1 req/s (2,628,000 turns): month 18 has 2,527,249, month 19 2,779,958
    assert plan.rows[17].monthly["self_hosted"] == D("1460.00")
    assert plan.rows[18].monthly["self_hosted"] == D("2920.00")


def test_cumulative_spend_adds_up_and_the_frame_has_one_row_per_option_and_month() -> None:
    plan = grow(synthetic_scenario(500_000), synthetic_catalogs(), months=18, growth_per_month=0.07)
    for name in plan.totals:
        assert plan.totals[name] == sum((r.monthly[name] for r in plan.rows), D(0))
        assert plan.rows[-1].cumulative[name] == plan.totals[name]
    frame = plan.frame()
    assert len(frame) == 18 * 3
    assert set(frame.columns) >= {"month", "turns_per_month", "option", "monthly", "cumulative", "cheapest"}
    assert frame.groupby("month")["cheapest"].sum().eq(1).all()


def test_shrinking_traffic_reports_crossings_the_other_way() -> None:
    cat = synthetic_catalogs()
    scenario = synthetic_scenario(2_000_000).model_copy(update={"dedicated": None})
    plan = grow(scenario, cat, months=12, growth_per_month=-0.1)
    assert plan.rows[0].cheapest == "self_hosted" and plan.rows[-1].cheapest == "serverless"
    (crossing,) = plan.crossings
    assert crossing.cheaper_after == "serverless"
    month = crossing.month
    assert plan.rows[month - 1].cheapest == "serverless" and plan.rows[month - 2].cheapest == "self_hosted"


def test_cli_growth_json_and_table(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["growth", "--preset", "coding-agent", "--as-of", "2026-10-30", "--months", "12"]
    assert main([*argv, "--growth-per-month", "0.2", "--start-turns-per-month", "2000000", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["start_turns_per_month"] == 2_000_000 and len(data["rows"]) == 12
    assert isinstance(data["rows"][0]["monthly"]["serverless"], float)
    assert isinstance(data["totals"]["self_hosted"], float)
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "cheapest" in out and "Total over 12 months" in out
    assert main([*argv[:-1], "40"]) == 2
    assert "--months" in capsys.readouterr().err
